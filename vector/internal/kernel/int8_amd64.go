//go:build amd64 && !purego

package kernel

import "unsafe"

// The AVX2 int8 kernels (int8_amd64.s) take a positive multiple of 32
// elements; these wrappers check the lengths, run the assembly over the
// largest such prefix and add the last len(q)%32 products in Go.

//go:noescape
func dotU8I8AVX2(q *int8, c *uint8, n int) int32

// dotU8I8GatherNAVX2 runs the four-code loop over each group of four
// pointers at codes, writing 4*groups sums to out (groups > 0).
//
//go:noescape
func dotU8I8GatherNAVX2(q *int8, codes **uint8, groups, n int, out *int32)

// dotU8I8GatherAffineAVX2 scores count > 0 codes, a last partial group
// in the same call, writing base + alpha·float32(sum) for each.
//
//go:noescape
func dotU8I8GatherAffineAVX2(q *int8, codes **uint8, count, n int, out *float32, alpha, base float32)

// dotU8I8GatherAffineVNNI is dotU8I8GatherAffineAVX2 with AVX-512 VNNI.
//
//go:noescape
func dotU8I8GatherAffineVNNI(q *int8, codes **uint8, count, n int, out *float32, alpha, base float32)

// dotU8I8Gather2VNNI scores count > 0 codes against two queries of n
// bytes (a positive multiple of 32), a last partial group in the same
// call, with AVX-512 VNNI.
//
//go:noescape
func dotU8I8Gather2VNNI(q1, q2 *int8, codes **uint8, count, n int, out1, out2 *int32)

//go:noescape
func dotU8I8Gather4AVX2(q *int8, a, b, c, d *uint8, n int, out *int32)

// dotU8I8StridedAVX2 runs the four-code loop over groups of four
// consecutive codes stride bytes apart, writing 4*groups sums to out. It
// prefetches up to three groups past the last: prefetches never fault.
//
// dotU8I8StridedVNNI is dotU8I8StridedAVX2 with AVX-512 VNNI.
//
//go:noescape
func dotU8I8StridedVNNI(q *int8, codes *uint8, n, stride, groups int, out *int32)

//go:noescape
func dotU8I8StridedAVX2(q *int8, codes *uint8, n, stride, groups int, out *int32)

func dotU8I8AVX2Wrap(q []int8, c []uint8) int32 {
	n := len(q)
	c = c[:n]
	m := n &^ 31
	var s int32
	if m > 0 {
		s = dotU8I8AVX2(&q[0], &c[0], m)
	}
	for i := m; i < n; i++ {
		s += int32(q[i]) * int32(c[i])
	}
	return s
}

func dotU8I8x4AVX2Wrap(q []int8, a, b, c, d []uint8) (out [4]int32) {
	n := len(q)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	m := n &^ 31
	if m > 0 {
		dotU8I8Gather4AVX2(&q[0], &a[0], &b[0], &c[0], &d[0], m, &out[0])
	}
	for i := m; i < n; i++ {
		x := int32(q[i])
		out[0] += x * int32(a[i])
		out[1] += x * int32(b[i])
		out[2] += x * int32(c[i])
		out[3] += x * int32(d[i])
	}
	return out
}

func dotU8I8BatchAVX2(q []int8, codes []uint8, stride int, out []int32) {
	dotU8I8BatchX86(q, codes, stride, out, false)
}

// dotU8I8BatchAVX512 is DotU8I8Batch on AVX-512: the VNNI kernel where
// the CPU has it, else the AVX2 one.
func dotU8I8BatchAVX512(q []int8, codes []uint8, stride int, out []int32) {
	dotU8I8BatchX86(q, codes, stride, out, hasVNNI)
}

// dotU8I8BatchX86 runs the strided kernel, VNNI's if vnni, over the
// groups of four codes and the largest multiple of 32 bytes, and adds the
// rest in Go.
func dotU8I8BatchX86(q []int8, codes []uint8, stride int, out []int32, vnni bool) {
	n := len(q)
	m := n &^ 31
	g := len(out) / 4
	if m > 0 && g > 0 {
		codes := codes[:(4*g-1)*stride+n] // the sums' bounds check
		if vnni {
			dotU8I8StridedVNNI(&q[0], &codes[0], m, stride, g, &out[0])
		} else {
			dotU8I8StridedAVX2(&q[0], &codes[0], m, stride, g, &out[0])
		}
		if m < n {
			for i := range 4 * g {
				c := codes[i*stride : i*stride+n]
				for j := m; j < n; j++ {
					out[i] += int32(q[j]) * int32(c[j])
				}
			}
		}
	} else {
		for i := range 4 * g {
			o := i * stride
			out[i] = dotU8I8AVX2Wrap(q, codes[o:o+n])
		}
	}
	for i := 4 * g; i < len(out); i++ {
		out[i] = dotU8I8AVX2Wrap(q, codes[i*stride:])
	}
}

// dotU8I8GatherAVX2 scores every code of codes in one assembly call over
// the groups of four; a last group of one to three codes goes through a
// padded copy of its pointers. A length not a multiple of 32 adds its last
// products in Go (package quant pads its queries so that none remain).
func dotU8I8GatherAVX2(q []int8, codes []*uint8, out []int32) {
	out = out[:len(codes)]
	n := len(q)
	m := n &^ 31
	if m == 0 {
		for i, c := range codes {
			out[i] = DotU8I8Generic(q, unsafe.Slice(c, n))
		}
		return
	}
	g := len(codes) / 4
	if g > 0 {
		dotU8I8GatherNAVX2(&q[0], &codes[0], g, m, &out[0])
	}
	if rest := len(codes) - 4*g; rest > 0 {
		var t [4]*uint8
		for j := range t {
			t[j] = codes[min(4*g+j, len(codes)-1)]
		}
		var o [4]int32
		dotU8I8GatherNAVX2(&q[0], &t[0], 1, m, &o[0])
		copy(out[4*g:], o[:rest])
	}
	if m < n {
		for i, c := range codes {
			c := unsafe.Slice(c, n)
			for j := m; j < n; j++ {
				out[i] += int32(q[j]) * int32(c[j])
			}
		}
	}
}

