package vector

import "github.com/cairndb/cairn/vector/internal/kernel"

// InnerProduct returns a·b in float32, computed by the fastest kernel this
// CPU supports. Like gonum's floats.Dot it panics if the lengths differ: it
// is low-level arithmetic, and callers validate user input first.
func InnerProduct(a, b Vector) float32 {
	if len(a) != len(b) {
		panic("vector: InnerProduct of vectors of unequal length")
	}
	return kernel.Dot(a, b)
}

// SquaredL2 returns Σ(aᵢ − bᵢ)² in float32, computed by the fastest kernel
// this CPU supports. It panics if the lengths differ.
func SquaredL2(a, b Vector) float32 {
	if len(a) != len(b) {
		panic("vector: SquaredL2 of vectors of unequal length")
	}
	return kernel.L2(a, b)
}

// KernelName names the distance kernels selected for this CPU at start-up,
// such as "avx512" or "generic"; benchmarks and vecbench report it.
func KernelName() string { return kernel.Name }

func dotBatch(q Vector, rows, out []float32) { kernel.DotBatch(q, rows, out) }
func l2Batch(q Vector, rows, out []float32)  { kernel.L2Batch(q, rows, out) }

// InnerProduct4 returns q·a, q·b, q·c and q·d, computed in one pass over q
// by the fastest kernel this CPU supports: the four rows may lie anywhere
// in memory (a graph index scores a node's neighbours with it). Each result
// has the bits InnerProduct's kernel family gives for four consecutive rows
// of a batch. It panics if a length differs from len(q).
func InnerProduct4(q, a, b, c, d Vector) [4]float32 {
	if len(a) != len(q) || len(b) != len(q) || len(c) != len(q) || len(d) != len(q) {
		panic("vector: InnerProduct4 of vectors of unequal length")
	}
	return kernel.Dot4(q, a, b, c, d)
}

// SquaredL2x4 returns the squared Euclidean distances of q to a, b, c and
// d, computed in one pass over q; see [InnerProduct4]. It panics if a
// length differs from len(q).
func SquaredL2x4(q, a, b, c, d Vector) [4]float32 {
	if len(a) != len(q) || len(b) != len(q) || len(c) != len(q) || len(d) != len(q) {
		panic("vector: SquaredL2x4 of vectors of unequal length")
	}
	return kernel.L2x4(q, a, b, c, d)
}
