// This file checks a calibration's recall estimates: blend, of a mixed
// sample, sampleEstimate, and when an estimate meets a target.

package hnsw

import (
	"math"
	"testing"
)

// repeat returns n copies of x.
func repeat(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// spread returns n recalls in tenths with mean about m: a mix of the two
// tenths around it.
func spread(m float64, n int) []float64 {
	lo := math.Floor(m*10) / 10
	out := make([]float64, n)
	for i := range out {
		out[i] = lo
		if float64(i%10)/10 < (m-lo)*10 {
			out[i] = lo + 0.1
		}
	}
	return out
}

// halves returns n recalls, half m−d and half m+d.
func halves(m, d float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = m - d
		if i%2 == 1 {
			out[i] = m + d
		}
	}
	return out
}

func TestBlend(t *testing.T) {
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
	// Held-out vectors that agree with the real queries steady the
	// estimate: it is close to both.
	if got := blend(spread(0.95, 50), spread(0.95, 350), 10).recall; !near(got, 0.95, 0.005) {
		t.Errorf("agreeing groups: blend = %.4f, want about 0.95", got)
	}
	// Held-out vectors far from the real queries (a gap far beyond the
	// errors of both means) are a biased proxy: the estimate follows the
	// real queries.
	if got := blend(spread(0.90, 50), spread(0.99, 350), 10).recall; !near(got, 0.90, 0.01) {
		t.Errorf("held-out far easier: blend = %.4f, want near the real 0.90", got)
	}
	if got := blend(spread(0.99, 50), spread(0.90, 350), 10).recall; !near(got, 0.99, 0.01) {
		t.Errorf("held-out far harder: blend = %.4f, want near the real 0.99", got)
	}
	// Two real queries that both scored 1 are no exact estimate: beside
	// many held-out vectors at 0.95 the blend stays near those.
	if got := blend(repeat(1, 2), spread(0.95, 398), 10).recall; got >= 0.97 || got < 0.95 {
		t.Errorf("two perfect real queries: blend = %.4f, want near the held-out 0.95", got)
	}
	// Without one of the groups, the mean of the other.
	if got := blend(nil, spread(0.9, 100), 10).recall; !near(got, 0.9, 1e-9) {
		t.Errorf("held-out only: blend = %.4f, want 0.9", got)
	}
	if got := blend(spread(0.8, 100), nil, 10).recall; !near(got, 0.8, 1e-9) {
		t.Errorf("real only: blend = %.4f, want 0.8", got)
	}
	// The estimate always lies between the two means.
	for _, tc := range [][2]float64{{0.9, 0.93}, {0.97, 0.92}, {0.5, 0.6}} {
		got := blend(spread(tc[0], 40), spread(tc[1], 360), 10).recall
		if got < min(tc[0], tc[1])-1e-9 || got > max(tc[0], tc[1])+1e-9 {
			t.Errorf("blend of means %v = %.4f, outside them", tc, got)
		}
	}
}

func TestSampleEstimate(t *testing.T) {
	// 400 queries, half at 0.8 and half at 1: the standard error is s/√n,
	// s² the sample variance of the per-query recalls.
	e := sampleEstimate(halves(0.9, 0.1, 400), 10)
	want := math.Sqrt(0.01 * 400 / 399 / 400)
	if math.Abs(e.recall-0.9) > 1e-9 || math.Abs(e.stdErr-want) > 1e-9 {
		t.Errorf("sampleEstimate = %+v, want recall 0.9, stdErr %.6f", e, want)
	}
	// Queries that all scored the same have no spread of their own: the
	// floor of k draws at their recall holds, and 1 is exact.
	e = sampleEstimate(repeat(0.9, 50), 10)
	if want := math.Sqrt(0.9 * 0.1 / 10 / 50); math.Abs(e.stdErr-want) > 1e-9 {
		t.Errorf("equal recalls: stdErr %.6f, want the floor's %.6f", e.stdErr, want)
	}
	if e := sampleEstimate(repeat(1, 50), 10); e.recall != 1 || e.stdErr != 0 {
		t.Errorf("all perfect: %+v, want recall 1, stdErr 0", e)
	}
	// The blend's error is below that of either group alone where they
	// agree, and about the real queries' where they do not.
	real, held := halves(0.95, 0.05, 50), halves(0.95, 0.05, 350)
	b, r := blend(real, held, 10), sampleEstimate(real, 10)
	if b.stdErr >= r.stdErr || b.stdErr >= sampleEstimate(held, 10).stdErr {
		t.Errorf("agreeing groups: blend stdErr %.4f, real alone %.4f", b.stdErr, r.stdErr)
	}
	real = halves(0.9, 0.1, 50)
	b, r = blend(real, halves(0.99, 0.01, 350), 10), sampleEstimate(real, 10)
	if b.stdErr < 0.9*r.stdErr || b.stdErr > r.stdErr {
		t.Errorf("disagreeing groups: blend stdErr %.4f, want about the real queries' %.4f", b.stdErr, r.stdErr)
	}
}

func TestEstimateMeets(t *testing.T) {
	for _, tc := range []struct {
		e      estimate
		target float64
		want   bool
	}{
		{estimate{0.95, 0}, 0.95, true},
		{estimate{0.949, 0}, 0.95, false},
		// Hundreds of queries: a bound within the slack.
		{estimate{0.951, 0.004}, 0.95, true},
		// A few dozen: the estimate reaches the target, its bound falls
		// more than the slack short of it.
		{estimate{0.951, 0.014}, 0.95, false},
		{estimate{0.965, 0.014}, 0.95, true},
	} {
		if got := tc.e.meets(tc.target); got != tc.want {
			t.Errorf("%+v meets %.3f = %v, want %v", tc.e, tc.target, got, tc.want)
		}
	}
}
