package qflat_test

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
)

func ExampleIndex_Search() {
	ctx := context.Background()
	store, _ := vector.NewMemStore(3, vector.Cosine)
	idx, err := qflat.New(store, nil)
	if err != nil {
		panic(err)
	}
	_ = idx.Add(ctx, 1, vector.Vector{1, 0, 0})
	_ = idx.Add(ctx, 2, vector.Vector{0.9, 0.1, 0})
	_ = idx.Add(ctx, 3, vector.Vector{0, 0, 1})

	// The codes pick the candidates; the distances are exact.
	res, err := idx.Search(ctx, vector.Vector{1, 0.05, 0}, 2, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Printf("id %d, cosine distance %.4f\n", r.ID, r.Distance)
	}
	fmt.Println("code bytes:", idx.Stats().CodeBytes)
	// Output:
	// id 1, cosine distance 0.0012
	// id 2, cosine distance 0.0018
	// code bytes: 7195
}
