package vector_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector/internal/kernel"
)

// The int8 kernels (the inner loop of package vector/quant) are checked
// against an int64 reference: their sums are integers, so every
// implementation must return exactly the reference, at every length, for
// every byte value, whatever is stored around its inputs.

// refDotU8I8 is Σ q[i]·c[i] in int64.
func refDotU8I8(q []int8, c []uint8) int64 {
	var s int64
	for i := range q {
		s += int64(q[i]) * int64(c[i])
	}
	return s
}

// guardedI8 returns n bytes from gen at offset off of a buffer whose other
// bytes are -128: a kernel that reads past its slice changes its sum.
func guardedI8(n, off int, gen func() int8) []int8 {
	buf := make([]int8, off+n+64)
	for i := range buf {
		buf[i] = -128
	}
	s := buf[off : off+n : off+n]
	for i := range s {
		s[i] = gen()
	}
	return s
}

// guardedU8 is guardedI8 for codes, with 255 around them.
func guardedU8(n, off int, gen func() uint8) []uint8 {
	buf := make([]uint8, off+n+64)
	for i := range buf {
		buf[i] = 255
	}
	s := buf[off : off+n : off+n]
	for i := range s {
		s[i] = gen()
	}
	return s
}

// int8Gens are the value patterns: uniform over the contract's range
// (queries in [-64, 64], codes 0…255), and its extremes, where a kernel
// whose pair sums saturated or that treated codes as signed would be
// wrong.
func int8Gens(r *rand.Rand) map[string][2]func() int {
	return map[string][2]func() int{
		"uniform": {func() int { return r.IntN(129) - 64 }, func() int { return r.IntN(256) }},
		"extreme": {func() int { return -64 }, func() int { return 255 }},
		"max":     {func() int { return 64 }, func() int { return 255 }},
		"mixed":   {func() int { return []int{-64, 64}[r.IntN(2)] }, func() int { return []int{0, 255}[r.IntN(2)] }},
	}
}

func TestInt8KernelsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range kernel.Impls() {
		for name, g := range int8Gens(r) {
			qg := func() int8 { return int8(g[0]()) }
			cg := func() uint8 { return uint8(g[1]()) }
			for _, n := range kernelLengths {
				for off := range 4 {
					q := guardedI8(n, off, qg)
					c := guardedU8(n, 3-off, cg)
					want := refDotU8I8(q, c)
					if got := k.DotU8I8(q, c); int64(got) != want {
						t.Errorf("%s %s: DotU8I8(n=%d, off=%d) = %d, want %d", k.Name, name, n, off, got, want)
					}
				}
			}
		}
	}
}

// TestInt8KernelsLongest checks the longest vector the contract allows,
// 65,536 elements of -64·255 (a sum of -1,069,547,520).
func TestInt8KernelsLongest(t *testing.T) {
	const n = 1 << 16
	q := make([]int8, n)
	c := make([]uint8, n)
	for i := range q {
		q[i], c[i] = -64, 255
	}
	want := refDotU8I8(q, c)
	for _, k := range kernel.Impls() {
		if got := k.DotU8I8(q, c); int64(got) != want {
			t.Errorf("%s: DotU8I8 of %d extremes = %d, want %d", k.Name, n, got, want)
		}
		if got := k.DotU8I8x4(q, c, c, c, c); int64(got[3]) != want {
			t.Errorf("%s: DotU8I8x4 of %d extremes = %d, want %d", k.Name, n, got[3], want)
		}
	}
}

