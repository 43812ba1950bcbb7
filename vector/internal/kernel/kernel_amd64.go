//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// x/sys/cpu reports a feature only when the OS also saves its registers.
var (
	hasAVX512 = cpu.X86.HasAVX512F
	// hasVNNI is the AVX-512 int8 dot product with 256-bit forms and
	// byte loads (VNNI, VL, BW).
	hasVNNI = hasAVX512 && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW
	hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

var avx512 = Impl{
	Name:     "avx512",
	Dot:      dotAVX512,
	L2:       l2AVX512,
	DotBatch: dotBatchAVX512,
	L2Batch:  l2BatchAVX512,
	Dot4:     dot4GatherAVX512,
	L2x4:     l2x4GatherAVX512,

	DotGather: dotGatherAVX512,
	L2Gather:  l2GatherAVX512,

	// The gather with the affine finish, which graph walks on codes
	// call, the gather against two queries, which recency walks call,
	// and the strided batch of scans have VNNI kernels; the others run
	// the AVX2 ones.
	DotU8I8:             dotU8I8AVX2Wrap,
	DotU8I8x4:           dotU8I8x4AVX2Wrap,
	DotU8I8Batch:        dotU8I8BatchAVX512,
	DotU8I8Gather:       dotU8I8GatherAVX2,
	DotU8I8Gather2:      dotU8I8Gather2AVX512,
	DotU8I8GatherAffine: dotU8I8GatherAffineAVX512Wrap,
}

var avx2 = Impl{
	Name:     "avx2",
	Dot:      dotAVX2,
	L2:       l2AVX2,
	DotBatch: dotBatchAVX2,
	L2Batch:  l2BatchAVX2,
	Dot4:     dot4GatherAVX2,
	L2x4:     l2x4GatherAVX2,

	DotGather: dotGatherAVX2,
	L2Gather:  l2GatherAVX2,

	DotU8I8:             dotU8I8AVX2Wrap,
	DotU8I8x4:           dotU8I8x4AVX2Wrap,
	DotU8I8Batch:        dotU8I8BatchAVX2,
	DotU8I8Gather:       dotU8I8GatherAVX2,
	DotU8I8Gather2:      dotU8I8Gather2AVX2,
	DotU8I8GatherAffine: dotU8I8GatherAffineAVX2Wrap,
}

func nativeImpls() []Impl {
	var s []Impl
	if hasAVX512 {
		s = append(s, avx512)
	}
	if hasAVX2 {
		s = append(s, avx2)
	}
	return s
}

func init() {
	if s := nativeImpls(); len(s) > 0 {
		use(s[0])
	}
}

func use(k Impl) {
	Dot, L2, DotBatch, L2Batch, Name = k.Dot, k.L2, k.DotBatch, k.L2Batch, k.Name
	Dot4, L2x4 = k.Dot4, k.L2x4
	DotGather, L2Gather = k.DotGather, k.L2Gather
}

// The assembly kernels. The single forms read len(a) elements of both
// slices. The four-row forms compute out[j] = f(q, r[j*n:(j+1)*n]) for
// j < 4*groups, four rows per pass, reading n elements of q (n > 0),
// 4*groups*n of r and writing 4*groups of out.

//go:noescape
func dotAVX512(a, b []float32) float32

//go:noescape
func l2AVX512(a, b []float32) float32

//go:noescape
func dot4AVX512(q, r *float32, n, groups int, out *float32)

//go:noescape
func l2x4AVX512(q, r *float32, n, groups int, out *float32)

//go:noescape
func dotAVX2(a, b []float32) float32

//go:noescape
func l2AVX2(a, b []float32) float32

//go:noescape
func dot4AVX2(q, r *float32, n, groups int, out *float32)

//go:noescape
func l2x4AVX2(q, r *float32, n, groups int, out *float32)

// batch4 runs a four-row kernel over the rows four at a time and the
// single-row kernel over the last len(out)%4.
func batch4(q, rows, out []float32,
	four func(q, r *float32, n, groups int, out *float32),
	one func(a, b []float32) float32) {
	d := len(q)
	if d == 0 {
		clear(out)
		return
	}
	rows = rows[:d*len(out)]
	g := len(out) / 4
	if g > 0 {
		four(&q[0], &rows[0], d, g, &out[0])
	}
	for i := 4 * g; i < len(out); i++ {
		out[i] = one(q, rows[i*d:(i+1)*d])
	}
}

func dotBatchAVX512(q, rows, out []float32) { batch4(q, rows, out, dot4AVX512, dotAVX512) }
func l2BatchAVX512(q, rows, out []float32)  { batch4(q, rows, out, l2x4AVX512, l2AVX512) }
func dotBatchAVX2(q, rows, out []float32)   { batch4(q, rows, out, dot4AVX2, dotAVX2) }
func l2BatchAVX2(q, rows, out []float32)    { batch4(q, rows, out, l2x4AVX2, l2AVX2) }

// The gather kernels: out[j] = f(q, row j) for four rows a, b, c, d
// anywhere in memory, reading n elements of each (n > 0).

//go:noescape
func dotGather4AVX512(q, a, b, c, d *float32, n int, out *float32)

//go:noescape
func l2Gather4AVX512(q, a, b, c, d *float32, n int, out *float32)

//go:noescape
func dotGather4AVX2(q, a, b, c, d *float32, n int, out *float32)

//go:noescape
func l2Gather4AVX2(q, a, b, c, d *float32, n int, out *float32)

// The wrappers check that the four rows hold len(q) elements and call the
// assembly directly (through a func value, out would escape).

func dot4GatherAVX512(q, a, b, c, d []float32) (out [4]float32) {
	if n := len(q); n > 0 {
		a, b, c, d = a[:n], b[:n], c[:n], d[:n]
		dotGather4AVX512(&q[0], &a[0], &b[0], &c[0], &d[0], n, &out[0])
	}
	return out
}

func l2x4GatherAVX512(q, a, b, c, d []float32) (out [4]float32) {
	if n := len(q); n > 0 {
		a, b, c, d = a[:n], b[:n], c[:n], d[:n]
		l2Gather4AVX512(&q[0], &a[0], &b[0], &c[0], &d[0], n, &out[0])
	}
	return out
}

func dot4GatherAVX2(q, a, b, c, d []float32) (out [4]float32) {
	if n := len(q); n > 0 {
		a, b, c, d = a[:n], b[:n], c[:n], d[:n]
		dotGather4AVX2(&q[0], &a[0], &b[0], &c[0], &d[0], n, &out[0])
	}
	return out
}

func l2x4GatherAVX2(q, a, b, c, d []float32) (out [4]float32) {
	if n := len(q); n > 0 {
		a, b, c, d = a[:n], b[:n], c[:n], d[:n]
		l2Gather4AVX2(&q[0], &a[0], &b[0], &c[0], &d[0], n, &out[0])
	}
	return out
}
