package cairn_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

var (
	benchN   = flag.Int("cairn.n", 50000, "collection size for BenchmarkQuery")
	benchDim = flag.Int("cairn.dim", 768, "dimension for the benchmarks")
)

// queryFixture is a collection of benchN clustered vectors, built once per
// index kind and shared by the sub-benchmarks.
type queryFixture struct {
	db *cairn.DB
	c  *cairn.Collection
	ds *recall.Dataset
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[cairn.IndexKind]*queryFixture{}
)

func queryCollection(b *testing.B, kind cairn.IndexKind) *queryFixture {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f, ok := fixtures[kind]; ok {
		return f
	}
	ctx := context.Background()
	ds := recall.Clustered(*benchN, 100, *benchDim, 1)
	db := cairn.OpenMemory(nil)
	c, err := db.CreateCollection(ctx, "bench", cairn.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: kind})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]cairn.Item, len(ds.Base))
	for i, v := range ds.Base {
		items[i] = cairn.Item{ID: fmt.Sprint("doc-", i), Embedding: v, Text: "some text",
			Metadata: map[string]any{"bucket": i % 10, "source": "bench"}}
	}
	if err := c.Add(ctx, items...); err != nil {
		b.Fatal(err)
	}
	// Warm up (page in the arena and the graph) so that the first
	// sub-benchmark is not the one that pays for it.
	for _, q := range ds.Queries {
		if _, err := c.Query(ctx, q, 10, nil); err != nil {
			b.Fatal(err)
		}
	}
	f := &queryFixture{db: db, c: c, ds: ds}
	fixtures[kind] = f
	return f
}

