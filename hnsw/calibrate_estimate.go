// This file holds a calibration's estimate of the recall at one beam
// width: from the recalls of its sample's queries, with its standard
// error, and whether it meets the target.

package hnsw

import "math"

// RecallSlack is how far below the target the recall of real queries may
// be, at 95% confidence, at the beam width a calibration chooses: see
// [Calibration.Ef].
const RecallSlack = 0.01

// confidenceZ is the normal quantile of a one-sided 95% bound.
const confidenceZ = 1.645

// estimate is the recall a calibration measured at one beam width, as an
// estimate of the recall of real queries, and its standard error.
type estimate struct {
	recall, stdErr float64
}

// meets reports whether e reaches target: its recall does, and so does its
// one-sided 95% lower bound, less RecallSlack. The bound binds only when
// the standard error is above RecallSlack/confidenceZ, about 0.006: a
// sample of a few dozen queries, whose recall at the first beam width that
// happens to reach the target is more often high by chance than low. It
// does not cover the bias of held-out vectors as a proxy for real queries
// (see blend), which no sample of them shows.
func (e estimate) meets(target float64) bool {
	return e.recall >= target && e.recall-confidenceZ*e.stdErr >= target-RecallSlack
}

// sampleEstimate is the mean of the per-query recalls rs and its standard
// error, the per-query variance at least binomialFloor.
func sampleEstimate(rs []float64, k int) estimate {
	p, _ := meanVar(rs, 0)
	m, v := meanVar(rs, binomialFloor(p, k))
	return estimate{m, math.Sqrt(v / float64(max(1, len(rs))))}
}

// binomialFloor is the per-query variance of the recall@k of k independent
// draws at recall p, p(1−p)/k: a per-query variance below it is raised to
// it, so that a few real queries that all score 1 do not pass for an
// exact estimate.
func binomialFloor(p float64, k int) float64 {
	return p * (1 - p) / float64(max(1, k))
}

// blend is the recall of a mixed sample: the means of the real queries'
// recalls and of the held-out vectors', weighted inversely to each mean's
// mean squared error as an estimate of the real queries' recall. The real
// mean's is its variance, V_r = s_r²/n_r; the held-out mean's is its
// variance plus its squared bias, V_h = s_h²/n_h + b², with b² estimated
// as what is left of the squared gap between the means once both
// variances are taken off (never below 0). The weight of the real mean is
// V_h/(V_r+V_h): a handful of real queries count little beside held-out
// vectors that agree with them, and much beside ones that do not. The
// blend's own mean squared error, V_r·V_h/(V_r+V_h), is its standard
// error squared.
//
// Measured on two real sets with 50 real queries (over ten random
// halves of their query files): on bge-m3 at 0.95, held-out vectors alone
// are easier than the real queries and the unweighted mixed sample chose
// ef 17 every time, reaching 0.942 ± 0.010; the 50 real queries alone
// spread from ef 16 to 20 (0.946 ± 0.015). On Cohere at 0.99, held-out
// vectors are harder: the unweighted mixed sample chose ef 22 where 15.8
// sufficed.
func blend(real, held []float64, k int) estimate {
	if len(real) == 0 || len(held) == 0 {
		return sampleEstimate(append(real, held...), k)
	}
	all := append(append([]float64(nil), real...), held...)
	pooled, _ := meanVar(all, 0)
	floor := binomialFloor(pooled, k)
	mr, vr := meanVar(real, floor)
	mh, vh := meanVar(held, floor)
	Vr, Vh := vr/float64(len(real)), vh/float64(len(held))
	gap := mr - mh
	Vh += max(0, gap*gap-Vr-Vh)
	if Vr+Vh == 0 {
		return estimate{mr, 0}
	}
	w := Vh / (Vr + Vh)
	return estimate{w*mr + (1-w)*mh, math.Sqrt(Vr * Vh / (Vr + Vh))}
}

// meanVar returns the mean of xs and their sample variance, at least
// floor.
func meanVar(xs []float64, floor float64) (mean, variance float64) {
	if len(xs) == 0 {
		return 1, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			variance += (x - mean) * (x - mean)
		}
		variance /= float64(len(xs) - 1)
	}
	return mean, max(variance, floor)
}
