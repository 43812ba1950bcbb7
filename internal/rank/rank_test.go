// This file checks fusion, MMR and the reranking check against hand
// computed cases and naive re-implementations.
package rank

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestFuseByHand(t *testing.T) {
	vec := []vector.ID{1, 2, 3}
	kw := []vector.ID{3, 4}
	got, err := Fuse([][]vector.ID{vec, kw}, nil, 60)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fused{
		{3, 1.0/63 + 1.0/61, []int{3, 1}},
		{1, 1.0 / 61, []int{1, 0}}, // ties with nobody: 1/61 > 1/62
		{2, 1.0 / 62, []int{2, 0}},
		{4, 1.0 / 62, []int{0, 2}}, // ties with 2: 2 ranks in the first list
	}
	if !equalFused(got, want) {
		t.Fatalf("Fuse = %v, want %v", got, want)
	}
	// Weights: the keyword list counts three times.
	got, _ = Fuse([][]vector.ID{vec, kw}, []float64{1, 3}, 60)
	if got[0].ID != 3 || got[1].ID != 4 || math.Abs(got[1].Score-3.0/62) > 1e-15 {
		t.Fatalf("weighted Fuse = %v", got)
	}
	// A zero weight keeps the list's ranks but not its score.
	got, _ = Fuse([][]vector.ID{vec, kw}, []float64{1, 0}, 60)
	if got[0].ID != 1 || got[2].ID != 3 || got[2].Ranks[1] != 1 {
		t.Fatalf("Fuse with weight 0 = %v", got)
	}
	// Items first in one list each tie; the first list wins.
	got, _ = Fuse([][]vector.ID{{7}, {5}}, nil, 60)
	if got[0].ID != 7 || got[1].ID != 5 {
		t.Fatalf("tie: %v", got)
	}
	if got, _ := Fuse(nil, nil, 60); len(got) != 0 {
		t.Fatalf("no lists: %v", got)
	}
}

func equalFused(a, b []Fused) bool {
	return slices.EqualFunc(a, b, func(x, y Fused) bool {
		return x.ID == y.ID && math.Abs(x.Score-y.Score) < 1e-15 && slices.Equal(x.Ranks, y.Ranks)
	})
}

// TestFuseMatchesNaive checks Fuse against the formula computed directly
// on random lists.
func TestFuseMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		lists := make([][]vector.ID, 1+rng.IntN(3))
		weights := make([]float64, len(lists))
		for i := range lists {
			lists[i] = randomList(rng, rng.IntN(30), 40)
			weights[i] = rng.Float64() * 2
		}
		k := float64(rng.IntN(100))
		got, err := Fuse(lists, weights, k)
		if err != nil {
			t.Fatal(err)
		}
		score := map[vector.ID]float64{}
		for i, l := range lists {
			for r, id := range l {
				score[id] += weights[i] / (k + float64(r+1))
			}
		}
		if len(got) != len(score) {
			t.Fatalf("%d fused, want %d", len(got), len(score))
		}
		for i, f := range got {
			if math.Abs(f.Score-score[f.ID]) > 1e-12 {
				t.Fatalf("id %d: score %v, want %v", f.ID, f.Score, score[f.ID])
			}
			for li, l := range lists {
				if r := slices.Index(l, f.ID) + 1; r != f.Ranks[li] {
					t.Fatalf("id %d: rank %d in list %d, want %d", f.ID, f.Ranks[li], li, r)
				}
			}
			if i > 0 && got[i-1].Score < f.Score {
				t.Fatalf("not best first at %d: %v", i, got)
			}
		}
	}
}

func randomList(rng *rand.Rand, n, universe int) []vector.ID {
	perm := rng.Perm(universe)[:min(n, universe)]
	out := make([]vector.ID, len(perm))
	for i, p := range perm {
		out[i] = vector.ID(p + 1)
	}
	return out
}

