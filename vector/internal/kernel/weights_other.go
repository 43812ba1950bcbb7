//go:build !amd64 || purego

package kernel

// WeightSums is the selected kernel of the sums of a query's weights.
func WeightSums(v, lo, step []float32) (base, wmax, half, sq float32) {
	return WeightSumsGeneric(v, lo, step)
}

// RoundWeights is the selected kernel that rounds a query's weights.
func RoundWeights(v, step []float32, inv, alpha float32, out []int8) (below, above float32) {
	return RoundWeightsGeneric(v, step, inv, alpha, out)
}
