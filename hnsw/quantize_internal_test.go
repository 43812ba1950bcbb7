// This file checks from inside that the int8 walk reads the codes: its
// distances before rescoring are the estimates, not the exact ones.

package hnsw

import (
	"context"
	"math"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func TestWalkCodesEstimates(t *testing.T) {
	ds := recall.Clustered(800, 10, 32, 6)
	s, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(s, &Options{M: 8, EfConstruction: 40, Quantize: QuantizeInt8})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	qz := ix.Quantizer()
	if qz == nil || ix.inline || ix.lnk0 != codeWords(ds.Dim, QuantizeInt8) {
		t.Fatalf("quantizer %v, inline %v, links at %d", qz, ix.inline, ix.lnk0)
	}
	differ, total := 0, 0
	for _, q := range ds.Queries {
		qv := make([]float32, ds.Dim)
		if err := vector.PrepareInto(qv, q, ds.Dim, ds.Metric); err != nil {
			t.Fatal(err)
		}
		pq, err := qz.Prepare(qv)
		if err != nil {
			t.Fatal(err)
		}
		sc := ix.getScratch()
		ix.mu.RLock()
		if _, ok := ix.walkCodes(sc, qz, qv, 10, 32, nil, nil); !ok {
			t.Fatal("walkCodes refused a prepared query")
		}
		ix.mu.RUnlock()
		for _, c := range sc.w {
			est, exact := pq.Distance(ix.code(c.node)), ix.dist(qv, ix.vec(c.node))
			if c.dist != est {
				t.Fatalf("finalist %d: walk distance %v, estimate %v", c.node, c.dist, est)
			}
			if math.Abs(float64(est-exact)) > 0.05 {
				t.Errorf("finalist %d: estimate %v, exact %v", c.node, est, exact)
			}
			if est != exact {
				differ++
			}
			total++
		}
		ix.scratch.Put(sc)
	}
	if differ < total/2 {
		t.Errorf("only %d of %d finalists' walk distances differ from the exact ones: the walk does not read the codes", differ, total)
	}
}

// TestRescoreBounded checks that the rescoring stopped by the strict
// bound returns what rescoring every finalist would (the same ids,
// bit-equal distances), under each metric, while scoring fewer finalists
// than there are; and that the measured stop (the default) returns exact
// distances, at least 99.5% of the same ids, and scores fewer finalists
// still.
func TestRescoreBounded(t *testing.T) {
	var counts [2]map[vector.Metric]int
	for i, strict := range []bool{true, false} {
		name := "measured"
		if strict {
			name = "strict"
		}
		t.Run(name, func(t *testing.T) { counts[i] = testRescoreBounded(t, strict) })
	}
	for m, n := range counts[1] {
		if n >= counts[0][m] {
			t.Errorf("%v: the measured stop rescored %d finalists, the strict one %d", m, n, counts[0][m])
		}
	}
}

// testRescoreBounded runs TestRescoreBounded with the strict stop or the
// measured one and returns how many finalists were rescored per metric.
func testRescoreBounded(t *testing.T, strict bool) map[vector.Metric]int {
	defer func(old bool) { rescoreStrict = old }(rescoreStrict)
	rescoreStrict = strict
	counts := map[vector.Metric]int{}
	for _, m := range []vector.Metric{vector.Cosine, vector.L2, vector.Dot} {
		ds := recall.Clustered(3000, 20, 48, 7)
		ds.Metric = m
		if m != vector.Cosine {
			// Vectors of unequal lengths, so that L2 and Dot rank
			// differently from Cosine.
			for i, v := range ds.Base {
				f := 0.5 + float32(i%7)/4
				for j := range v {
					v[j] *= f
				}
			}
		}
		s, err := vector.NewMemStore(ds.Dim, m)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := New(s, &Options{M: 8, EfConstruction: 60, Quantize: QuantizeInt8})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]vector.ID, len(ds.Base))
		for i := range ids {
			ids[i] = vector.ID(i)
		}
		if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
			t.Fatal(err)
		}
		qz := ix.Quantizer()
		rescored, finalists, same, total := 0, 0, 0, 0
		for _, ef := range []int{10, 40, 160} {
			for _, q := range ds.Queries {
				qv := make([]float32, ds.Dim)
				if err := vector.PrepareInto(qv, q, ds.Dim, m); err != nil {
					t.Fatal(err)
				}
				sc := ix.getScratch()
				ix.mu.RLock()
				got, ok := ix.walkCodes(sc, qz, qv, 10, ef, nil, nil)
				if !ok {
					t.Fatal("walkCodes refused a prepared query")
				}
				all := vector.NewTopK(10)
				for _, c := range sc.w {
					all.Push(ix.idOf(c.node), ix.dist(qv, ix.vec(c.node)))
				}
				ix.mu.RUnlock()
				want := all.Results()
				if len(got) != len(want) {
					t.Fatalf("%v ef %d: %d results, want %d", m, ef, len(got), len(want))
				}
				for i := range want {
					if strict && got[i] != want[i] {
						t.Fatalf("%v ef %d: result %d is %v, rescoring every finalist gives %v", m, ef, i, got[i], want[i])
					}
				}
				in := map[vector.ID]bool{}
				for _, r := range want {
					in[r.ID] = true
				}
				for _, r := range got {
					v, err := s.Get(r.ID)
					if err != nil || r.Distance != ix.dist(qv, v) {
						t.Fatalf("%v ef %d: result %v: distance not the exact one (%v)", m, ef, r, err)
					}
					if in[r.ID] {
						same++
					}
				}
				total += len(want)
				rescored += sc.rescored
				finalists += len(sc.w)
				ix.scratch.Put(sc)
			}
		}
		t.Logf("%v: rescored %d of %d finalists; %d of %d ids as rescoring all", m, rescored, finalists, same, total)
		if rescored >= finalists {
			t.Errorf("%v: rescored all %d finalists", m, finalists)
		}
		if float64(same) < 0.995*float64(total) {
			t.Errorf("%v: %d of %d ids as rescoring every finalist, want 99.5%%", m, same, total)
		}
		counts[m] = rescored
	}
	return counts
}
