// This file checks the neighbour-selection heuristic against a plain
// version of the rule.
package hnsw

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestSelectNeighborsMatchesRule checks that selectNeighbors, which scores a
// candidate against the kept neighbours in groups with the gather kernel,
// keeps exactly what the rule keeps when every pair is scored on its own,
// under each metric, at dimensions that leave kernel tails, for m below,
// at and above the number of candidates.
func TestSelectNeighborsMatchesRule(t *testing.T) {
	ctx := context.Background()
	for _, metric := range []vector.Metric{vector.Cosine, vector.Dot, vector.L2} {
		for _, dim := range []int{3, 37, 100} {
			r := rand.New(rand.NewPCG(uint64(dim), uint64(metric)))
			s, err := vector.NewMemStore(dim, metric)
			if err != nil {
				t.Fatal(err)
			}
			ix, err := New(s, &Options{Workers: 1, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			const n = 300
			ids := make([]vector.ID, n)
			vs := make([]vector.Vector, n)
			for i := range vs {
				ids[i] = vector.ID(i + 1)
				vs[i] = make(vector.Vector, dim)
				for j := range vs[i] {
					vs[i][j] = float32(r.NormFloat64())
				}
			}
			if err := ix.AddBatch(ctx, ids, vs); err != nil {
				t.Fatal(err)
			}
			sc := ix.getScratch()
			for trial := range 40 {
				base := node(r.IntN(n))
				var cs []cand
				for _, k := range r.Perm(n)[:1+r.IntN(n-1)] {
					if node(k) != base {
						cs = append(cs, cand{ix.dist(ix.vec(base), ix.vec(node(k))), node(k)})
					}
				}
				sortCands(cs)
				for _, m := range []int{1, 4, 16, 32, len(cs)} {
					got := ix.selectNeighbors(sc, cs, m, nil)
					want := selectByRule(ix, cs, m)
					if len(got) != len(want) {
						t.Fatalf("%v d=%d trial %d m=%d: kept %d, want %d", metric, dim, trial, m, len(got), len(want))
					}
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("%v d=%d trial %d m=%d: kept[%d] = %v, want %v", metric, dim, trial, m, i, got[i], want[i])
						}
					}
				}
			}
			ix.scratch.Put(sc)
		}
	}
}

// selectByRule is the heuristic with one distance call a pair (and every
// candidate kept when there are at most m).
func selectByRule(ix *Index, cs []cand, m int) []cand {
	var out []cand
	if len(cs) <= m {
		return append(out, cs...)
	}
	for _, c := range cs {
		if len(out) >= m {
			break
		}
		good := true
		for _, k := range out {
			if ix.dist(ix.vec(c.node), ix.vec(k.node)) < c.dist {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}
