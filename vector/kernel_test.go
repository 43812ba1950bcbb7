package vector_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/internal/kernel"
)

// kernelLengths are the awkward lengths every kernel is checked at: empty,
// shorter than one register, one off either side of the 4-, 8-, 16-, 32- and
// 64-element steps of the SIMD loops, and common embedding sizes.
var kernelLengths = []int{0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 767, 768, 769, 800, 1536}

// gammaF32 returns γₖ = k·u/(1−k·u) for float32's unit roundoff u = 2⁻²⁴.
//
// Tolerance. A float32 sum of n products, each rounded once (or not at all
// under a fused multiply-add), added in any order, is within
// γₙ·Σ|aᵢbᵢ| of the exact sum (Higham, Accuracy and Stability of Numerical
// Algorithms, §3.1 and §4.2). The bound holds for every summation order, so
// it covers our kernels, whose several accumulators add in a different
// order from the portable loop and from each other. For L2 each difference
// is rounded once more, so Σ(aᵢ−bᵢ)² gets γₙ₊₂. The bound is relative to
// Σ|terms|, not to the result, because cancellation can make the relative
// error of a dot product arbitrarily large; it is also the tolerance the
// fuzz targets use. Exactness is checked separately, on small integers.
func gammaF32(k int) float64 {
	const u = 0x1p-24
	return float64(k) * u / (1 - float64(k)*u)
}

// refDot returns a·b and Σ|aᵢbᵢ| in float64.
func refDot(a, b []float32) (dot, abs float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		abs += math.Abs(p)
	}
	return dot, abs
}

// refL2 returns Σ(aᵢ−bᵢ)² in float64 (it is its own Σ|terms|).
func refL2(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}

// underflowSlack is an absolute slack for products that underflow below float32's
// smallest normal; random data in the tests never comes near it.
const underflowSlack = 0x1p-126

func checkDot(t *testing.T, name string, got float32, a, b []float32) {
	t.Helper()
	want, abs := refDot(a, b)
	tol := gammaF32(len(a))*abs + float64(len(a))*underflowSlack
	if d := math.Abs(float64(got) - want); !(d <= tol) {
		t.Errorf("%s: Dot(n=%d) = %v, want %v ± %.3g (off by %.3g)", name, len(a), got, want, tol, d)
	}
}

func checkL2(t *testing.T, name string, got float32, a, b []float32) {
	t.Helper()
	want := refL2(a, b)
	tol := gammaF32(len(a)+2)*want + float64(len(a))*underflowSlack
	if d := math.Abs(float64(got) - want); !(d <= tol) {
		t.Errorf("%s: L2(n=%d) = %v, want %v ± %.3g (off by %.3g)", name, len(a), got, want, tol, d)
	}
}

// nanPadded returns a slice of n values from gen at element offset off of a
// fresh buffer whose other elements are NaN: a kernel that reads one
// element before or after its slice returns NaN.
func nanPadded(n, off int, gen func() float32) []float32 {
	buf := make([]float32, off+n+32)
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	s := buf[off : off+n : off+n]
	for i := range s {
		s[i] = gen()
	}
	return s
}

func uniformGen(r *rand.Rand, scale float32) func() float32 {
	return func() float32 { return (2*r.Float32() - 1) * scale }
}

// smallInts draws integers in [-8, 8]: products are at most 64 and sums of
// up to 2¹⁸ of them are exact in float32, so every kernel must return the
// exact integer whatever its order of addition.
func smallInts(r *rand.Rand) func() float32 {
	return func() float32 { return float32(r.IntN(17) - 8) }
}

func TestKernelsAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range kernel.Impls() {
		for _, n := range kernelLengths {
			for off := range 4 {
				for _, scale := range []float32{1, 1e-3, 1e17} {
					a := nanPadded(n, off, uniformGen(r, scale))
					b := nanPadded(n, 3-off, uniformGen(r, scale))
					checkDot(t, k.Name, k.Dot(a, b), a, b)
					checkL2(t, k.Name, k.L2(a, b), a, b)
				}
			}
		}
	}
}

func TestKernelsExactOnIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range kernel.Impls() {
		for _, n := range kernelLengths {
			for off := range 4 {
				a := nanPadded(n, off, smallInts(r))
				b := nanPadded(n, (off+1)%4, smallInts(r))
				dot, _ := refDot(a, b)
				if got := k.Dot(a, b); float64(got) != dot {
					t.Errorf("%s: Dot(n=%d, off=%d) = %v, want exactly %v", k.Name, n, off, got, dot)
				}
				if got, want := k.L2(a, b), refL2(a, b); float64(got) != want {
					t.Errorf("%s: L2(n=%d, off=%d) = %v, want exactly %v", k.Name, n, off, got, want)
				}
			}
		}
	}
}

// TestKernelsOverflow checks that a sum beyond float32's range comes out
// as +Inf from every kernel, the same as from float32 arithmetic by hand,
// rather than as NaN or a wrapped value.
func TestKernelsOverflow(t *testing.T) {
	for _, k := range kernel.Impls() {
		for _, n := range []int{1, 17, 768} {
			a := make([]float32, n)
			b := make([]float32, n)
			for i := range a {
				a[i], b[i] = 1e30, -1e30
			}
			if got := k.Dot(a, a); !math.IsInf(float64(got), 1) {
				t.Errorf("%s: Dot of 1e30s (n=%d) = %v, want +Inf", k.Name, n, got)
			}
			if got := k.Dot(a, b); !math.IsInf(float64(got), -1) {
				t.Errorf("%s: Dot of ±1e30s (n=%d) = %v, want -Inf", k.Name, n, got)
			}
			if got := k.L2(a, b); !math.IsInf(float64(got), 1) {
				t.Errorf("%s: L2 of ±1e30s (n=%d) = %v, want +Inf", k.Name, n, got)
			}
		}
	}
}

// TestKernelBatch checks the batch forms against the reference and, on
// small integers, bit for bit against the single forms, for row counts on
// either side of the four-row step, at unaligned offsets, with NaN around
// every input and in out beforehand.
func TestKernelBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range kernel.Impls() {
		for _, dim := range kernelLengths {
			for _, rows := range []int{0, 1, 3, 4, 5, 8, 9} {
				for _, ints := range []bool{false, true} {
					gen := uniformGen(r, 1)
					if ints {
						gen = smallInts(r)
					}
					off := (dim + rows) % 4
					q := nanPadded(dim, off, gen)
					m := nanPadded(dim*rows, 3-off, gen)
					dots := nanPadded(rows, off, func() float32 { return float32(math.NaN()) })
					l2s := nanPadded(rows, 3-off, func() float32 { return float32(math.NaN()) })
					k.DotBatch(q, m, dots)
					k.L2Batch(q, m, l2s)
					for i := range rows {
						row := m[i*dim : (i+1)*dim]
						checkDot(t, k.Name+" DotBatch", dots[i], q, row)
						checkL2(t, k.Name+" L2Batch", l2s[i], q, row)
						if ints && (dots[i] != k.Dot(q, row) || l2s[i] != k.L2(q, row)) {
							t.Errorf("%s: dim %d row %d of %d: batch (%v, %v) != single (%v, %v)",
								k.Name, dim, i, rows, dots[i], l2s[i], k.Dot(q, row), k.L2(q, row))
						}
					}
				}
			}
		}
	}
}

