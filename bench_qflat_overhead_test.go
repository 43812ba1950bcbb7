// This file holds BenchmarkQFlatOverhead: a query through a collection
// searched by the approximate flat scan against the bare scan over the
// same vectors, to tell the collection's own per-query cost from noise.

package cairn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// qflatOverhead is the fixture of BenchmarkQFlatOverhead, built once.
type qflatOverhead struct {
	ds     *recall.Dataset
	bare   *qflat.Index
	direct *cairn.Collection // Index: QFlat
	routed *cairn.Collection // Auto with a recall target, routed to a scan, then grown
}

var (
	qflatOverheadOnce sync.Once
	qflatOverheadFix  *qflatOverhead
	qflatOverheadErr  error
)

func loadQFlatOverhead() (*qflatOverhead, error) {
	ctx := context.Background()
	const n = 15000
	ds := recall.Uniform(n, 64, 768, 3)
	st, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		return nil, err
	}
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	if err := st.PutBatch(ctx, ids, ds.Base); err != nil {
		return nil, err
	}
	f := &qflatOverhead{ds: ds}
	if f.bare, err = qflat.New(st, nil); err != nil {
		return nil, err
	}
	if err := f.bare.Track(ctx, ids); err != nil {
		return nil, err
	}
	db := cairn.OpenMemory(nil)
	add := func(c *cairn.Collection, lo, hi int) error {
		items := make([]cairn.Item, 0, hi-lo)
		for i := lo; i < hi; i++ {
			items = append(items, cairn.Item{ID: fmt.Sprint(i), Embedding: ds.Base[i]})
		}
		return c.Add(ctx, items...)
	}
	if f.direct, err = db.CreateCollection(ctx, "direct", cairn.CollectionConfig{Dim: ds.Dim, Index: cairn.QFlat}); err != nil {
		return nil, err
	}
	if err := add(f.direct, 0, n); err != nil {
		return nil, err
	}
	// Measured at 10,000 (uniform: a scan wins), then grown by half
	// without measuring again, as uniform-50000 grows from its last
	// measurement at 32,000.
	if f.routed, err = db.CreateCollection(ctx, "routed", cairn.CollectionConfig{Dim: ds.Dim, AutoThreshold: 10000,
		HNSW: hnsw.Options{TargetRecall: 0.95}}); err != nil {
		return nil, err
	}
	for lo := 0; lo < n; lo += 2500 {
		if err := add(f.routed, lo, lo+2500); err != nil {
			return nil, err
		}
	}
	if info, err := f.routed.Info(ctx); err != nil || info.Index != cairn.QFlat {
		return nil, fmt.Errorf("routed collection on uniform data uses %v (%v), want qflat", info.Index, err)
	}
	return f, nil
}

// BenchmarkQFlatOverhead times one k = 10 query at 15,000 × 768 uniform
// vectors three ways: the bare qflat index, a QFlat collection, and an
// Auto collection with a recall target that chose the scan at 10,000 items
// and grew since. Run the three interleaved, and compare the ratios:
//
//	nice -n 10 go test -run '^$' -bench BenchmarkQFlatOverhead -count 6 -benchtime 200x .
func BenchmarkQFlatOverhead(b *testing.B) {
	qflatOverheadOnce.Do(func() { qflatOverheadFix, qflatOverheadErr = loadQFlatOverhead() })
	if qflatOverheadErr != nil {
		b.Fatal(qflatOverheadErr)
	}
	f := qflatOverheadFix
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		for i := range b.N {
			if _, err := f.bare.Search(ctx, f.ds.Queries[i%len(f.ds.Queries)], 10, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, w := range []struct {
		name string
		c    *cairn.Collection
	}{{"collection", f.direct}, {"routed", f.routed}} {
		c := w.c
		b.Run(w.name, func(b *testing.B) {
			for i := range b.N {
				if _, err := c.Query(ctx, f.ds.Queries[i%len(f.ds.Queries)], 10, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
