package hnsw_test

import (
	"context"
	"slices"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestPoolMatchesHeaps checks that the unfiltered walk (walkPool, one
// sorted array) and the filtered one (searchLayer, two heaps), which a
// filter allowing every id takes, walk alike: the same results, in the
// same order, at every ef, on every metric.
func TestPoolMatchesHeaps(t *testing.T) {
	for _, m := range []vector.Metric{vector.Cosine, vector.Dot, vector.L2} {
		ds := recall.Clustered(3000, 50, 24, 3)
		ds.Metric = m
		ix, _ := build(t, ds, &hnsw.Options{M: 8, EfConstruction: 48})
		all := vector.FilterFunc(func(vector.ID) bool { return true })
		for _, ef := range []int{1, 10, 33, 200} {
			for qi, q := range ds.Queries {
				pool, err := ix.SearchWith(context.Background(), q, 10, &hnsw.SearchOptions{Ef: ef})
				if err != nil {
					t.Fatal(err)
				}
				heaps, err := ix.SearchWith(context.Background(), q, 10, &hnsw.SearchOptions{Ef: ef, SearchOptions: vector.SearchOptions{Filter: all}})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(pool, heaps) {
					t.Fatalf("%v, ef %d, query %d: unfiltered %v, filtered by allow-all %v", m, ef, qi, pool, heaps)
				}
			}
		}
	}
}