// TestKernelGather4 checks the four-row gather forms against the
// reference and, bit for bit, against the batch forms over the same four
// rows laid out contiguously, at awkward lengths and unaligned offsets with
// NaN around every input.
func TestKernelGather4(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, k := range kernel.Impls() {
		for _, dim := range kernelLengths {
			for off := range 4 {
				for _, ints := range []bool{false, true} {
					gen := uniformGen(r, 1)
					if ints {
						gen = smallInts(r)
					}
					q := nanPadded(dim, off, gen)
					var rows [4][]float32
					m := make([]float32, 0, 4*dim)
					for j := range rows {
						rows[j] = nanPadded(dim, (off+j)%4, gen)
						m = append(m, rows[j]...)
					}
					dots := k.Dot4(q, rows[0], rows[1], rows[2], rows[3])
					l2s := k.L2x4(q, rows[0], rows[1], rows[2], rows[3])
					bd, bl := make([]float32, 4), make([]float32, 4)
					k.DotBatch(q, m, bd)
					k.L2Batch(q, m, bl)
					for j, row := range rows {
						checkDot(t, k.Name+" Dot4", dots[j], q, row)
						checkL2(t, k.Name+" L2x4", l2s[j], q, row)
						if math.Float32bits(dots[j]) != math.Float32bits(bd[j]) || math.Float32bits(l2s[j]) != math.Float32bits(bl[j]) {
							t.Errorf("%s: dim %d row %d: gather (%v, %v) != batch (%v, %v)", k.Name, dim, j, dots[j], l2s[j], bd[j], bl[j])
						}
					}
				}
			}
		}
	}
}

// TestInnerProduct4 checks the exported gather forms and their panic on
// unequal lengths.
func TestInnerProduct4(t *testing.T) {
	q := vector.Vector{1, 2, 3}
	a, b, c, d := vector.Vector{4, -5, 6}, vector.Vector{0, 0, 0}, vector.Vector{1, 2, 3}, vector.Vector{-1, -1, -1}
	if got, want := vector.InnerProduct4(q, a, b, c, d), [4]float32{12, 0, 14, -6}; got != want {
		t.Errorf("InnerProduct4 = %v, want %v", got, want)
	}
	if got, want := vector.SquaredL2x4(q, a, b, c, d), [4]float32{67, 14, 0, 4 + 9 + 16}; got != want {
		t.Errorf("SquaredL2x4 = %v, want %v", got, want)
	}
	for name, f := range map[string]func(){
		"InnerProduct4": func() { vector.InnerProduct4(q, a, b, c, d[:2]) },
		"SquaredL2x4":   func() { vector.SquaredL2x4(q, a[:2], b, c, d) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of unequal lengths did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestKernelSelected checks that the dispatched kernels are the first (the
// fastest) of those this CPU can run.
func TestKernelSelected(t *testing.T) {
	impls := kernel.Impls()
	if len(impls) == 0 || impls[len(impls)-1].Name != "generic" {
		t.Fatalf("Impls() = %v, want the generic kernels last", impls)
	}
	if got, want := vector.KernelName(), impls[0].Name; got != want {
		t.Errorf("KernelName() = %q, want %q (first of Impls)", got, want)
	}
	t.Logf("kernels: %q of %d available", vector.KernelName(), len(impls))
	a := []float32{1, 2, 3}
	b := []float32{4, -5, 6}
	if got := vector.InnerProduct(a, b); got != 12 {
		t.Errorf("InnerProduct = %v, want 12", got)
	}
	if got := vector.SquaredL2(a, b); got != 9+49+9 {
		t.Errorf("SquaredL2 = %v, want 67", got)
	}
}

// TestKernelsConcurrent runs every kernel from several goroutines at once
// (under -race in CI): they share nothing but their read-only inputs and
// must give the same bits as when run alone.
func TestKernelsConcurrent(t *testing.T) {
	const dim, rows = 769, 9
	r := rand.New(rand.NewPCG(11, 12))
	q := nanPadded(dim, 1, uniformGen(r, 1))
	m := nanPadded(dim*rows, 2, uniformGen(r, 1))
	impls := kernel.Impls()
	want := make([][]float32, len(impls))
	for i, k := range impls {
		w := make([]float32, rows)
		k.DotBatch(q, m, w)
		want[i] = append(w, k.Dot(q, m[:dim]), k.L2(q, m[:dim]))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			out := make([]float32, rows)
			for range 50 {
				for i, k := range impls {
					k.DotBatch(q, m, out)
					got := append(out, k.Dot(q, m[:dim]), k.L2(q, m[:dim]))
					for j := range got {
						if math.Float32bits(got[j]) != math.Float32bits(want[i][j]) {
							t.Errorf("%s: concurrent result %d = %v, alone %v", k.Name, j, got[j], want[i][j])
							return
						}
					}
					out = got[:rows]
				}
			}
		})
	}
	wg.Wait()
}
