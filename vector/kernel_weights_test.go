package vector_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector/internal/kernel"
)

// TestWeightKernels checks the selected kernels that prepare a query for
// int8 codes against the generic ones: the largest weight and every
// rounded weight exactly, the sums within float32 rounding, and no
// weight scaled to 64 rounding past it.
func TestWeightKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range kernelLengths {
		v, lo, step := make([]float32, n), make([]float32, n+3), make([]float32, n+3)
		for j := range v {
			v[j] = float32(r.NormFloat64())
			lo[j] = float32(r.NormFloat64())
			step[j] = float32(r.Float64() * 0.1)
		}
		if n > 5 {
			v[5] = 0 // a zero weight
		}
		b, w, h, s := kernel.WeightSums(v, lo, step)
		gb, gw, gh, gs := kernel.WeightSumsGeneric(v, lo, step)
		if w != gw {
			t.Errorf("n=%d: WeightSums max %v, generic %v", n, w, gw)
		}
		var mag float64 // Σ|v·lo|, the scale of Σ v·lo's rounding
		for j := range v {
			mag += math.Abs(float64(v[j]) * float64(lo[j]))
		}
		if math.Abs(float64(b)-float64(gb)) > 1e-6*float64(n+1)*mag || !near(h, gh, n) || !near(s, gs, n) {
			t.Errorf("n=%d: WeightSums sums %v %v %v, generic %v %v %v", n, b, h, s, gb, gh, gs)
		}
		if w == 0 {
			continue
		}
		inv, alpha := 64/w, w/64
		out, gout := make([]int8, n+1), make([]int8, n+1)
		out[n], gout[n] = 99, 99
		below, above := kernel.RoundWeights(v, step, inv, alpha, out)
		gbelow, gabove := kernel.RoundWeightsGeneric(v, step, inv, alpha, gout)
		for j := range out {
			if out[j] != gout[j] {
				t.Fatalf("n=%d: RoundWeights[%d] = %d, generic %d", n, j, out[j], gout[j])
			}
			if j < n && (out[j] > 64 || out[j] < -64) {
				t.Fatalf("n=%d: weight %d rounded to %d", n, j, out[j])
			}
		}
		if out[n] != 99 {
			t.Errorf("n=%d: RoundWeights wrote past its length", n)
		}
		if !near(below, gbelow, n) || !near(above, gabove, n) {
			t.Errorf("n=%d: RoundWeights below %v above %v, generic %v %v", n, below, above, gbelow, gabove)
		}
	}
}

// near reports whether two float32 sums of n non-negative terms, taken in
// different orders, agree within their rounding.
func near(a, b float32, n int) bool {
	d := math.Abs(float64(a) - float64(b))
	return d <= 1e-6*float64(n+1)*max(math.Abs(float64(a)), math.Abs(float64(b)), 1e-3)
}
