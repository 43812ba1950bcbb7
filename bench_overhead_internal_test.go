// This file holds BenchmarkCollectionOverhead: a k = 10 query through an
// HNSW collection with a recall target against the same query on the
// collection's own graph, alternating, to tell what the collection's path
// costs on top of its index.

package cairn

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// overheadCase is one collection of BenchmarkCollectionOverhead: where it
// is stored, whether its items carry text and metadata, and the filter of
// its queries.
type overheadCase struct {
	store   string // "memory" or "sqlite"
	payload bool   // a text and two metadata fields per item (else neither)
	filter  string // "none", "eq" (10% of the items) or "ne" (90%)
}

func (oc overheadCase) String() string {
	pl := "none"
	if oc.payload {
		pl = "metadata"
	}
	return fmt.Sprintf("store=%s/payload=%s/filter=%s", oc.store, pl, oc.filter)
}

// queryFilter returns the case's filter, nil for none.
func (oc overheadCase) queryFilter() *Filter {
	switch oc.filter {
	case "eq":
		return Eq("bucket", 3)
	case "ne":
		return Ne("bucket", 3)
	}
	return nil
}

// overheadCases lists the collections the benchmark and the allocation
// test measure: filters need the metadata.
func overheadCases() []overheadCase {
	var out []overheadCase
	for _, store := range []string{"memory", "sqlite"} {
		out = append(out, overheadCase{store, false, "none"})
		for _, filter := range []string{"none", "eq", "ne"} {
			out = append(out, overheadCase{store, true, filter})
		}
	}
	return out
}

// overheadDB opens a store of the kind named: "memory", or "sqlite" in a
// file of tb's temporary directory.
func overheadDB(ctx context.Context, tb testing.TB, store string) *DB {
	tb.Helper()
	if store == "memory" {
		return OpenMemory(nil)
	}
	db, err := Open(ctx, filepath.Join(tb.TempDir(), "c.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// overheadCollection creates the case's HNSW collection with a recall
// target over ds in db, and waits for its first calibration.
func overheadCollection(ctx context.Context, tb testing.TB, db *DB, ds *recall.Dataset, oc overheadCase) *Collection {
	tb.Helper()
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: HNSW,
		HNSW: hnsw.Options{TargetRecall: 0.9, TargetK: 10}})
	if err != nil {
		tb.Fatal(err)
	}
	items := make([]Item, len(ds.Base))
	for i, v := range ds.Base {
		items[i] = Item{ID: fmt.Sprintf("doc-%d", i), Embedding: v}
		if oc.payload {
			items[i].Text = fmt.Sprintf("the text of item %d, a short note", i)
			items[i].Metadata = map[string]any{"bucket": i % 10, "source": "bench"}
		}
	}
	if err := c.Add(ctx, items...); err != nil {
		tb.Fatal(err)
	}
	h := c.idx.(*hnsw.Index)
	if _, err := h.Calibrate(ctx, nil); err != nil {
		tb.Fatal(err)
	}
	return c
}

// bareSearch returns the search on c's own graph that a query of c with
// filter f runs: the same index, and the allow-list c would hand it, built
// once here rather than per query.
func bareSearch(ctx context.Context, tb testing.TB, c *Collection, f *Filter) func(q []float32) ([]vector.Result, error) {
	tb.Helper()
	h := c.idx.(*hnsw.Index)
	var so *vector.SearchOptions
	if f != nil {
		var p plan
		if err := p.init(10, &QueryOptions{Filter: f}, true, ""); err != nil {
			tb.Fatal(err)
		}
		c.mu.RLock()
		if ids := c.matches(&p); ids.len() < c.cat.len() {
			// The ids made explicit: the bare search gets the bitmap
			// (or set) of them, whatever form the collection's plan
			// takes.
			explicit := matched{ids: ids.slice()}
			so = &vector.SearchOptions{Filter: c.allowList(explicit, 10, 0, p.view, new(queryScratch))}
		}
		c.mu.RUnlock()
	}
	return func(q []float32) ([]vector.Result, error) { return h.Search(ctx, q, 10, so) }
}

// overheadData names a real data set for BenchmarkCollectionOverhead, as
// the prefix D of D.base.fvecs and D.query.fvecs (cosine).
var overheadData = flag.String("cairn.overhead.data", "", "data set prefix D (D.base.fvecs, D.query.fvecs) for BenchmarkCollectionOverhead; default synthetic")

// overheadDataset is the data of BenchmarkCollectionOverhead and of the
// allocation tests: 2,000 clustered vectors of 384 dimensions, where the
// graph calibrated to 0.9 searches at ef 18 and a query takes about as long
// as on the small real sets (15–30 µs).
func overheadDataset() *recall.Dataset { return recall.Clustered(2000, 200, 384, 5) }

// benchDataset is -cairn.overhead.data if set, else overheadDataset.
func benchDataset(tb testing.TB) *recall.Dataset {
	if *overheadData == "" {
		return overheadDataset()
	}
	read := func(path string) []vector.Vector {
		f, err := os.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		r := recall.NewFvecsReader(bufio.NewReader(f))
		var out []vector.Vector
		for {
			v, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, v)
		}
	}
	ds := &recall.Dataset{Name: filepath.Base(*overheadData), Metric: vector.Cosine,
		Base: read(*overheadData + ".base.fvecs"), Queries: read(*overheadData + ".query.fvecs")}
	ds.Dim = len(ds.Base[0])
	return ds
}

