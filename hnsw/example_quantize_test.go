// This file holds the example of the int8 traversal option.

package hnsw_test

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// An index that walks int8 codes and rescores its finalists from the
// store: the distances it returns are the exact ones.
func ExampleQuantize() {
	ctx := context.Background()
	store, err := vector.NewMemStore(3, vector.L2)
	if err != nil {
		panic(err)
	}
	ix, err := hnsw.New(store, &hnsw.Options{Quantize: hnsw.QuantizeInt8})
	if err != nil {
		panic(err)
	}
	ids := []vector.ID{1, 2, 3, 4}
	vs := []vector.Vector{{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {3, 3, 3}}
	if err := ix.AddBatch(ctx, ids, vs); err != nil {
		panic(err)
	}
	res, err := ix.Search(ctx, vector.Vector{0.9, 0.1, 0}, 2, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Printf("id %d at %.2f\n", r.ID, r.Distance)
	}
	st := ix.Stats()
	fmt.Println("walks", ix.Options().Quantize, "codes, bytes a slot:", st.CodeBytes/int64(st.Slots))
	// Output:
	// id 2 at 0.02
	// id 1 at 0.82
	// walks int8 codes, bytes a slot: 7
}
