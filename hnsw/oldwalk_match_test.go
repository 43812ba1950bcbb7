package hnsw_test

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestOneWalkMatchesOld checks, while the walk of before is kept beside
// the one walk (experiment 1), that both return the same results for
// every query: float32 and int8, with and without a filter, and that a
// build by each gives the same graph's answers.
func TestOneWalkMatchesOld(t *testing.T) {
	defer hnsw.SetExperiment(0)
	ds := recall.Clustered(3000, 50, 64, 3)
	for _, qz := range []hnsw.Quantize{hnsw.QuantizeNone, hnsw.QuantizeInt8} {
		var ixs [2]*hnsw.Index
		for v := range 2 {
			hnsw.SetExperiment(v)
			s, _ := vector.NewMemStore(ds.Dim, ds.Metric)
			ix, err := hnsw.New(s, &hnsw.Options{Workers: 1, Quantize: qz, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]vector.ID, len(ds.Base))
			for i := range ids {
				ids[i] = vector.ID(i + 1)
			}
			if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
				t.Fatal(err)
			}
			ixs[v] = ix
		}
		for _, f := range []vector.Filter{nil, halfFilter{}} {
			for _, ef := range []int{10, 40, 200} {
				for qi, q := range ds.Queries {
					var got [2][]vector.Result
					for v := range 2 {
						hnsw.SetExperiment(v)
						r, err := ixs[v].SearchWith(context.Background(), q, 10, &hnsw.SearchOptions{Ef: ef, SearchOptions: vector.SearchOptions{Filter: f}})
						if err != nil {
							t.Fatal(err)
						}
						got[v] = r
					}
					if len(got[0]) != len(got[1]) {
						t.Fatalf("%v filter %v ef %d query %d: %d and %d results", qz, f != nil, ef, qi, len(got[0]), len(got[1]))
					}
					for i := range got[0] {
						if got[0][i] != got[1][i] {
							t.Fatalf("%v filter %v ef %d query %d: result %d %v, before %v", qz, f != nil, ef, qi, i, got[0][i], got[1][i])
						}
					}
				}
			}
		}
	}
}
