package quant_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// TestBoundedQuery checks the bound BoundedQuery documents: the exact
// distance is never below estimate − m·(Slack + Norm·Residual) nor
// above estimate + m·(Rise + Norm·Residual), for
// every metric, on vectors inside the trained ranges and on vectors far
// outside them (huge components, clipped by their codes, which only the
// residual accounts for), trained on or not. And that it is tight: on
// clustered data, a few times smaller than Query.ErrorBound.
func TestBoundedQuery(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	clu := recall.Clustered(2000, 20, 256, 3)
	for _, m := range metrics {
		st := storeOf(t, 256, m, clu.Base[:1000])
		qz := trainQ(t, st)
		// Vectors not trained on, and some with a huge component.
		vs := slices.Clone(clu.Base[1000:])
		for i := 0; i < len(vs); i += 10 {
			vs[i] = slices.Clone(vs[i])
			vs[i][r.IntN(256)] = float32(40 * (2*r.IntN(2) - 1))
		}
		// Vectors a code stands for exactly (a residual of about 0), on
		// which the query's rounding is the whole error, both ways.
		for range 200 {
			g := make(vector.Vector, 256)
			for j := range g {
				lo, hi := qz.Range(j)
				g[j] = lo + float32(r.IntN(256))*(hi-lo)/255
			}
			vs = append(vs, g)
		}
		mult := float32(1)
		if m == vector.L2 {
			mult = 2
		}
		var bq quant.BoundedQuery
		var sumBound, sumPlain float64
		n := 0
		for qi, q := range clu.Queries[:20] {
			if qi%5 == 4 { // a query with a huge component of its own
				q = slices.Clone(q)
				q[r.IntN(256)] = 25
			}
			if err := qz.PrepareBounded(&bq, q); err != nil {
				t.Fatal(err)
			}
			pq, err := qz.Prepare(q)
			if err != nil {
				t.Fatal(err)
			}
			codes := make([]*byte, len(vs))
			ests := make([]float32, len(vs))
			resid := make([]float32, len(vs))
			for i, v := range vs {
				c := make([]byte, qz.GatherSpan())
				if _, err := qz.Encode(c[:qz.CodeSize()], v); err != nil {
					t.Fatal(err)
				}
				codes[i], resid[i] = &c[0], qz.Residual(v, c[:qz.CodeSize()])
			}
			bq.GatherDistances(codes, ests)
			qn := q
			if m == vector.Cosine {
				qn = slices.Clone(q)
				unit(qn)
			}
			for i, v := range vs {
				bound := mult * (bq.Slack() + bq.Norm()*resid[i])
				exact := exactDist(m, qn, v)
				if low := float64(ests[i] - bound); exact < low-1e-5*(1+math.Abs(exact)) {
					t.Fatalf("%v query %d vector %d: exact %v below the bound %v (estimate %v, slack %v, residual %v)",
						m, qi, i, exact, low, ests[i], bq.Slack(), resid[i])
				}
				above := mult * (bq.Rise() + bq.Norm()*resid[i])
				if high := float64(ests[i] + above); exact > high+1e-5*(1+math.Abs(exact)) {
					t.Fatalf("%v query %d vector %d: exact %v above the bound %v (estimate %v, rise %v, residual %v)",
						m, qi, i, exact, high, ests[i], bq.Rise(), resid[i])
				}
				if i%10 != 0 && qi%5 != 4 {
					sumBound += float64(bound)
					sumPlain += float64(pq.ErrorBound())
					n++
				}
			}
		}
		if sumBound > sumPlain/3 {
			t.Errorf("%v: mean bound %.4g, not a third of Query.ErrorBound's %.4g", m, sumBound/float64(n), sumPlain/float64(n))
		}
		t.Logf("%v: mean bound %.4g, Query.ErrorBound %.4g", m, sumBound/float64(n), sumPlain/float64(n))
	}
}

// TestPrepareBoundedRefuses checks that PrepareBounded refuses what the
// float path refuses, with the same errors.
func TestPrepareBoundedRefuses(t *testing.T) {
	st := storeOf(t, 8, vector.Cosine, randVecs(rand.New(rand.NewPCG(1, 1)), 100, 8))
	qz := trainQ(t, st)
	var bq quant.BoundedQuery
	nan := make(vector.Vector, 8)
	nan[3] = float32(math.NaN())
	for _, c := range []struct {
		v    vector.Vector
		want error
	}{
		{make(vector.Vector, 7), vector.ErrDimensionMismatch},
		{nan, vector.ErrNonFinite},
		{make(vector.Vector, 8), vector.ErrZeroVector},
	} {
		if err := qz.PrepareBounded(&bq, c.v); !errors.Is(err, c.want) {
			t.Errorf("PrepareBounded(%v) = %v, want %v", c.v, err, c.want)
		}
	}
}

func trainQ(t *testing.T, st vector.Store) *quant.Quantizer {
	t.Helper()
	return train(t, st, nil)
}
