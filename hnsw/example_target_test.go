package hnsw_test

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// An index with a recall target counts which way its queries went: this
// one is smaller than MinCalibrationLen, so they are scored exactly; a
// search given its own Ef is not counted.
func ExampleIndex_TargetSearches() {
	ctx := context.Background()
	store, err := vector.NewMemStore(2, vector.L2)
	if err != nil {
		panic(err)
	}
	ix, err := hnsw.New(store, &hnsw.Options{TargetRecall: 0.95})
	if err != nil {
		panic(err)
	}
	for id, v := range []vector.Vector{{0, 0}, {1, 0}, {0, 1}, {5, 5}} {
		if err := ix.Add(ctx, vector.ID(id+1), v); err != nil {
			panic(err)
		}
	}
	res, _ := ix.Search(ctx, vector.Vector{4, 4}, 1, nil)
	_, _ = ix.Search(ctx, vector.Vector{0, 0}, 2, nil)
	_, _ = ix.SearchWith(ctx, vector.Vector{0, 0}, 2, &hnsw.SearchOptions{Ef: 8})
	fmt.Println("nearest to (4, 4):", res[0].ID)
	fmt.Printf("%+v\n", ix.TargetSearches())
	// Output:
	// nearest to (4, 4): 4
	// {Graph:0 Exact:2}
}

// Queries answered before the index existed (by an exact scan, say) can
// make its calibration sample: recorded, they are what the next
// calibration measures on, as queries the index answered would be.
func ExampleIndex_RecordQueries() {
	ctx := context.Background()
	store, err := vector.NewMemStore(2, vector.L2)
	if err != nil {
		panic(err)
	}
	ix, err := hnsw.New(store, &hnsw.Options{TargetRecall: 0.9})
	if err != nil {
		panic(err)
	}
	for i := range hnsw.MinCalibrationLen {
		v := vector.Vector{float32(i % 25), float32(i / 25)}
		if err := ix.Add(ctx, vector.ID(i+1), v); err != nil {
			panic(err)
		}
	}
	var answered []vector.Vector
	for i := range hnsw.MinRealQueries {
		answered = append(answered, vector.Vector{float32(i%20) + 0.5, float32(i/20) + 0.25})
	}
	if err := ix.RecordQueries(answered); err != nil {
		panic(err)
	}
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Source, c.RealQueries, c.Recall >= 0.9)
	// Output:
	// queries 200 true
}