// BenchmarkQuery compares Collection.Query with a bare Search of the same
// index on the same data (-cairn.n vectors of -cairn.dim, k = 10): the
// difference is the memory store's own cost (locking, mapping ids back,
// copying payloads, similarity). The filtered pair compares a Query with a
// filter keeping 10% of the items against a bare Search given the same
// allow-list ready made, so it adds the cost of evaluating the filter.
//
//	go test -run '^$' -bench BenchmarkQuery -benchtime 2000x .
func BenchmarkQuery(b *testing.B) {
	for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
		b.Run(fmt.Sprintf("index=%v/n=%d/dim=%d", kind, *benchN, *benchDim), func(b *testing.B) {
			f := queryCollection(b, kind)
			ctx := context.Background()
			idx := f.c.IndexForTest()
			qs := f.ds.Queries
			const k = 10
			b.Run("cairn", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := f.c.Query(ctx, qs[i%len(qs)], k, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("bare", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := idx.Search(ctx, qs[i%len(qs)], k, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			// Both, alternating query by query, so that drift in the
			// machine's speed falls on both alike: reports the ratio of
			// the time in Query to the time in the bare Search.
			b.Run("ratio", func(b *testing.B) {
				var tc, tb time.Duration
				i := 0
				cairnQuery := func(q []float32) time.Duration {
					t := time.Now()
					if _, err := f.c.Query(ctx, q, k, nil); err != nil {
						b.Fatal(err)
					}
					return time.Since(t)
				}
				bareSearch := func(q []float32) time.Duration {
					t := time.Now()
					if _, err := idx.Search(ctx, q, k, nil); err != nil {
						b.Fatal(err)
					}
					return time.Since(t)
				}
				for b.Loop() {
					// Each query twice, in alternating order, so that
					// neither side always runs on warmer caches.
					q := qs[i%len(qs)]
					if i%2 == 0 {
						tc += cairnQuery(q)
						tb += bareSearch(q)
					} else {
						tb += bareSearch(q)
						tc += cairnQuery(q)
					}
					i++
				}
				b.ReportMetric(float64(tc)/float64(tb), "cairn/bare")
			})
			filter := cairn.Eq("bucket", 3)
			b.Run("cairn-filter10%", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := f.c.Query(ctx, qs[i%len(qs)], k, &cairn.QueryOptions{Filter: filter}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("bare-filter10%", func(b *testing.B) {
				// The numeric ids of the matching items, found through
				// the public API: a result's rank in a full query is
				// not needed, only which ids the filter keeps.
				set := vector.NewIDSet()
				res, err := f.c.Query(ctx, qs[0], cairn.MustCount(b, f.c), &cairn.QueryOptions{Filter: filter})
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res {
					var pos int
					fmt.Sscanf(r.ID, "doc-%d", &pos)
					set.Add(vector.ID(pos + 1)) // ids are assigned from 1 in insertion order
				}
				so := &vector.SearchOptions{Filter: set}
				b.ReportAllocs()
				b.ResetTimer()
				i := 0
				for b.Loop() {
					if _, err := idx.Search(ctx, qs[i%len(qs)], k, so); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}

// BenchmarkAdd compares a batch Collection.Add (an exact collection, so
// that no graph building is timed) with the batch insert of the store
// beneath it, for the same items: vector.MemStore.PutBatch for an
// in-memory DB and sqlitestore's PutItems (with the same text and JSON
// metadata) for a file. Each op adds one batch of 1,000 new items.
//
//	go test -run '^$' -bench BenchmarkAdd -benchtime 20x .
func BenchmarkAdd(b *testing.B) {
	const batch = 1000
	dim := *benchDim
	ds := recall.Uniform(batch, 0, dim, 2)
	ctx := context.Background()
	items := func(round int) []cairn.Item {
		out := make([]cairn.Item, batch)
		for i, v := range ds.Base {
			out[i] = cairn.Item{ID: fmt.Sprintf("r%d-%d", round, i), Embedding: v, Text: "some text",
				Metadata: map[string]any{"bucket": i % 10, "source": "bench"}}
		}
		return out
	}
	// storeItems is items(round) as sqlitestore takes them, with the ids
	// a collection would give them and their metadata already in JSON.
	meta := []byte(`{"bucket":3,"source":"bench"}`)
	storeItems := func(round int) []sqlitestore.Item {
		out := make([]sqlitestore.Item, batch)
		for i, v := range ds.Base {
			out[i] = sqlitestore.Item{ID: vector.ID(round*batch + i + 1), Key: fmt.Sprintf("r%d-%d", round, i),
				Vector: v, Text: "some text", Metadata: meta}
		}
		return out
	}
	b.Run(fmt.Sprintf("memory/batch=%d/dim=%d", batch, dim), func(b *testing.B) {
		b.Run("cairn", func(b *testing.B) {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c, _ := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, Index: cairn.Flat})
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				b.StopTimer()
				its := items(round)
				b.StartTimer()
				if err := c.Add(ctx, its...); err != nil {
					b.Fatal(err)
				}
				round++
			}
		})
		b.Run("store", func(b *testing.B) {
			s, _ := vector.NewMemStore(dim, vector.Cosine)
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				ids := make([]vector.ID, batch)
				for i := range ids {
					ids[i] = vector.ID(round*batch + i + 1)
				}
				if err := s.PutBatch(ctx, ids, ds.Base); err != nil {
					b.Fatal(err)
				}
				round++
			}
		})
	})
	// Both, alternating batch by batch, with the ratio of the times
	// reported, so that drift in the machine's speed falls on both alike.
	b.Run(fmt.Sprintf("ratio/batch=%d/dim=%d", batch, dim), func(b *testing.B) {
		for _, persistent := range []bool{false, true} {
			name := map[bool]string{false: "memory", true: "sqlite"}[persistent]
			b.Run(name, func(b *testing.B) {
				var (
					c *cairn.Collection
					// prep builds a batch for the store and returns the
					// call that inserts it, which alone is timed.
					prep func(round int) func() error
				)
				if persistent {
					db, err := cairn.Open(ctx, filepath.Join(b.TempDir(), "c.db"), nil)
					if err != nil {
						b.Fatal(err)
					}
					defer db.Close()
					c, _ = db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, Index: cairn.Flat})
					sdb, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "s.db"), nil)
					if err != nil {
						b.Fatal(err)
					}
					defer sdb.Close()
					sc, _ := sdb.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
					prep = func(round int) func() error {
						its := storeItems(round)
						return func() error { return sc.PutItems(ctx, its) }
					}
				} else {
					db := cairn.OpenMemory(nil)
					defer db.Close()
					c, _ = db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, Index: cairn.Flat})
					s, _ := vector.NewMemStore(dim, vector.Cosine)
					prep = func(round int) func() error {
						ids := make([]vector.ID, batch)
						for i := range ids {
							ids[i] = vector.ID(round*batch + i + 1)
						}
						return func() error { return s.PutBatch(ctx, ids, ds.Base) }
					}
				}
				var tc, ts time.Duration
				round := 0
				for b.Loop() {
					its, put := items(round), prep(round)
					add := func() {
						t := time.Now()
						if err := c.Add(ctx, its...); err != nil {
							b.Fatal(err)
						}
						tc += time.Since(t)
					}
					insert := func() {
						t := time.Now()
						if err := put(); err != nil {
							b.Fatal(err)
						}
						ts += time.Since(t)
					}
					if round%2 == 0 { // alternate which goes first
						add()
						insert()
					} else {
						insert()
						add()
					}
					round++
				}
				b.ReportMetric(float64(tc)/float64(ts), "cairn/store")
			})
		}
		// The control: two bare SQLite stores, alternating the same way.
		// Its ratio, which ought to be 1, shows how far two files on this
		// machine differ by themselves (BenchmarkAddSplit in the package's
		// internal tests times the store within the same Add instead).
		b.Run("sqlite-control", func(b *testing.B) {
			var cols [2]*sqlitestore.Collection
			for i := range cols {
				sdb, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprint(i, ".db")), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer sdb.Close()
				cols[i], _ = sdb.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
			}
			var t [2]time.Duration
			round := 0
			for b.Loop() {
				its := storeItems(round)
				for j := range 2 {
					k := (round + j) % 2 // alternate which goes first
					start := time.Now()
					if err := cols[k].PutItems(ctx, its); err != nil {
						b.Fatal(err)
					}
					t[k] += time.Since(start)
				}
				round++
			}
			b.ReportMetric(float64(t[0])/float64(t[1]), "store/store")
		})
	})
	b.Run(fmt.Sprintf("sqlite/batch=%d/dim=%d", batch, dim), func(b *testing.B) {
		b.Run("cairn", func(b *testing.B) {
			db, err := cairn.Open(ctx, filepath.Join(b.TempDir(), "c.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c, _ := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, Index: cairn.Flat})
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				b.StopTimer()
				its := items(round)
				b.StartTimer()
				if err := c.Add(ctx, its...); err != nil {
					b.Fatal(err)
				}
				round++
			}
		})
		b.Run("store", func(b *testing.B) {
			sdb, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "s.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer sdb.Close()
			sc, _ := sdb.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				b.StopTimer()
				its := storeItems(round)
				b.StartTimer()
				if err := sc.PutItems(ctx, its); err != nil {
					b.Fatal(err)
				}
				round++
			}
		})
	})
}

