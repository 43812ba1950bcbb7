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