// BenchmarkCollectionOverhead times a k = 10 query through an HNSW
// collection with a recall target (0.9) and the same query on the
// collection's own graph (hnsw.Index.Search, with the allow-list the
// collection would build, prebuilt), one after the other, query by query,
// which goes first alternating. It reports each one's mean, the ratio of
// their total times (coll/bare: 1 means the collection costs nothing on top
// of its index), and each one's allocations per query, for memory and
// SQLite collections, items with and without text and metadata, and
// queries with no filter, one matching 10% of the items and one matching
// 90%. The lead's command (about 1.5 minutes):
//
//	nice -n 10 go test -run '^$' -bench BenchmarkCollectionOverhead -benchtime 20000x .
//
// and on a real set, -cairn.overhead.data ~/.cache/cairn-data/D/D.
func BenchmarkCollectionOverhead(b *testing.B) {
	ctx := context.Background()
	ds := benchDataset(b)
	for _, oc := range overheadCases() {
		b.Run(oc.String(), func(b *testing.B) {
			db := overheadDB(ctx, b, oc.store)
			defer db.Close()
			c := overheadCollection(ctx, b, db, ds, oc)
			f := oc.queryFilter()
			o := &QueryOptions{Filter: f}
			bare := bareSearch(ctx, b, c, f)
			coll := func(q []float32) error {
				res, err := c.Query(ctx, q, 10, o)
				if err == nil && len(res) != 10 {
					err = fmt.Errorf("%d results, want 10", len(res))
				}
				return err
			}
			for _, q := range ds.Queries { // warm up both
				if err := coll(q); err != nil {
					b.Fatal(err)
				}
				if _, err := bare(q); err != nil {
					b.Fatal(err)
				}
			}
			q0 := ds.Queries[0]
			collAllocs := testing.AllocsPerRun(100, func() { _ = coll(q0) })
			bareAllocs := testing.AllocsPerRun(100, func() { _, _ = bare(q0) })
			var tc, tb time.Duration
			i := 0
			for b.Loop() {
				q := ds.Queries[i%len(ds.Queries)]
				for j := range 2 {
					t := time.Now()
					if (i+j)%2 == 0 {
						if err := coll(q); err != nil {
							b.Fatal(err)
						}
						tc += time.Since(t)
					} else {
						if _, err := bare(q); err != nil {
							b.Fatal(err)
						}
						tb += time.Since(t)
					}
				}
				i++
			}
			b.ReportMetric(float64(tc.Nanoseconds())/float64(i), "coll-ns/query")
			b.ReportMetric(float64(tb.Nanoseconds())/float64(i), "bare-ns/query")
			b.ReportMetric(float64(tc)/float64(tb), "coll/bare")
			b.ReportMetric(collAllocs, "coll-allocs/query")
			b.ReportMetric(bareAllocs, "bare-allocs/query")
		})
	}
}
