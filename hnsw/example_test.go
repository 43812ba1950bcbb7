package hnsw_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

func ExampleIndex_Search() {
	ctx := context.Background()
	store, err := vector.NewMemStore(2, vector.L2)
	if err != nil {
		panic(err)
	}
	ix, err := hnsw.New(store, nil) // nil: the defaults, M=16, EfConstruction=200
	if err != nil {
		panic(err)
	}
	points := map[vector.ID]vector.Vector{
		1: {0, 0}, 2: {1, 0}, 3: {0, 1}, 4: {5, 5}, 5: {6, 5},
	}
	for id := vector.ID(1); id <= 5; id++ {
		if err := ix.Add(ctx, id, points[id]); err != nil {
			panic(err)
		}
	}
	res, err := ix.Search(ctx, vector.Vector{5.2, 5}, 2, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Printf("id %d at %.2f\n", r.ID, r.Distance)
	}
	// A wider beam for one query, and a filter.
	res, err = ix.SearchWith(ctx, vector.Vector{0, 0}, 1, &hnsw.SearchOptions{
		SearchOptions: vector.SearchOptions{Filter: vector.NewIDSet(2, 3)},
		Ef:            100,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("nearest of 2 and 3:", res[0].ID)
	// Output:
	// id 4 at 0.04
	// id 5 at 0.64
	// nearest of 2 and 3: 2
}

func ExampleIndex_WriteTo() {
	ctx := context.Background()
	store, _ := vector.NewMemStore(2, vector.L2)
	ix, _ := hnsw.New(store, nil)
	_ = ix.AddBatch(ctx, []vector.ID{1, 2, 3}, []vector.Vector{{0, 0}, {1, 1}, {2, 2}})

	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		panic(err)
	}
	// Later, over the same store: load the graph instead of rebuilding it.
	loaded, _ := hnsw.New(store, nil)
	if _, err := loaded.ReadFrom(&buf); err != nil {
		panic(err)
	}
	res, _ := loaded.Search(ctx, vector.Vector{1.9, 2}, 1, nil)
	fmt.Println(loaded.Len(), res[0].ID)
	// Output:
	// 3 3
}

// An index with a recall target chooses its own beam width: here it is
// small, so it is searched exactly until it reaches MinCalibrationLen.
func ExampleOptions_targetRecall() {
	ctx := context.Background()
	store, err := vector.NewMemStore(2, vector.L2)
	if err != nil {
		panic(err)
	}
	ix, err := hnsw.New(store, &hnsw.Options{TargetRecall: 0.95})
	if err != nil {
		panic(err)
	}
	for id := vector.ID(1); id <= 100; id++ {
		if err := ix.Add(ctx, id, vector.Vector{float32(id), 0}); err != nil {
			panic(err)
		}
	}
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Exact, c.Reason)
	res, _ := ix.Search(ctx, vector.Vector{42.2, 0}, 1, nil)
	fmt.Println(res[0].ID)
	// Output:
	// true 100 vectors, fewer than 500
	// 42
}