// dotU8I8GatherAffineAVX2Wrap is DotU8I8GatherAffine on AVX2.
func dotU8I8GatherAffineAVX2Wrap(q []int8, codes []*uint8, alpha, base float32, out []float32) {
	dotU8I8GatherAffineX86(q, codes, alpha, base, out, false)
}

// dotU8I8GatherAffineAVX512Wrap is DotU8I8GatherAffine on AVX-512: the
// VNNI kernel where the CPU has it, else the AVX2 one.
func dotU8I8GatherAffineAVX512Wrap(q []int8, codes []*uint8, alpha, base float32, out []float32) {
	dotU8I8GatherAffineX86(q, codes, alpha, base, out, hasVNNI)
}

// dotU8I8GatherAffineX86 is one assembly call, VNNI's if vnni, when
// len(q) is a multiple of 32 (package quant pads its queries so), the
// generic form otherwise.
func dotU8I8GatherAffineX86(q []int8, codes []*uint8, alpha, base float32, out []float32, vnni bool) {
	out = out[:len(codes)]
	if len(codes) == 0 {
		return
	}
	switch {
	case len(q) == 0 || len(q)%32 != 0:
		DotU8I8GatherAffineGeneric(q, codes, alpha, base, out)
	case vnni:
		dotU8I8GatherAffineVNNI(&q[0], &codes[0], len(codes), len(q), &out[0], alpha, base)
	default:
		dotU8I8GatherAffineAVX2(&q[0], &codes[0], len(codes), len(q), &out[0], alpha, base)
	}
}

// dotU8I8Gather2AVX2 is DotU8I8Gather2 on AVX2: two gathers.
func dotU8I8Gather2AVX2(q1, q2 []int8, codes []*uint8, out1, out2 []int32) {
	dotU8I8GatherAVX2(q1, codes, out1)
	dotU8I8GatherAVX2(q2, codes, out2)
}

// dotU8I8Gather2AVX512 is DotU8I8Gather2 on AVX-512: one pass over each
// code with VNNI, where the CPU has it and the queries' length allows.
func dotU8I8Gather2AVX512(q1, q2 []int8, codes []*uint8, out1, out2 []int32) {
	n := len(q1)
	if !hasVNNI || n == 0 || n%32 != 0 || len(q2) != n {
		dotU8I8Gather2AVX2(q1, q2, codes, out1, out2)
		return
	}
	out1, out2 = out1[:len(codes)], out2[:len(codes)]
	if len(codes) > 0 {
		dotU8I8Gather2VNNI(&q1[0], &q2[0], &codes[0], len(codes), n, &out1[0], &out2[0])
	}
}

// DotU8I8 is the selected exact int8 dot product (see int8.go).
func DotU8I8(q []int8, c []uint8) int32 {
	if hasAVX2 {
		return dotU8I8AVX2Wrap(q, c)
	}
	return DotU8I8Generic(q, c)
}

// DotU8I8x4 is the selected four-code int8 dot product.
func DotU8I8x4(q []int8, a, b, c, d []uint8) [4]int32 {
	if hasAVX2 {
		return dotU8I8x4AVX2Wrap(q, a, b, c, d)
	}
	return DotU8I8x4Generic(q, a, b, c, d)
}

// DotU8I8Gather is the selected pointer-gather int8 dot product.
func DotU8I8Gather(q []int8, codes []*uint8, out []int32) {
	if hasAVX2 {
		dotU8I8GatherAVX2(q, codes, out)
		return
	}
	DotU8I8GatherGeneric(q, codes, out)
}

// DotU8I8Gather2 is the selected pointer gather against two queries.
func DotU8I8Gather2(q1, q2 []int8, codes []*uint8, out1, out2 []int32) {
	switch {
	case hasAVX512:
		dotU8I8Gather2AVX512(q1, q2, codes, out1, out2)
	case hasAVX2:
		dotU8I8Gather2AVX2(q1, q2, codes, out1, out2)
	default:
		DotU8I8Gather2Generic(q1, q2, codes, out1, out2)
	}
}

// DotU8I8GatherAffine is the selected gather with the affine finish.
func DotU8I8GatherAffine(q []int8, codes []*uint8, alpha, base float32, out []float32) {
	if hasAVX512 {
		dotU8I8GatherAffineAVX512Wrap(q, codes, alpha, base, out)
		return
	}
	if hasAVX2 {
		dotU8I8GatherAffineAVX2Wrap(q, codes, alpha, base, out)
		return
	}
	DotU8I8GatherAffineGeneric(q, codes, alpha, base, out)
}

// DotU8I8Batch is the selected strided batch of int8 dot products.
func DotU8I8Batch(q []int8, codes []uint8, stride int, out []int32) {
	if hasAVX512 {
		dotU8I8BatchAVX512(q, codes, stride, out)
		return
	}
	if hasAVX2 {
		dotU8I8BatchAVX2(q, codes, stride, out)
		return
	}
	DotU8I8BatchGeneric(q, codes, stride, out)
}
