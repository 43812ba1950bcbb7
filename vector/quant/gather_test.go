// This file holds the tests of the search-side Query API: gathered
// distances against the single-code ones, the error bound against exact
// distances, and the reuse of a prepared Query.

package quant_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// TestGatherDistances checks that GatherDistances gives Distance's bits
// for codes scattered in rows of GatherSpan bytes whose bytes past the
// code are garbage, for counts on either side of the four-code step.
func TestGatherDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, m := range metrics {
		for _, dim := range []int{1, 7, 28, 32, 33, 100, 768, 769} {
			vs := randVecs(r, 40, dim)
			q := train(t, storeOf(t, dim, m, vs), nil)
			span := q.GatherSpan()
			if span < q.CodeSize() || span%32 != 0 && span != q.CodeSize() {
				t.Fatalf("dim %d: GatherSpan %d, CodeSize %d", dim, span, q.CodeSize())
			}
			rows := make([][]byte, len(vs))
			ptrs := make([]*byte, len(vs))
			for i, v := range vs {
				rows[i] = make([]byte, span+i%5)
				for j := range rows[i] {
					rows[i][j] = byte(r.IntN(256))
				}
				copy(rows[i], encode(t, q, v))
				ptrs[i] = &rows[i][0]
			}
			p, err := q.Prepare(vs[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{0, 1, 3, 4, 5, 9, 40} {
				out := make([]float32, n+1)
				out[n] = -3
				p.GatherDistances(ptrs[:n], out)
				for i := range n {
					if want := p.Distance(rows[i][:q.CodeSize()]); out[i] != want {
						t.Fatalf("%v dim %d: GatherDistances[%d] of %d = %v, Distance %v", m, dim, i, n, out[i], want)
					}
				}
				if out[n] != -3 {
					t.Fatalf("%v dim %d: GatherDistances of %d wrote out[%d]", m, dim, n, n)
				}
			}
		}
	}
}

// TestErrorBound checks that no estimate exceeds the exact distance by
// more than ErrorBound, on vectors within the trained ranges (the clip
// off), and that the bound is not vacuous: below the spread of the
// distances.
func TestErrorBound(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, m := range metrics {
		for _, dim := range []int{3, 100, 768} {
			vs := randVecs(r, 500, dim)
			q := train(t, storeOf(t, dim, m, vs), &quant.TrainOptions{Clip: -1})
			codes := make([][]byte, len(vs))
			for i, v := range vs {
				codes[i] = encode(t, q, v)
			}
			for _, qv := range randVecs(r, 10, dim) {
				p, err := q.Prepare(qv)
				if err != nil {
					t.Fatal(err)
				}
				b := float64(p.ErrorBound())
				qn := slicesClone(qv)
				if m == vector.Cosine {
					unit(qn)
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for i, v := range vs {
					exact := exactDist(m, qn, v)
					lo, hi = min(lo, exact), max(hi, exact)
					est := float64(p.Distance(codes[i]))
					if slack := 1e-5 * (1 + math.Abs(exact)); exact < est-b-slack {
						t.Fatalf("%v dim %d: exact %v below estimate %v − bound %v", m, dim, exact, est, b)
					}
				}
				if b <= 0 || b >= (hi-lo)/2 {
					t.Errorf("%v dim %d: bound %v against distances in [%v, %v]", m, dim, b, lo, hi)
				}
			}
		}
	}
}

// TestPrepareInto checks that a reused Query gives the distances of a
// fresh one, from a longer query to a shorter one and back, and that a
// refused vector leaves it unchanged.
func TestPrepareInto(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	var reused quant.Query
	for _, dim := range []int{768, 33, 100} {
		vs := randVecs(r, 50, dim)
		q := train(t, storeOf(t, dim, vector.L2, vs), nil)
		for _, qv := range vs[:3] {
			fresh, err := q.Prepare(qv)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.PrepareInto(&reused, qv); err != nil {
				t.Fatal(err)
			}
			bad := slicesClone(qv)
			bad[0] = float32(math.NaN())
			if err := q.PrepareInto(&reused, bad); err == nil {
				t.Fatalf("dim %d: PrepareInto accepted NaN", dim)
			}
			for _, v := range vs {
				c := encode(t, q, v)
				if a, b := reused.Distance(c), fresh.Distance(c); a != b || reused.ErrorBound() != fresh.ErrorBound() {
					t.Fatalf("dim %d: reused Query gives %v, fresh %v", dim, a, b)
				}
			}
		}
	}
}

func slicesClone(v vector.Vector) vector.Vector { return append(vector.Vector(nil), v...) }

// exactDist is the metric's distance in float64 (a unit q under Cosine).
func exactDist(m vector.Metric, q, v vector.Vector) float64 {
	var ip, vv, l2 float64
	for j := range q {
		ip += float64(q[j]) * float64(v[j])
		vv += float64(v[j]) * float64(v[j])
		d := float64(q[j]) - float64(v[j])
		l2 += d * d
	}
	switch m {
	case vector.Cosine:
		return 1 - ip/math.Sqrt(vv)
	case vector.Dot:
		return -ip
	}
	return l2
}

// TestNoiseSD checks that NoiseSD is a floor of the size of an
// estimate's error: over vectors spread uniformly over the trained ranges,
// the errors' standard deviation about their mean lies between 1 and 3
// NoiseSDs (the query's own rounding adds to it), and no error is beyond
// their mean by more than six of their standard deviations (the margin a
// rescoring search allows).
func TestNoiseSD(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	for _, m := range metrics {
		for _, dim := range []int{100, 384, 768} {
			vs := randVecs(r, 1000, dim)
			q := train(t, storeOf(t, dim, m, vs), &quant.TrainOptions{Clip: -1})
			codes := make([][]byte, len(vs))
			for i, v := range vs {
				codes[i] = encode(t, q, v)
			}
			var worst, lo, hi float64 = 0, math.Inf(1), 0
			for _, qv := range randVecs(r, 10, dim) {
				p, err := q.Prepare(qv)
				if err != nil {
					t.Fatal(err)
				}
				qn := slicesClone(qv)
				if m == vector.Cosine {
					unit(qn)
				}
				errs := make([]float64, len(vs))
				var mean float64
				for i, v := range vs {
					errs[i] = float64(p.Distance(codes[i])) - exactDist(m, qn, v)
					mean += errs[i]
				}
				mean /= float64(len(errs))
				var ss, far float64
				for _, e := range errs {
					ss += (e - mean) * (e - mean)
					far = max(far, math.Abs(e-mean))
				}
				sd := math.Sqrt(ss / float64(len(errs)))
				ratio := sd / float64(p.NoiseSD())
				lo, hi, worst = min(lo, ratio), max(hi, ratio), max(worst, far/sd)
			}
			t.Logf("%v dim %d: error sd %.2f–%.2f NoiseSDs, worst %.1f sd from the mean", m, dim, lo, hi, worst)
			if lo < 1 || hi > 3 || worst > 6 {
				t.Errorf("%v dim %d: error sd %.2f–%.2f NoiseSDs, worst %.1f sd from the mean", m, dim, lo, hi, worst)
			}
		}
	}
}