// TestInt8KernelBatch checks the four-code and batch forms against the
// reference, for code counts on either side of the four-row step and
// strides longer than the code (codes with trailing bytes, as package
// quant lays them out).
func TestInt8KernelBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	qg := func() int8 { return int8(r.IntN(129) - 64) }
	cg := func() uint8 { return uint8(r.IntN(256)) }
	for _, k := range kernel.Impls() {
		for _, n := range kernelLengths {
			for _, extra := range []int{0, 4, 7} {
				stride := n + extra
				for _, rows := range []int{0, 1, 3, 4, 5, 8, 9} {
					off := (n + rows) % 4
					q := guardedI8(n, off, qg)
					codes := guardedU8(max(0, (rows-1)*stride+n), 3-off, cg)
					out := make([]int32, rows)
					for i := range out {
						out[i] = -7
					}
					k.DotU8I8Batch(q, codes, stride, out)
					for i := range rows {
						c := codes[i*stride : i*stride+n]
						if want := refDotU8I8(q, c); int64(out[i]) != want {
							t.Errorf("%s: DotU8I8Batch(n=%d, stride=%d) row %d of %d = %d, want %d", k.Name, n, stride, i, rows, out[i], want)
						}
					}
				}
			}
			for off := range 4 {
				q := guardedI8(n, off, qg)
				var cs [4][]uint8
				for j := range cs {
					cs[j] = guardedU8(n, (off+j)%4, cg)
				}
				got := k.DotU8I8x4(q, cs[0], cs[1], cs[2], cs[3])
				for j, c := range cs {
					if want := refDotU8I8(q, c); int64(got[j]) != want {
						t.Errorf("%s: DotU8I8x4(n=%d) code %d = %d, want %d", k.Name, n, j, got[j], want)
					}
				}
			}
		}
	}
}

// TestInt8KernelGather checks the pointer-gather form against the
// reference for code counts on either side of the four-code step, codes
// scattered in memory at different alignments, each guarded so that a
// kernel reading past len(q) bytes of a code changes its sum, and an out
// longer than the codes left untouched past them.
func TestInt8KernelGather(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	qg := func() int8 { return int8(r.IntN(129) - 64) }
	cg := func() uint8 { return uint8(r.IntN(256)) }
	for _, k := range kernel.Impls() {
		for _, n := range kernelLengths {
			for _, rows := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 32, 33} {
				q := guardedI8(n, rows%4, qg)
				cs := make([][]uint8, rows)
				ps := make([]*uint8, rows)
				for i := range cs {
					cs[i] = guardedU8(n, (i+rows)%4, cg)
					if n > 0 {
						ps[i] = &cs[i][0]
					} else {
						ps[i] = new(uint8)
					}
				}
				out := make([]int32, rows+1)
				for i := range out {
					out[i] = -7
				}
				k.DotU8I8Gather(q, ps, out)
				for i, c := range cs {
					if want := refDotU8I8(q, c); int64(out[i]) != want {
						t.Errorf("%s: DotU8I8Gather(n=%d) code %d of %d = %d, want %d", k.Name, n, i, rows, out[i], want)
					}
				}
				if out[rows] != -7 {
					t.Errorf("%s: DotU8I8Gather(n=%d, %d codes) wrote out[%d]", k.Name, n, rows, rows)
				}
				q2 := guardedI8(n, (rows+1)%4, qg)
				out1, out2 := make([]int32, rows+1), make([]int32, rows+1)
				out1[rows], out2[rows] = -7, -7
				k.DotU8I8Gather2(q, q2, ps, out1, out2)
				for i, c := range cs {
					if want := refDotU8I8(q, c); int64(out1[i]) != want {
						t.Errorf("%s: DotU8I8Gather2(n=%d) first query, code %d of %d = %d, want %d", k.Name, n, i, rows, out1[i], want)
					}
					if want := refDotU8I8(q2, c); int64(out2[i]) != want {
						t.Errorf("%s: DotU8I8Gather2(n=%d) second query, code %d of %d = %d, want %d", k.Name, n, i, rows, out2[i], want)
					}
				}
				if out1[rows] != -7 || out2[rows] != -7 {
					t.Errorf("%s: DotU8I8Gather2(n=%d, %d codes) wrote past the codes", k.Name, n, rows)
				}
				const alpha, base = float32(0.0123), float32(-0.77)
				aff := make([]float32, rows+1)
				aff[rows] = -7
				k.DotU8I8GatherAffine(q, ps, alpha, base, aff)
				for i, c := range cs {
					if want := base + float32(alpha*float32(refDotU8I8(q, c))); aff[i] != want {
						t.Errorf("%s: DotU8I8GatherAffine(n=%d) code %d of %d = %v, want %v", k.Name, n, i, rows, aff[i], want)
					}
				}
				if aff[rows] != -7 {
					t.Errorf("%s: DotU8I8GatherAffine(n=%d, %d codes) wrote out[%d]", k.Name, n, rows, rows)
				}
			}
		}
	}
}

