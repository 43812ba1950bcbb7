//go:build !amd64 || purego

package kernel

// DotU8I8 is the selected exact int8 dot product (see int8.go).
func DotU8I8(q []int8, c []uint8) int32 { return DotU8I8Generic(q, c) }

// DotU8I8x4 is the selected four-code int8 dot product.
func DotU8I8x4(q []int8, a, b, c, d []uint8) [4]int32 { return DotU8I8x4Generic(q, a, b, c, d) }

// DotU8I8Batch is the selected strided batch of int8 dot products.
func DotU8I8Batch(q []int8, codes []uint8, stride int, out []int32) {
	DotU8I8BatchGeneric(q, codes, stride, out)
}

// DotU8I8Gather is the selected pointer-gather int8 dot product.
func DotU8I8Gather(q []int8, codes []*uint8, out []int32) { DotU8I8GatherGeneric(q, codes, out) }

// DotU8I8Gather2 is the selected pointer gather against two queries.
func DotU8I8Gather2(q1, q2 []int8, codes []*uint8, out1, out2 []int32) {
	DotU8I8Gather2Generic(q1, q2, codes, out1, out2)
}

// DotU8I8GatherAffine is the selected gather with the affine finish.
func DotU8I8GatherAffine(q []int8, codes []*uint8, alpha, base float32, out []float32) {
	DotU8I8GatherAffineGeneric(q, codes, alpha, base, out)
}
