//go:build amd64 && !purego

package kernel

//go:noescape
func weightSumsAVX512(v, lo, step *float32, n int, out *float32)

//go:noescape
func roundWeightsAVX512(v, step *float32, n int, inv, alpha float32, out *int8) (below, above float32)

// WeightSums is the selected kernel of the sums of a query's weights (see
// weights.go).
func WeightSums(v, lo, step []float32) (base, wmax, half, sq float32) {
	n := len(v)
	m := n &^ 15
	if !hasAVX512 || m == 0 {
		return WeightSumsGeneric(v, lo, step)
	}
	lo, step = lo[:n], step[:n]
	var out [4]float32
	weightSumsAVX512(&v[0], &lo[0], &step[0], m, &out[0])
	base, wmax, half, sq = out[0], out[1], out[2], out[3]
	if m < n {
		b, w, h, s := WeightSumsGeneric(v[m:], lo[m:], step[m:])
		base, wmax, half, sq = base+b, max(wmax, w), half+h, sq+s
	}
	return base, wmax, half, sq
}

// RoundWeights is the selected kernel that rounds a query's weights (see
// weights.go).
func RoundWeights(v, step []float32, inv, alpha float32, out []int8) (below, above float32) {
	n := len(v)
	m := n &^ 15
	if !hasAVX512 || m == 0 {
		return RoundWeightsGeneric(v, step, inv, alpha, out)
	}
	step, out = step[:n], out[:n]
	below, above = roundWeightsAVX512(&v[0], &step[0], m, inv, alpha, &out[0])
	if m < n {
		b, a := RoundWeightsGeneric(v[m:], step[m:], inv, alpha, out[m:])
		below, above = below+b, above+a
	}
	return below, above
}
