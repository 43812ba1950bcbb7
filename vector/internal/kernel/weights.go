package kernel

import "math"

// The kernels that prepare a query for int8 codes (package vector/quant):
// its weights wⱼ = vⱼ·sⱼ (s the codes' steps) and the sums their scale
// and error bounds are made of, in float32. Each weight is the one
// product v[j]*step[j], the same in both kernels and in every
// implementation, so that the largest of them, scaled by inv, rounds to
// at most the bound it was scaled to.
//
//	WeightSums(v, lo, step)      Σ v·lo, max |w|, Σ |w|, Σ w², in any order of addition;
//	                             lo and step hold at least len(v) elements
//	RoundWeights(v, step, inv, alpha, out)
//	                             out[j] = w rounded to even of v[j]*step[j]*inv,
//	                             as int8 (|v[j]*step[j]*inv| < 127.5), and
//	                             returns Σ max(0, w − out[j]·alpha) and
//	                             Σ max(0, out[j]·alpha − w) over j

// WeightSumsGeneric is WeightSums in four interleaved parts.
func WeightSumsGeneric(v, lo, step []float32) (base, wmax, half, sq float32) {
	lo, step = lo[:len(v)], step[:len(v)]
	var b, h, s [4]float32
	var m float32
	for j, x := range v {
		a := abs32(x * step[j])
		b[j&3] += x * lo[j]
		m = max(m, a)
		h[j&3] += a
		s[j&3] += a * a
	}
	return (b[0] + b[1]) + (b[2] + b[3]), m, (h[0] + h[1]) + (h[2] + h[3]), (s[0] + s[1]) + (s[2] + s[3])
}

// RoundWeightsGeneric is RoundWeights.
func RoundWeightsGeneric(v, step []float32, inv, alpha float32, out []int8) (below, above float32) {
	step, out = step[:len(v)], out[:len(v)]
	var b, a [4]float32
	for j, x := range v {
		w := x * step[j]
		r := float32(math.RoundToEven(float64(w * inv)))
		out[j] = int8(r)
		d := w - float32(r*alpha)
		b[j&3] += max(0, d)
		a[j&3] += max(0, -d)
	}
	return (b[0] + b[1]) + (b[2] + b[3]), (a[0] + a[1]) + (a[2] + a[3])
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
