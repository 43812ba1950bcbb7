package sqlitestore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// Benchmarks share database files built once per process in benchDir.
var (
	benchDir  string
	benchOnce sync.Once
	benchMu   sync.Mutex
	benchDBs  = map[string]string{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// randVecs returns n reproducible vectors with normal components.
func randVecs(n, dim int, seed uint64) []vector.Vector {
	r := rand.New(rand.NewPCG(seed, 99))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	vs := make([]vector.Vector, n)
	for i := range vs {
		vs[i] = data[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return vs
}

// benchDB returns the path of a closed database holding collection "c" of
// n random vectors of dimension dim (cosine), building it on first use.
func benchDB(b *testing.B, n, dim int) string {
	b.Helper()
	benchOnce.Do(func() {
		var err error
		if benchDir, err = os.MkdirTemp("", "cairn-sqlitestore-bench-"); err != nil {
			panic(err)
		}
	})
	key := fmt.Sprintf("n%d-d%d", n, dim)
	benchMu.Lock()
	defer benchMu.Unlock()
	if p, ok := benchDBs[key]; ok {
		return p
	}
	path := filepath.Join(benchDir, key+".cairn")
	ctx := context.Background()
	db, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		b.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 10000
	for lo := 0; lo < n; lo += batch {
		vs := randVecs(min(batch, n-lo), dim, uint64(lo))
		items := make([]sqlitestore.Item, len(vs))
		for i, v := range vs {
			items[i] = sqlitestore.Item{ID: vector.ID(lo + i), Vector: v, Text: "some text of a memory", Metadata: []byte(`{"kind":"note"}`)}
		}
		if err := c.PutItems(ctx, items); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	benchDBs[key] = path
	return path
}

// BenchmarkOpen measures Open of a file of n 768-d items: streaming every
// vector into the arena. Target: 100,000 in under 1 s on one core.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("n=%d/dim=768", n), func(b *testing.B) {
			path := benchDB(b, n, 768)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				db, err := sqlitestore.Open(ctx, path, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkSearch compares an exact top-5 search (flat) over a MemStore
// with the same search over a Collection holding the same vectors: the
// arena makes them the same code path, so the ratio should be ~1.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		path := benchDB(b, n, 768)
		ctx := context.Background()
		db, err := sqlitestore.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		c, err := db.Collection(ctx, "c")
		if err != nil {
			b.Fatal(err)
		}
		mem, _ := vector.NewMemStore(768, vector.Cosine)
		c.ForEach(func(id vector.ID, v vector.Vector) error { return mem.Put(ctx, id, v) })
		qs := randVecs(64, 768, 12345)
		for _, s := range []struct {
			name  string
			store vector.Store
		}{{"memstore", mem}, {"sqlitestore", c}} {
			b.Run(fmt.Sprintf("n=%d/store=%s", n, s.name), func(b *testing.B) {
				ix := flat.New(s.store)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := ix.Search(ctx, qs[i%len(qs)], 5, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
		db.Close()
	}
}

// BenchmarkBatchInsert measures PutItems of 1,000 768-d items per call, one
// transaction each, with synchronous=FULL. Target: ≥ 30,000 vectors/s.
func BenchmarkBatchInsert(b *testing.B) {
	const batch, dim = 1000, 768
	ctx := context.Background()
	db, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "batch.cairn"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
	if err != nil {
		b.Fatal(err)
	}
	vs := randVecs(batch, dim, 1)
	items := make([]sqlitestore.Item, batch)
	next := vector.ID(0)
	b.ReportAllocs()
	for b.Loop() {
		for i := range items {
			items[i] = sqlitestore.Item{ID: next, Vector: vs[i]}
			next++
		}
		if err := c.PutItems(ctx, items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
}

// BenchmarkSingleAdd measures the latency of one durable Put of a 768-d
// vector with synchronous FULL and NORMAL, reporting median and p95.
func BenchmarkSingleAdd(b *testing.B) {
	for _, sync := range []sqlitestore.Sync{sqlitestore.SyncFull, sqlitestore.SyncNormal} {
		b.Run("sync="+sync.String(), func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "single.cairn"), &sqlitestore.Options{Sync: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: 768, Metric: vector.Cosine})
			if err != nil {
				b.Fatal(err)
			}
			vs := randVecs(256, 768, 2)
			var lat []time.Duration
			id := vector.ID(0)
			for b.Loop() {
				start := time.Now()
				if err := c.Put(ctx, id, vs[int(id)%len(vs)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				id++
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
}

// BenchmarkGroupCommit measures items/s committed by 1, 8 and 64
// goroutines each writing single 768-d items with synchronous=FULL: group
// commit makes 64 writers share each fsync. Target: 64 writers ≥ 10× one.
func BenchmarkGroupCommit(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "group.cairn"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: 768, Metric: vector.Cosine})
			if err != nil {
				b.Fatal(err)
			}
			vs := randVecs(256, 768, 3)
			var next atomic.Int64
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						id := next.Add(1) - 1
						if id >= int64(b.N) {
							return
						}
						if err := c.Put(ctx, vector.ID(id), vs[id%int64(len(vs))]); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "items/s")
		})
	}
}

// BenchmarkReopenIndex compares reopening a collection of 10,000 768-d
// items and loading its saved HNSW graph with reopening it and rebuilding
// the graph from the vectors.
func BenchmarkReopenIndex(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	src := benchDB(b, n, 768)
	path := filepath.Join(b.TempDir(), "index.cairn")
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	build := func(c *sqlitestore.Collection) *hnsw.Index {
		ix, err := hnsw.New(c, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Track(ctx, ids); err != nil {
			b.Fatal(err)
		}
		return ix
	}
	{ // save a graph once
		db, err := sqlitestore.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		c, _ := db.Collection(ctx, "c")
		if err := c.SaveIndex(ctx, "hnsw", build(c)); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	b.Run("saved", func(b *testing.B) {
		for b.Loop() {
			db, err := sqlitestore.Open(ctx, path, nil)
			if err != nil {
				b.Fatal(err)
			}
			c, _ := db.Collection(ctx, "c")
			ix, err := hnsw.New(c, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.LoadIndex(ctx, "hnsw", ix); err != nil {
				b.Fatal(err)
			}
			if ix.Len() != n {
				b.Fatalf("loaded %d nodes", ix.Len())
			}
			db.Close()
		}
	})
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			db, err := sqlitestore.Open(ctx, path, nil)
			if err != nil {
				b.Fatal(err)
			}
			c, _ := db.Collection(ctx, "c")
			build(c)
			db.Close()
		}
	})
}