// BenchmarkCrossover measures, at each collection size, the query latency
// and recall@10 of exact search against HNSW (default options), and the
// time to build the graph, which an Auto collection pays in the write that
// crosses its threshold: the data for setting DefaultAutoThreshold.
//
//	go test -run '^$' -bench BenchmarkCrossover -benchtime 200x -timeout 60m .
func BenchmarkCrossover(b *testing.B) {
	ctx := context.Background()
	const k = 10
	for _, n := range []int{2000, 5000, 10000, 20000, 50000} {
		ds := recall.Clustered(n, 100, *benchDim, 3)
		truth, err := recall.GroundTruth(ctx, ds, k)
		if err != nil {
			b.Fatal(err)
		}
		items := make([]cairn.Item, n)
		for i, v := range ds.Base {
			items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: v}
		}
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			b.Run(fmt.Sprintf("n=%d/dim=%d/index=%v", n, ds.Dim, kind), func(b *testing.B) {
				db := cairn.OpenMemory(nil)
				defer db.Close()
				c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: kind})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := c.Add(ctx, items...); err != nil {
					b.Fatal(err)
				}
				build := time.Since(start)
				var sum float64
				for i, q := range ds.Queries {
					res, err := c.Query(ctx, q, k, nil)
					if err != nil {
						b.Fatal(err)
					}
					got := make([]vector.Result, len(res))
					for j, r := range res {
						pos, _ := strconv.Atoi(r.ID)
						got[j] = vector.Result{ID: vector.ID(pos)}
					}
					sum += recall.At(got, truth[i], k)
				}
				b.ResetTimer()
				i := 0
				for b.Loop() {
					if _, err := c.Query(ctx, ds.Queries[i%len(ds.Queries)], k, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(sum/float64(len(ds.Queries)), "recall@10")
				b.ReportMetric(build.Seconds(), "add-s")
			})
		}
	}
}

// BenchmarkConcurrentAdd measures items/s committed to a SQLite file
// (synchronous=FULL, the default) by 1, 8 and 64 goroutines each adding
// single items (768-d, with text and metadata) to one Flat collection,
// and, as a sibling, by as many goroutines writing the same items straight
// to a sqlitestore collection. A write holds the collection's lock only
// around the commit, not across it, so concurrent Adds share sqlitestore's
// group commit: items/s should grow with the writers about as the store's
// do (sqlitestore's BenchmarkGroupCommit: ~11× one writer at 64).
//
//	go test -run '^$' -bench BenchmarkConcurrentAdd -benchtime 2000x .
func BenchmarkConcurrentAdd(b *testing.B) {
	dim := *benchDim
	ds := recall.Uniform(256, 0, dim, 3)
	meta := []byte(`{"bucket":3,"source":"bench"}`)
	ctx := context.Background()
	for _, writers := range []int{1, 8, 64} {
		// run calls add(i) for i in [0, b.N) from writers goroutines.
		run := func(b *testing.B, add func(i int) error) {
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range writers {
				wg.Go(func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= b.N {
							return
						}
						if err := add(i); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "items/s")
		}
		b.Run(fmt.Sprintf("writers=%d/cairn", writers), func(b *testing.B) {
			db, err := cairn.Open(ctx, filepath.Join(b.TempDir(), "c.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, Index: cairn.Flat})
			if err != nil {
				b.Fatal(err)
			}
			run(b, func(i int) error {
				return c.Add(ctx, cairn.Item{ID: strconv.Itoa(i), Embedding: ds.Base[i%len(ds.Base)], Text: "some text",
					Metadata: map[string]any{"bucket": 3, "source": "bench"}})
			})
		})
		b.Run(fmt.Sprintf("writers=%d/store", writers), func(b *testing.B) {
			sdb, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "s.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer sdb.Close()
			sc, err := sdb.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
			if err != nil {
				b.Fatal(err)
			}
			run(b, func(i int) error {
				return sc.PutItems(ctx, []sqlitestore.Item{{ID: vector.ID(i + 1), Key: strconv.Itoa(i),
					Vector: ds.Base[i%len(ds.Base)], Text: "some text", Metadata: meta}})
			})
		})
	}
}
