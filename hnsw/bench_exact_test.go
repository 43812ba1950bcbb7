package hnsw_test

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkExactFallback compares the index's exact search (what a query
// under a recall target that no beam width meets cheaply runs) with flat's
// scan of the same store: uniform 768-d, n = 50,000, the same 200 queries
// in turn. Run with -count to alternate the two.
func BenchmarkExactFallback(b *testing.B) {
	ix, ds, _ := builtIndex(b, "uniform", 50000)
	ex := flat.New(ix.Store())
	ctx := context.Background()
	prepared := make([][]float32, len(ds.Queries))
	for i, q := range ds.Queries {
		p, err := vector.Prepare(q, ds.Dim, ds.Metric)
		if err != nil {
			b.Fatal(err)
		}
		prepared[i] = p
	}
	b.Run("way=flat", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := ex.Search(ctx, ds.Queries[i%len(ds.Queries)], 10, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("way=hnsw-exact", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := ix.SearchAll(ctx, prepared[i%len(prepared)], 10, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
