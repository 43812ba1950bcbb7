package kernel

// The selected kernels. They are set once, in init, and never change after;
// reading them concurrently is safe.
var (
	// Dot returns the inner product of a and b.
	Dot = DotGeneric
	// L2 returns the squared Euclidean distance between a and b.
	L2 = L2Generic
	// DotBatch writes the inner product of q with each row of rows into out.
	DotBatch = DotBatchGeneric
	// L2Batch writes the squared distance of q to each row of rows into out.
	L2Batch = L2BatchGeneric
	// Dot4 returns the inner products of q with a, b, c and d, in one pass
	// over q; every row holds at least len(q) elements.
	Dot4 = Dot4Generic
	// L2x4 returns the squared distances of q to a, b, c and d, in one
	// pass over q; every row holds at least len(q) elements.
	L2x4 = L2x4Generic
	// DotGather writes the inner product of q with each row of rows (a
	// pointer to at least len(q) float32s) into out; it gives the bits
	// Dot4 gives for the same rows.
	DotGather = DotGatherGeneric
	// L2Gather writes the squared distance of q to each row of rows into
	// out, as DotGather.
	L2Gather = L2GatherGeneric
	// Name names the selected kernel family: "avx512", "avx2" or "generic".
	Name = "generic"
)

// Impl is one family of kernels. Its functions have the contracts of the
// dispatch variables of the same names. An Impl is immutable and safe for
// concurrent use.
type Impl struct {
	Name     string                                   // "avx512", "avx2" or "generic"
	Dot      func(a, b []float32) float32             // inner product
	L2       func(a, b []float32) float32             // squared Euclidean distance
	DotBatch func(q, rows, out []float32)             // Dot of q with each row
	L2Batch  func(q, rows, out []float32)             // L2 of q to each row
	Dot4     func(q, a, b, c, d []float32) [4]float32 // Dot of q with four rows
	L2x4     func(q, a, b, c, d []float32) [4]float32 // L2 of q to four rows

	DotGather func(q []float32, rows []*float32, out []float32) // Dot of q with each row pointer
	L2Gather  func(q []float32, rows []*float32, out []float32) // L2 of q to each row pointer

	// The int8 kernels of package vector/quant (contracts in int8.go;
	// query elements in [-64, 64]). The avx512 family runs AVX-512 VNNI
	// versions of some (VPDPBUSD multiplies uint8 by int8 and sums four
	// products into int32 in one instruction, where AVX2 needs three) on
	// CPUs that have it, and the AVX2 ones otherwise.
	DotU8I8       func(q []int8, c []uint8) int32                        // exact q·c
	DotU8I8x4     func(q []int8, a, b, c, d []uint8) [4]int32            // q· four codes
	DotU8I8Batch  func(q []int8, codes []uint8, stride int, out []int32) // q· codes every stride bytes
	DotU8I8Gather func(q []int8, codes []*uint8, out []int32)            // q· codes anywhere
	// DotU8I8Gather2 is DotU8I8Gather with two queries, one pass a code.
	DotU8I8Gather2 func(q1, q2 []int8, codes []*uint8, out1, out2 []int32)
	// DotU8I8GatherAffine is DotU8I8Gather with base + alpha·sum applied.
	DotU8I8GatherAffine func(q []int8, codes []*uint8, alpha, base float32, out []float32)
}

// Generic is the portable implementation, available on every CPU.
var Generic = Impl{
	Name:     "generic",
	Dot:      DotGeneric,
	L2:       L2Generic,
	DotBatch: DotBatchGeneric,
	L2Batch:  L2BatchGeneric,
	Dot4:     Dot4Generic,
	L2x4:     L2x4Generic,

	DotGather: DotGatherGeneric,
	L2Gather:  L2GatherGeneric,

	DotU8I8:             DotU8I8Generic,
	DotU8I8x4:           DotU8I8x4Generic,
	DotU8I8Batch:        DotU8I8BatchGeneric,
	DotU8I8Gather:       DotU8I8GatherGeneric,
	DotU8I8Gather2:      DotU8I8Gather2Generic,
	DotU8I8GatherAffine: DotU8I8GatherAffineGeneric,
}

// Impls returns every implementation this CPU can run, fastest first, the
// portable one last. Tests and benchmarks use it to cover every kernel, not
// only the selected one. The caller may modify the returned slice.
func Impls() []Impl {
	return append(nativeImpls(), Generic)
}
