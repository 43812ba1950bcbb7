// This file holds the pointer-gather distance forms: one query against
// many rows anywhere in memory, in one call, for graph indexes that score a
// node's whole neighbour list at once.

package vector

import "github.com/cairndb/cairn/vector/internal/kernel"

// InnerProductGather writes q·row i into out[i] for each row i of rows,
// four rows a pass over q, the loop over the rows in the kernel, so that a
// list of rows costs one call instead of one per row or per four. Each
// row must point at len(q) readable float32s (the caller's contract, as
// with [unsafe.Slice]); the results have the bits [InnerProduct4] gives for
// the same rows. It panics if len(out) < len(rows).
//
// It is safe to call concurrently; out must not be shared.
func InnerProductGather(q Vector, rows []*float32, out []float32) {
	if len(out) < len(rows) {
		panic("vector: InnerProductGather with out shorter than rows")
	}
	kernel.DotGather(q, rows, out)
}

// SquaredL2Gather is [InnerProductGather] for the squared Euclidean
// distance, with the bits of [SquaredL2x4].
func SquaredL2Gather(q Vector, rows []*float32, out []float32) {
	if len(out) < len(rows) {
		panic("vector: SquaredL2Gather with out shorter than rows")
	}
	kernel.L2Gather(q, rows, out)
}