func TestFuseErrors(t *testing.T) {
	lists := [][]vector.ID{{1, 2}}
	for _, c := range []struct {
		lists   [][]vector.ID
		weights []float64
		k       float64
	}{
		{lists, nil, -1},
		{lists, nil, math.NaN()},
		{lists, nil, math.Inf(1)},
		{lists, []float64{1, 1}, 60},
		{lists, []float64{-1}, 60},
		{lists, []float64{math.NaN()}, 60},
		{[][]vector.ID{{1, 1}}, nil, 60},
	} {
		if _, err := Fuse(c.lists, c.weights, c.k); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Fuse(%v, %v, %v) = %v, want ErrInvalidOptions", c.lists, c.weights, c.k, err)
		}
	}
}

// dotSim returns the similarity of candidates as the dot product of vs.
func dotSim(vs [][]float64) func(i, j int) float64 {
	return func(i, j int) float64 {
		s := 0.0
		for d := range vs[i] {
			s += vs[i][d] * vs[j][d]
		}
		return s
	}
}

func TestMMRByHand(t *testing.T) {
	// Candidates 0 and 1 are near copies, 2 is different and a little
	// less relevant.
	vs := [][]float64{{1, 0}, {0.999, 0.0447}, {0, 1}}
	rel := []float64{0.9, 0.89, 0.7}
	got, err := MMR(rel, 3, 0.5, dotSim(vs))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("MMR λ=0.5 = %v, want %v", got, want)
	}
	if got, _ := MMR(rel, 3, 1, dotSim(vs)); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("MMR λ=1 = %v, want the relevance order", got)
	}
	if got, _ := MMR(rel, 2, 0, dotSim(vs)); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("MMR λ=0 = %v, want [0 2]", got)
	}
	if got, _ := MMR(rel, 10, 0.5, dotSim(vs)); len(got) != 3 {
		t.Errorf("n beyond the candidates: %v", got)
	}
	if got, _ := MMR(nil, 3, 0.5, nil); len(got) != 0 {
		t.Errorf("no candidates: %v", got)
	}
	for _, bad := range []float64{-0.01, 1.01, math.NaN(), math.Inf(1)} {
		if _, err := MMR(rel, 2, bad, dotSim(vs)); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("λ = %v: %v, want ErrInvalidOptions", bad, err)
		}
	}
	if _, err := MMR(rel, 0, 0.5, dotSim(vs)); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("n = 0: %v", err)
	}
	if _, err := MMR([]float64{math.NaN()}, 1, 0.5, dotSim(vs)); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("NaN relevance: %v", err)
	}
}

// TestMMRMatchesNaive checks MMR against the definition, recomputing the
// penalty over every picked candidate at each step.
func TestMMRMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for range 200 {
		m := rng.IntN(25)
		vs := make([][]float64, m)
		rel := make([]float64, m)
		for i := range vs {
			vs[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			rel[i] = float64(rng.IntN(5)) / 4 // ties on purpose
		}
		n := 1 + rng.IntN(m+1)
		lambda := float64(rng.IntN(5)) / 4
		sim := dotSim(vs)
		got, err := MMR(rel, n, lambda, sim)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for len(want) < min(n, m) {
			best, bestScore := -1, 0.0
			for i := range m {
				if slices.Contains(want, i) {
					continue
				}
				s := lambda * rel[i]
				if len(want) > 0 {
					pen := math.Inf(-1)
					for _, j := range want {
						pen = max(pen, sim(i, j))
					}
					s -= (1 - lambda) * pen
				}
				if best < 0 || s > bestScore {
					best, bestScore = i, s
				}
			}
			want = append(want, best)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("MMR(λ=%v, n=%d) = %v, want %v", lambda, n, got, want)
		}
	}
}

func TestOrder(t *testing.T) {
	given := []string{"a", "b", "c"}
	if got, err := Order(given, []string{"c", "a", "b"}); err != nil || !slices.Equal(got, []int{2, 0, 1}) {
		t.Errorf("Order = %v, %v", got, err)
	}
	if got, err := Order(given, []string{"b"}); err != nil || !slices.Equal(got, []int{1}) {
		t.Errorf("Order dropping = %v, %v", got, err)
	}
	if got, err := Order(given, nil); err != nil || len(got) != 0 {
		t.Errorf("Order of nothing = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"a", "x"}, {"a", "a"}, {""}} {
		if _, err := Order(given, bad); !errors.Is(err, ErrBadRerank) {
			t.Errorf("Order(%q) = %v, want ErrBadRerank", bad, err)
		}
	}
}
