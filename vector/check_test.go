// Tests of Check's magnitude bound: a vector Check accepts never makes a
// float32 distance overflow, under any kernel.
package vector_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestCheckRefusesOverflowingMagnitudes(t *testing.T) {
	big := vector.Vector{3e38, 3e38} // finite, but a·a and (a−(−a))² overflow float32
	for _, m := range []vector.Metric{vector.Dot, vector.L2} {
		if err := vector.Check(big, 2, m); !errors.Is(err, vector.ErrOutOfRange) {
			t.Errorf("%v: Check(%v) = %v, want ErrOutOfRange", m, big, err)
		}
		if _, err := vector.Prepare(big, 2, m); !errors.Is(err, vector.ErrOutOfRange) {
			t.Errorf("%v: Prepare(%v) = %v, want ErrOutOfRange", m, big, err)
		}
	}
	// Under Cosine the vector is normalised: accepted, and its distances finite.
	p, err := vector.Prepare(big, 2, vector.Cosine)
	if err != nil {
		t.Fatalf("cosine: %v", err)
	}
	if d := vector.Cosine.DistanceFunc()(p, p); math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) || math.Abs(float64(d)) > 1e-6 {
		t.Errorf("cosine distance of a normalised vector to itself = %v", d)
	}
	// Just inside the bound is accepted.
	edge := vector.Vector{float32(math.Sqrt(vector.MaxSquaredNorm) * 0.999)}
	for _, m := range []vector.Metric{vector.Dot, vector.L2} {
		if err := vector.Check(edge, 1, m); err != nil {
			t.Errorf("%v: Check(%v) = %v, want nil", m, edge, err)
		}
	}
}

// TestAcceptedDistancesFinite scales random vectors to the largest squared
// norm Check accepts and checks that every kernel's distances between them,
// including the extreme pairs (a, a) under Dot and (a, −a) under L2, are
// finite.
func TestAcceptedDistancesFinite(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, dim := range []int{1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 767, 768, 769} {
		for _, m := range []vector.Metric{vector.Dot, vector.L2} {
			vs := make([]vector.Vector, 4)
			for i := range vs {
				vs[i] = atBound(r, dim, i%2 == 0)
				if err := vector.Check(vs[i], dim, m); err != nil {
					t.Fatalf("dim %d %v: the scaled vector is refused: %v", dim, m, err)
				}
			}
			neg := make(vector.Vector, dim)
			for i, x := range vs[0] {
				neg[i] = -x
			}
			pairs := [][2]vector.Vector{{vs[0], vs[0]}, {vs[0], neg}, {vs[1], vs[2]}, {vs[3], vs[3]}}
			dist := m.DistanceFunc()
			for _, p := range pairs {
				finite(t, dim, m, "DistanceFunc", dist(p[0], p[1]))
			}
			rows := make([]float32, 0, 4*dim)
			for _, v := range []vector.Vector{vs[0], neg, vs[2], vs[3]} {
				rows = append(rows, v...)
			}
			out := make([]float32, 4)
			m.BatchDistance(vs[0], rows, out)
			for _, d := range out {
				finite(t, dim, m, "BatchDistance", d)
			}
			var four [4]float32
			if m == vector.Dot {
				four = vector.InnerProduct4(vs[0], vs[0], neg, vs[2], vs[3])
			} else {
				four = vector.SquaredL2x4(vs[0], vs[0], neg, vs[2], vs[3])
			}
			for _, d := range four {
				finite(t, dim, m, "x4", d)
			}
		}
	}
}

// atBound returns a random vector of dimension dim whose squared norm is
// just under MaxSquaredNorm; spike puts all of it in one component.
func atBound(r *rand.Rand, dim int, spike bool) vector.Vector {
	v := make(vector.Vector, dim)
	if spike {
		v[r.IntN(dim)] = 1
	} else {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	s := math.Sqrt(vector.MaxSquaredNorm/sum) * (1 - 1e-6)
	for i := range v {
		v[i] = float32(float64(v[i]) * s)
	}
	return v
}

func finite(t *testing.T, dim int, m vector.Metric, what string, d float32) {
	t.Helper()
	if math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) {
		t.Errorf("dim %d %v %s: distance %v between accepted vectors", dim, m, what, d)
	}
}
