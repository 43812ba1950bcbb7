package recall_test

import (
	"math"
	"slices"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func TestGeneratorsDeterministic(t *testing.T) {
	for _, gen := range []struct {
		name string
		f    func(n, nq, dim int, seed int64) *recall.Dataset
	}{{"uniform", recall.Uniform}, {"clustered", recall.Clustered}} {
		t.Run(gen.name, func(t *testing.T) {
			a := gen.f(600, 20, 32, 7)
			b := gen.f(600, 20, 32, 7)
			if !equalSets(a.Base, b.Base) || !equalSets(a.Queries, b.Queries) {
				t.Fatal("same seed gave different vectors")
			}
			// The base does not depend on the number of queries, and a
			// smaller set is a prefix of a larger one.
			c := gen.f(300, 5, 32, 7)
			if !equalSets(c.Base, a.Base[:300]) {
				t.Error("base of 300 is not the prefix of the base of 600, or depends on the query count")
			}
			if !equalSets(c.Queries, a.Queries[:5]) {
				t.Error("5 queries are not the prefix of 20")
			}
			d := gen.f(600, 20, 32, 8)
			if equalSets(a.Base[:1], d.Base[:1]) {
				t.Error("different seeds gave the same first vector")
			}
			for i, q := range a.Queries {
				for j, v := range a.Base {
					if slices.Equal(q, v) {
						t.Fatalf("query %d equals base %d", i, j)
					}
				}
			}
			if a.Dim != 32 || a.Metric != vector.Cosine || len(a.Base) != 600 || len(a.Queries) != 20 {
				t.Errorf("got dim %d metric %v sizes %d/%d", a.Dim, a.Metric, len(a.Base), len(a.Queries))
			}
		})
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{recall.Clustered(10, 1, 768, 1).Name, "clustered-10"},
		{recall.Uniform(1000, 1, 768, 1).Name, "uniform-1000"},
		{recall.Uniform(1000, 1, 32, 1).Name, "uniform-1000-d32"},
		{recall.Clustered(5, 1, 768, 3).Name, "clustered-5-s3"},
	} {
		if c.got != c.want {
			t.Errorf("name %q, want %q", c.got, c.want)
		}
	}
}

func TestUniformStatistics(t *testing.T) {
	const dim = 768
	ds := recall.Uniform(400, 10, dim, 1)
	checkUnitNorms(t, ds)
	// Before normalisation a component is uniform on [-1, 1) with variance
	// 1/3, so the norm is about sqrt(dim/3); each normalised component then
	// has mean 0 and mean square 1/dim, and the largest is at most about
	// 1/sqrt(dim/3) = 0.0625.
	var mean, sq, maxAbs float64
	for _, v := range ds.Base {
		for _, x := range v {
			mean += float64(x)
			sq += float64(x) * float64(x)
			maxAbs = max(maxAbs, math.Abs(float64(x)))
		}
	}
	cnt := float64(len(ds.Base) * dim)
	mean /= cnt
	sq /= cnt
	if math.Abs(mean) > 1e-3 {
		t.Errorf("mean component %v, want about 0", mean)
	}
	if math.Abs(sq*dim-1) > 1e-6 {
		t.Errorf("mean square component × dim = %v, want 1", sq*dim)
	}
	if lim := 1.05 / math.Sqrt(dim/3.0); maxAbs > lim {
		t.Errorf("largest component %v, want ≤ %v (uniform on [-1, 1) before normalising)", maxAbs, lim)
	}
	// Unrelated directions in 768 dimensions are nearly orthogonal.
	var cos float64
	for i := 1; i < len(ds.Base); i++ {
		cos += math.Abs(dot(ds.Base[0], ds.Base[i]))
	}
	if cos /= float64(len(ds.Base) - 1); cos > 0.06 {
		t.Errorf("mean |cos| between uniform vectors %v, want about 0.029", cos)
	}
}

func TestClusteredStatistics(t *testing.T) {
	const dim = 768
	ds := recall.Clustered(2000, 50, dim, 1)
	checkUnitNorms(t, ds)
	// A point is normalise(c + e) with c a unit centre and e of norm about
	// 0.02·sqrt(768) = 0.554; so cos(point, c) = 1/sqrt(1+0.307) ≈ 0.875, and
	// two points of one centre have cosine about 1/1.307 ≈ 0.765. Recover
	// the groups as the points whose nearest other point is that close.
	noise := recall.ClusterNoise * math.Sqrt(dim)
	if math.Abs(noise-0.554) > 0.01 {
		t.Fatalf("noise norm %v", noise)
	}
	wantSame := 1 / (1 + noise*noise)
	var same, other []float64
	for i := 0; i < 200; i++ {
		for j := i + 1; j < len(ds.Base); j++ {
			c := dot(ds.Base[i], ds.Base[j])
			if c > 0.5 {
				same = append(same, c)
			} else {
				other = append(other, c)
			}
		}
	}
	// 200 points × 1,999 others / 500 centres: about 800 same-centre pairs.
	if len(same) < 500 || len(same) > 1200 {
		t.Fatalf("%d same-centre pairs, want about 800", len(same))
	}
	if m := meanOf(same); math.Abs(m-wantSame) > 0.01 {
		t.Errorf("mean cosine within a cluster %v, want %v (noise norm 0.55)", m, wantSame)
	}
	if m := meanOf(other); math.Abs(m) > 0.01 {
		t.Errorf("mean cosine across clusters %v, want about 0", m)
	}
	// Every query sits in some cluster: its nearest base vector is close.
	for i, q := range ds.Queries[:10] {
		best := -1.0
		for _, v := range ds.Base {
			best = max(best, dot(q, v))
		}
		if best < 0.6 {
			t.Errorf("query %d: nearest base cosine %v, want ≈ %v", i, best, wantSame)
		}
	}
}

func checkUnitNorms(t *testing.T, ds *recall.Dataset) {
	t.Helper()
	for _, set := range [][]vector.Vector{ds.Base, ds.Queries} {
		for i, v := range set {
			if n := math.Sqrt(dot(v, v)); math.Abs(n-1) > 1e-6 {
				t.Fatalf("vector %d has norm %v", i, n)
			}
		}
	}
}

func dot(a, b vector.Vector) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func equalSets(a, b []vector.Vector) bool {
	return slices.EqualFunc(a, b, func(x, y vector.Vector) bool { return slices.Equal(x, y) })
}
