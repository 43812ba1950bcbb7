package kernel

import "unsafe"

// The portable int8 kernels: dot products of an int8 query with uint8
// codes, the inner loop of scalar quantization (package vector/quant).
// Every query element must lie in [-64, 64], which keeps the AVX2 kernel's
// int16 pair sums from saturating (int8_amd64.s); every product is then at
// most 64·255, so a sum of up to 65,536 of them is exact in int32 whatever
// the order of addition: every implementation returns the same integer.

// The selected int8 kernels are functions that branch on the CPU's
// features (int8_amd64.go, int8_other.go), not func variables like the
// float kernels: a call through a func value makes its slice arguments
// escape, and the scan's small result buffers would then be allocated on
// every call. Their contracts:
//
//	DotU8I8(q, c)                   exact Σ q[i]·c[i]; c holds at least len(q)
//	                                bytes, len(q) ≤ 65,536, each q[i] in [-64, 64]
//	DotU8I8x4(q, a, b, c, d)        DotU8I8 with four codes, one pass over q
//	DotU8I8Gather(q, codes, out)    out[i] = DotU8I8(q, codes[i][:len(q)]); each
//	                                pointer addresses len(q) readable bytes
//	DotU8I8Gather2(q1, q2, codes, out1, out2)
//	                                DotU8I8Gather of q1 into out1 and of q2 into
//	                                out2 (len(q2) = len(q1)), one pass over each code
//	DotU8I8GatherAffine(q, codes, a, b, out)
//	                                out[i] = b + a·float32(DotU8I8(q, codes[i][:len(q)])),
//	                                in float32 as Go evaluates it (no fused multiply-add)
//	DotU8I8Batch(q, codes, s, out)  out[i] = DotU8I8(q, codes[i*s:]); codes holds
//	                                at least (len(out)-1)*s + len(q) bytes

// DotU8I8Generic returns Σ q[i]·c[i] over len(q) elements, exactly.
func DotU8I8Generic(q []int8, c []uint8) int32 {
	n := len(q)
	c = c[:n]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= n; i += 4 {
		qq := q[i : i+4 : i+4]
		cc := c[i : i+4 : i+4]
		s0 += int32(qq[0]) * int32(cc[0])
		s1 += int32(qq[1]) * int32(cc[1])
		s2 += int32(qq[2]) * int32(cc[2])
		s3 += int32(qq[3]) * int32(cc[3])
	}
	for ; i < n; i++ {
		s0 += int32(q[i]) * int32(c[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// DotU8I8x4Generic applies DotU8I8Generic to q and each of four codes.
func DotU8I8x4Generic(q []int8, a, b, c, d []uint8) [4]int32 {
	return [4]int32{DotU8I8Generic(q, a), DotU8I8Generic(q, b), DotU8I8Generic(q, c), DotU8I8Generic(q, d)}
}

// DotU8I8GatherGeneric applies DotU8I8Generic to q and the len(q) bytes at
// each pointer of codes, writing out[i] for codes[i].
func DotU8I8GatherGeneric(q []int8, codes []*uint8, out []int32) {
	out = out[:len(codes)]
	for i, c := range codes {
		out[i] = DotU8I8Generic(q, unsafe.Slice(c, len(q)))
	}
}

// DotU8I8Gather2Generic is DotU8I8GatherGeneric of q1 into out1 and of
// q2 into out2.
func DotU8I8Gather2Generic(q1, q2 []int8, codes []*uint8, out1, out2 []int32) {
	DotU8I8GatherGeneric(q1, codes, out1)
	DotU8I8GatherGeneric(q2, codes, out2)
}

// DotU8I8GatherAffineGeneric writes base + alpha·float32(s) for the sum s
// of each code of codes with q.
func DotU8I8GatherAffineGeneric(q []int8, codes []*uint8, alpha, base float32, out []float32) {
	out = out[:len(codes)]
	for i, c := range codes {
		d := DotU8I8Generic(q, unsafe.Slice(c, len(q)))
		// The product is rounded to float32 before the add (an explicit
		// conversion forbids fusing them), as the assembly computes it.
		out[i] = base + float32(alpha*float32(d))
	}
}

// DotU8I8BatchGeneric applies DotU8I8Generic to q and the codes that start
// every stride bytes of codes.
func DotU8I8BatchGeneric(q []int8, codes []uint8, stride int, out []int32) {
	for i := range out {
		out[i] = DotU8I8Generic(q, codes[i*stride:])
	}
}
