package quant_test

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// Example trains a quantizer on a store, encodes its vectors, and ranks
// them by their estimated distance to a query, as a quantized index does
// before it rescores the best exactly.
func Example() {
	ctx := context.Background()
	s, _ := vector.NewMemStore(3, vector.L2)
	vs := []vector.Vector{{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {1, 1, 1}}
	for i, v := range vs {
		_ = s.Put(ctx, vector.ID(i), v)
	}
	q, err := quant.Train(ctx, s, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	codes := make([]byte, len(vs)*q.CodeSize())
	for i, v := range vs {
		if _, err := q.Encode(codes[i*q.CodeSize():(i+1)*q.CodeSize()], v); err != nil {
			fmt.Println(err)
			return
		}
	}
	query, err := q.Prepare(vector.Vector{0.9, 0.1, 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	est := make([]float32, len(vs))
	query.Distances(codes, est)
	for i, d := range est {
		fmt.Printf("%d: estimate %.2f, exact %.2f\n", i, d, vector.L2.Distance(vector.Vector{0.9, 0.1, 0}, vs[i]))
	}
	// Output:
	// 0: estimate 0.82, exact 0.82
	// 1: estimate 0.02, exact 0.02
	// 2: estimate 4.43, exact 4.42
	// 3: estimate 9.82, exact 9.82
	// 4: estimate 1.82, exact 1.82
}