// FuzzDotU8I8 checks every int8 kernel against the reference on arbitrary
// bytes: the first byte sets the offsets, the rest is split into the query
// (each byte halved into [-64, 63]) and the code.
func FuzzDotU8I8(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0x80, 0xff})
	f.Add(append([]byte{5}, fuzzSeq(2*33)...))
	f.Add(append([]byte{2}, fuzzSeq(2*769)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		mode := data[0]
		data = data[1:]
		n := len(data) / 2
		i := 0
		q := guardedI8(n, int(mode&3), func() int8 { i++; return int8(data[i-1]) / 2 })
		j := n
		c := guardedU8(n, int(mode>>2&3), func() uint8 { j++; return data[j-1] })
		want := refDotU8I8(q, c)
		for _, k := range kernel.Impls() {
			if got := k.DotU8I8(q, c); int64(got) != want {
				t.Fatalf("%s: DotU8I8(n=%d) = %d, want %d", k.Name, n, got, want)
			}
			if got := k.DotU8I8x4(q, c, c, c, c); int64(got[0]) != want || got[0] != got[3] {
				t.Fatalf("%s: DotU8I8x4(n=%d) = %v, want %d", k.Name, n, got, want)
			}
			gout := make([]int32, 5)
			if n > 0 {
				k.DotU8I8Gather(q, []*uint8{&c[0], &c[0], &c[0], &c[0], &c[0]}, gout)
				for r, got := range gout {
					if int64(got) != want {
						t.Fatalf("%s: DotU8I8Gather(n=%d) code %d = %d, want %d", k.Name, n, r, got, want)
					}
				}
				neg := make([]int8, n) // the query negated: in [-63, 64]
				for i, x := range q {
					neg[i] = -x
				}
				g1, g2 := make([]int32, 5), make([]int32, 5)
				k.DotU8I8Gather2(q, neg, []*uint8{&c[0], &c[0], &c[0], &c[0], &c[0]}, g1, g2)
				for r := range g1 {
					if int64(g1[r]) != want || int64(g2[r]) != -want {
						t.Fatalf("%s: DotU8I8Gather2(n=%d) code %d = %d, %d, want %d, %d", k.Name, n, r, g1[r], g2[r], want, -want)
					}
				}
			}
			if n > 0 {
				aff := make([]float32, 3)
				k.DotU8I8GatherAffine(q, []*uint8{&c[0], &c[0], &c[0]}, 0.5, 1, aff)
				for r, got := range aff {
					if want := 1 + float32(0.5*float32(want)); got != want {
						t.Fatalf("%s: DotU8I8GatherAffine(n=%d) code %d = %v, want %v", k.Name, n, r, got, want)
					}
				}
			}
			out := make([]int32, 5)
			codes := append(append(append([]uint8(nil), c...), c...), append(c, c...)...)
			codes = append(codes, c...)
			k.DotU8I8Batch(q, codes, n, out)
			for r, got := range out {
				if int64(got) != want {
					t.Fatalf("%s: DotU8I8Batch(n=%d) row %d = %d, want %d", k.Name, n, r, got, want)
				}
			}
		}
	})
}

// TestInt8Selected checks that the selected int8 kernels are the first
// (fastest) family's.
func TestInt8Selected(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	first := kernel.Impls()[0]
	q := guardedI8(100, 1, func() int8 { return int8(r.IntN(129) - 64) })
	c := guardedU8(5*100, 2, func() uint8 { return uint8(r.IntN(256)) })
	if got, want := kernel.DotU8I8(q, c), first.DotU8I8(q, c); got != want {
		t.Errorf("DotU8I8 = %d, %s gives %d", got, first.Name, want)
	}
	if got, want := kernel.DotU8I8x4(q, c, c[100:], c[200:], c[300:]), first.DotU8I8x4(q, c, c[100:], c[200:], c[300:]); got != want {
		t.Errorf("DotU8I8x4 = %v, %s gives %v", got, first.Name, want)
	}
	got, want := make([]int32, 5), make([]int32, 5)
	kernel.DotU8I8Batch(q, c, 100, got)
	first.DotU8I8Batch(q, c, 100, want)
	for i := range got {
		if got[i] != want[i] || int64(got[i]) != refDotU8I8(q, c[i*100:i*100+100]) {
			t.Errorf("DotU8I8Batch row %d = %d, %s gives %d", i, got[i], first.Name, want[i])
		}
	}
}
