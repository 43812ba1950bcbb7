// This file checks blend, the recall estimate of a mixed calibration
// sample.

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

func TestBlend(t *testing.T) {
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
	// Held-out vectors that agree with the real queries steady the
	// estimate: it is close to both.
	if got := blend(spread(0.95, 50), spread(0.95, 350), 10); !near(got, 0.95, 0.005) {
		t.Errorf("agreeing groups: blend = %.4f, want about 0.95", got)
	}
	// Held-out vectors far from the real queries (a gap far beyond the
	// errors of both means) are a biased proxy: the estimate follows the
	// real queries.
	if got := blend(spread(0.90, 50), spread(0.99, 350), 10); !near(got, 0.90, 0.01) {
		t.Errorf("held-out far easier: blend = %.4f, want near the real 0.90", got)
	}
	if got := blend(spread(0.99, 50), spread(0.90, 350), 10); !near(got, 0.99, 0.01) {
		t.Errorf("held-out far harder: blend = %.4f, want near the real 0.99", got)
	}
	// Two real queries that both scored 1 are no exact estimate: beside
	// many held-out vectors at 0.95 the blend stays near those.
	if got := blend(repeat(1, 2), spread(0.95, 398), 10); got >= 0.97 || got < 0.95 {
		t.Errorf("two perfect real queries: blend = %.4f, want near the held-out 0.95", got)
	}
	// Without one of the groups, the mean of the other.
	if got := blend(nil, spread(0.9, 100), 10); !near(got, 0.9, 1e-9) {
		t.Errorf("held-out only: blend = %.4f, want 0.9", got)
	}
	if got := blend(spread(0.8, 100), nil, 10); !near(got, 0.8, 1e-9) {
		t.Errorf("real only: blend = %.4f, want 0.8", got)
	}
	// The estimate always lies between the two means.
	for _, tc := range [][2]float64{{0.9, 0.93}, {0.97, 0.92}, {0.5, 0.6}} {
		got := blend(spread(tc[0], 40), spread(tc[1], 360), 10)
		if got < min(tc[0], tc[1])-1e-9 || got > max(tc[0], tc[1])+1e-9 {
			t.Errorf("blend of means %v = %.4f, outside them", tc, got)
		}
	}
}
