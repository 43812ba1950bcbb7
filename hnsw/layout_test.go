// This file holds the tests of the row layout: vectors kept inline beside
// the layer-0 lists at low dimension, behind pointers above, and the
// rescoring of a walk's finalists.
package hnsw_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// tieData returns n random vectors of dimension dim in which every fifth
// is a copy of an earlier one, every other of those moved by 1e-6 in one
// component, so that searches meet exact ties and near ones.
func tieData(r *rand.Rand, n, dim int) []vector.Vector {
	vs := make([]vector.Vector, n)
	for i := range vs {
		if i%5 == 4 {
			vs[i] = slices.Clone(vs[r.IntN(i)])
			if i%10 == 9 { // a near tie rather than an exact one
				vs[i][0] += 1e-6
			}
			continue
		}
		v := make(vector.Vector, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vs[i] = v
	}
	return vs
}

// exactTop is the exact top k of q among the store's vectors, by the
// index's single-kernel distance, ties by id.
func exactTop(t *testing.T, s vector.Store, m vector.Metric, q vector.Vector, ids []vector.ID, k int) []vector.Result {
	t.Helper()
	qv := make([]float32, len(q))
	if err := vector.PrepareInto(qv, q, len(q), m); err != nil {
		t.Fatal(err)
	}
	tk := vector.NewTopK(k)
	for _, id := range ids {
		v, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		var d float32
		switch m {
		case vector.Cosine:
			d = 1 - vector.InnerProduct(qv, v)
		case vector.Dot:
			d = -vector.InnerProduct(qv, v)
		default:
			d = vector.SquaredL2(qv, v)
		}
		tk.Push(id, d)
	}
	return tk.Results()
}

// TestWalkRanksLikeExact checks that a walk wide enough to see every node
// returns exactly the exact scan's results, ids, order and distances bit
// for bit, under every metric, with vectors inline (d = 100) and behind
// pointers (d = 768), on data with exact ties: the finalists it does not
// score again (rescoreLimit) could not have ranked.
func TestWalkRanksLikeExact(t *testing.T) {
	ctx := context.Background()
	for _, dim := range []int{100, 768} {
		for _, m := range []vector.Metric{vector.Cosine, vector.Dot, vector.L2} {
			t.Run(fmt.Sprintf("d=%d/%v", dim, m), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(dim), uint64(m)))
				const n = 600
				vs := tieData(r, n, dim)
				if m == vector.Dot {
					// Unit length, so that every node stays reachable
					// (under Dot a short vector may lose all its in-links)
					// and the comparison is one of ranking only.
					for _, v := range vs {
						inv := 1 / float32(math.Sqrt(float64(vector.InnerProduct(v, v))))
						for j := range v {
							v[j] *= inv
						}
					}
				}
				s, err := vector.NewMemStore(dim, m)
				if err != nil {
					t.Fatal(err)
				}
				// One worker: the same graph on every run.
				ix, err := hnsw.New(s, &hnsw.Options{M: 8, EfConstruction: 64, Seed: 3, Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				if ix.Inline() || !ix.Slotted() {
					t.Fatalf("Inline() = %v, Slotted() = %v at d = %d, want the store's slots", ix.Inline(), ix.Slotted(), dim)
				}
				ids := make([]vector.ID, n)
				for i := range ids {
					ids[i] = vector.ID(i + 1)
				}
				if err := ix.AddBatch(ctx, ids, vs); err != nil {
					t.Fatal(err)
				}
				for qi := range 40 {
					q := vs[r.IntN(n)]
					if qi%2 == 1 { // a query near, not on, a stored vector
						q = slices.Clone(q)
						q[0] += 0.01
					}
					for _, k := range []int{1, 10, 37} {
						got, err := ix.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: n})
						if err != nil {
							t.Fatal(err)
						}
						if want := exactTop(t, s, m, q, ids, k); !slices.Equal(got, want) {
							t.Fatalf("query %d, k = %d:\n got %v\nwant %v", qi, k, got, want)
						}
					}
				}
			})
		}
	}
}

// TestInlineCopyFollowsStore checks that the graph's own copies of the
// vectors stay those of the store through updates, deletes, slot reuse and
// a reload: an index with copies and those loaded from the same saved
// graph without them (pointers into the store, or the store's slots)
// answer every query alike, and Stats counts the copies.
func TestInlineCopyFollowsStore(t *testing.T) {
	ctx := context.Background()
	const dim, n = 24, 800
	r := rand.New(rand.NewPCG(5, 6))
	vs := tieData(r, n, dim)
	s, err := vector.NewMemStore(dim, vector.L2)
	if err != nil {
		t.Fatal(err)
	}
	defer hnsw.SetUseSlots(hnsw.SetUseSlots(false))
	ix, err := hnsw.New(s, &hnsw.Options{M: 8, Seed: 9, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Inline() {
		t.Fatal("a 24-d index does not keep vectors inline")
	}
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(ctx, ids, vs); err != nil {
		t.Fatal(err)
	}
	// Churn: update a third (delete + add of a new vector under the same
	// id), delete a sixth, add new ids into the freed slots.
	for i := 0; i < n; i += 3 {
		v := tieData(r, 1, dim)[0]
		if err := ix.Update(ctx, vector.ID(i), v); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < n; i += 6 {
		if err := ix.Delete(ctx, vector.ID(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n / 10 {
		if err := ix.Add(ctx, vector.ID(n+i), tieData(r, 1, dim)[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	st := ix.Stats()
	if min := int64(st.Len) * dim * 4; st.GraphBytes < min {
		t.Errorf("Stats.GraphBytes = %d, want at least the inline copies' %d", st.GraphBytes, min)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	load := func(maxDim int, slots bool) *hnsw.Index {
		defer hnsw.SetInlineMaxDim(hnsw.SetInlineMaxDim(maxDim))
		defer hnsw.SetUseSlots(hnsw.SetUseSlots(slots))
		g, err := hnsw.New(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
			t.Fatal(err)
		}
		return g
	}
	reloaded, pointer, slots := load(512, false), load(0, false), load(512, true)
	if !reloaded.Inline() || pointer.Inline() || slots.Inline() || !slots.Slotted() {
		t.Fatal("layouts not as asked")
	}
	for qi := range 100 {
		q := tieData(r, 1, dim)[0]
		o := &hnsw.SearchOptions{Ef: 40}
		want, err := pointer.SearchWith(ctx, q, 10, o)
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range map[string]*hnsw.Index{"churned": ix, "reloaded": reloaded, "slots": slots} {
			got, err := g.SearchWith(ctx, q, 10, o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("query %d, %s index:\n got %v\nwant %v (pointers into the store)", qi, name, got, want)
			}
		}
	}
}
