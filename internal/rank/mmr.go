// This file holds maximal marginal relevance.
package rank

import (
	"fmt"
	"math"

	"github.com/cairndb/cairn/vector"
)

// MMR picks up to n of the candidates by maximal marginal relevance
// (Carbonell and Goldstein, SIGIR 1998) and returns their indices in the
// order picked. Each pick is the candidate that maximises
//
//	lambda·relevance[i] − (1 − lambda)·max over picked j of sim(i, j)
//
// (just lambda·relevance[i] for the first): lambda = 1 is the relevance
// order, lambda = 0 only diversity after the most relevant. Ties go to
// the smaller index, so candidates given best first keep that order where
// nothing tells them apart. sim(i, j) is the similarity of two candidates
// on the scale of relevance (cosine similarity for both, typically); it is
// called at most n·len(relevance) times.
//
// It returns an error wrapping [vector.ErrInvalidOptions] for lambda
// outside [0, 1] or NaN, n < 1, or a relevance that is NaN.
func MMR(relevance []float64, n int, lambda float64, sim func(i, j int) float64) ([]int, error) {
	if !(lambda >= 0 && lambda <= 1) {
		return nil, fmt.Errorf("rank: mmr: %w: lambda = %v, want 0 ≤ lambda ≤ 1", vector.ErrInvalidOptions, lambda)
	}
	if n < 1 {
		return nil, fmt.Errorf("rank: mmr: %w: n = %d, want n ≥ 1", vector.ErrInvalidOptions, n)
	}
	for i, r := range relevance {
		if math.IsNaN(r) {
			return nil, fmt.Errorf("rank: mmr: %w: relevance %d is NaN", vector.ErrInvalidOptions, i)
		}
	}
	m := len(relevance)
	n = min(n, m)
	picked := make([]int, 0, n)
	taken := make([]bool, m)
	// closest[i] is the largest similarity of candidate i to one picked.
	closest := make([]float64, m)
	for i := range closest {
		closest[i] = math.Inf(-1)
	}
	for len(picked) < n {
		best, bestScore := -1, math.Inf(-1)
		for i := range m {
			if taken[i] {
				continue
			}
			s := lambda * relevance[i]
			if len(picked) > 0 {
				s -= (1 - lambda) * closest[i]
			}
			if best < 0 || s > bestScore {
				best, bestScore = i, s
			}
		}
		picked = append(picked, best)
		taken[best] = true
		for i := range m {
			if !taken[i] {
				closest[i] = max(closest[i], sim(i, best))
			}
		}
	}
	return picked, nil
}
