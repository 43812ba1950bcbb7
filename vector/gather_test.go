// This file holds the tests of the pointer-gather kernels: against the
// four-row gather kernels bit for bit and against the float64 reference,
// at awkward lengths and row counts, and a fuzz target.
package vector_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/internal/kernel"
)

// checkGather scores q against rows with k's pointer-gather kernels and
// checks each result against the four-row kernels on the same groups of
// rows (the last group padded with its last row) bit for bit, and, when
// ref, against the float64 reference.
func checkGather(t *testing.T, k kernel.Impl, q []float32, rows [][]float32, ref bool) {
	t.Helper()
	ptrs := make([]*float32, len(rows))
	for i, r := range rows {
		ptrs[i] = unsafe.SliceData(r)
	}
	dots, l2s := make([]float32, len(rows)+1), make([]float32, len(rows)+1)
	dots[len(rows)], l2s[len(rows)] = 7, 7 // past the rows: left alone
	k.DotGather(q, ptrs, dots)
	k.L2Gather(q, ptrs, l2s)
	if dots[len(rows)] != 7 || l2s[len(rows)] != 7 {
		t.Errorf("%s: %d rows: wrote past the rows", k.Name, len(rows))
	}
	for g := 0; g < len(rows); g += 4 {
		var four [4][]float32
		for j := range four {
			four[j] = rows[min(g+j, len(rows)-1)][:len(q)]
		}
		d4 := k.Dot4(q, four[0], four[1], four[2], four[3])
		l4 := k.L2x4(q, four[0], four[1], four[2], four[3])
		for j := 0; j < 4 && g+j < len(rows); j++ {
			i := g + j
			if math.Float32bits(dots[i]) != math.Float32bits(d4[j]) || math.Float32bits(l2s[i]) != math.Float32bits(l4[j]) {
				t.Errorf("%s: dim %d, %d rows, row %d: gather (%v, %v) != four-row (%v, %v)", k.Name, len(q), len(rows), i, dots[i], l2s[i], d4[j], l4[j])
			}
			if ref {
				checkDot(t, k.Name+" DotGather", dots[i], q, rows[i][:len(q)])
				checkL2(t, k.Name+" L2Gather", l2s[i], q, rows[i][:len(q)])
			}
		}
	}
}

// TestKernelGather checks every kernel family's pointer-gather forms at
// the awkward lengths, 0 to 9 rows (full groups of four and every tail),
// rows at unaligned offsets with NaN around them.
func TestKernelGather(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range kernel.Impls() {
		for _, dim := range kernelLengths {
			for nrows := range 10 {
				for _, ints := range []bool{false, true} {
					gen := uniformGen(r, 1)
					if ints {
						gen = smallInts(r)
					}
					q := nanPadded(dim, nrows%4, gen)
					rows := make([][]float32, nrows)
					for j := range rows {
						rows[j] = nanPadded(dim, (nrows+j)%4, gen)
					}
					checkGather(t, k, q, rows, true)
				}
			}
		}
	}
}

// TestGatherShortOut checks the exported forms' panic when out is shorter
// than rows.
func TestGatherShortOut(t *testing.T) {
	q := vector.Vector{1, 2}
	rows := []*float32{&q[0], &q[0]}
	for name, f := range map[string]func(vector.Vector, []*float32, []float32){
		"InnerProductGather": vector.InnerProductGather,
		"SquaredL2Gather":    vector.SquaredL2Gather,
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with a short out did not panic", name)
				}
			}()
			f(q, rows, make([]float32, 1))
		}()
	}
}

// FuzzGather checks the pointer-gather kernels on fuzzed vectors: five
// rows (one group of four and a tail of one) alternating the two inputs.
func FuzzGather(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b, ok := fuzzVectors(data)
		if !ok {
			t.Skip("non-finite input")
		}
		_, abs := refDot(a, b)
		_, absAA := refDot(a, a)
		ref := fuzzComparable(abs) && fuzzComparable(absAA) && fuzzComparable(refL2(a, b))
		rows := [][]float32{b, a, b, a, b}
		for _, k := range kernel.Impls() {
			checkGather(t, k, a, rows, ref)
		}
	})
}

func ExampleInnerProductGather() {
	q := vector.Vector{1, 2, 3}
	a, b, c := vector.Vector{1, 0, 0}, vector.Vector{0, 1, 0}, vector.Vector{1, 1, 1}
	out := make([]float32, 3)
	vector.InnerProductGather(q, []*float32{&a[0], &b[0], &c[0]}, out)
	fmt.Println(out)
	// Output: [1 2 6]
}
