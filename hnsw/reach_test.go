package hnsw_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// TestReachAfterChurn replaces every vector of a small graph of
// near-duplicates again and again (a delete and an add each, as an upsert
// does), and checks that every live vector stays reachable.
func TestReachAfterChurn(t *testing.T) {
	ctx := context.Background()
	s := memStore(t, 2, vector.L2)
	ix := newIndex(t, s, nil)
	const n, rounds = 32, 10
	id := func(i, r int) vector.ID { return vector.ID(r*1000 + i + 1) }
	for i := range n {
		if err := ix.Add(ctx, id(i, 0), vector.Vector{float32(i), 0}); err != nil {
			t.Fatal(err)
		}
	}
	for r := 1; r <= rounds; r++ {
		for i := range n {
			if err := ix.Add(ctx, id(i, r), vector.Vector{float32(i), float32(r)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			if err := ix.Delete(ctx, id(i, r-1)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := ix.SearchWith(ctx, vector.Vector{0, 0}, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != n {
			t.Errorf("round %d: %d of %d reachable (deleted pending %d)", r, len(res), n, ix.Stats().Deleted)
		}
	}
}

// TestReachAfterConcurrentChurn is TestReachAfterChurn with four writers
// each replacing its own eight vectors in batches while searches run: each
// batch's old versions then go in one unlink batch with their whole
// neighbourhood, which used to leave every writer's new batch an island.
func TestReachAfterConcurrentChurn(t *testing.T) {
	ctx := context.Background()
	for trial := range 20 {
		s := memStore(t, 2, vector.L2)
		ix := newIndex(t, s, nil)
		const writers, each, rounds = 4, 8, 10
		id := func(w, i, r int) vector.ID { return vector.ID(r*1000 + w*each + i + 1) }
		for w := range writers {
			for i := range each {
				if err := ix.Add(ctx, id(w, i, 0), vector.Vector{float32(w*each + i), 0}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for r := 1; r <= rounds; r++ {
					ids := make([]vector.ID, each)
					vs := make([]vector.Vector, each)
					for i := range each {
						ids[i], vs[i] = id(w, i, r), vector.Vector{float32(w*each + i), float32(r)}
					}
					if err := ix.AddBatch(ctx, ids, vs); err != nil {
						t.Error(err)
						return
					}
					for i := range each {
						if err := ix.Delete(ctx, id(w, i, r-1)); err != nil {
							t.Error(err)
							return
						}
					}
				}
			})
		}
		wg.Go(func() {
			for range 200 {
				if _, err := ix.Search(ctx, vector.Vector{0, 0}, 32, nil); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()
		res, err := ix.SearchWith(ctx, vector.Vector{0, 0}, 32, &hnsw.SearchOptions{Ef: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != writers*each {
			t.Errorf("trial %d: %d of %d live vectors reachable", trial, len(res), writers*each)
		}
	}
}

// TestDuplicatesStayReachable builds graphs of data in which a fifth of
// the vectors repeat an earlier one (tieData) and checks that a search
// wide enough to see the whole graph returns every node: the order in
// which an insert's walk ranks nodes at the same distance decides which
// of a set of duplicates it links to, and an order that always favoured
// the duplicate reached first left the others without in-links (8 of
// the 6,000 nodes under Dot here).
func TestDuplicatesStayReachable(t *testing.T) {
	ctx := context.Background()
	const n, dim = 600, 100
	for _, m := range []vector.Metric{vector.Cosine, vector.Dot} {
		lost := 0
		for seed := range 10 {
			r := rand.New(rand.NewPCG(uint64(seed), dim))
			vs := tieData(r, n, dim)
			if m == vector.Dot {
				for _, v := range vs { // unit length: under Dot a short vector may rank below every other
					inv := 1 / float32(math.Sqrt(float64(vector.InnerProduct(v, v))))
					for j := range v {
						v[j] *= inv
					}
				}
			}
			s := memStore(t, dim, m)
			ix := newIndex(t, s, &hnsw.Options{M: 8, EfConstruction: 64, Seed: uint64(seed), Workers: 1})
			ids := make([]vector.ID, n)
			for i := range ids {
				ids[i] = vector.ID(i + 1)
			}
			if err := ix.AddBatch(ctx, ids, vs); err != nil {
				t.Fatal(err)
			}
			res, err := ix.SearchWith(ctx, vs[0], n, &hnsw.SearchOptions{Ef: n})
			if err != nil {
				t.Fatal(err)
			}
			lost += n - len(res)
		}
		if lost > 0 {
			t.Errorf("%v: %d of %d nodes unreachable", m, lost, 10*n)
		}
	}
}

// TestEveryNodeReachable builds graphs that the neighbour-selection
// heuristic leaves with nodes no list links to (under L2, on data with
// duplicates, several a graph) and checks that a search wide enough to
// see the whole graph returns every node: after a batch, whose end links
// the nodes cut off, and after single inserts and a Flush.
func TestEveryNodeReachable(t *testing.T) {
	ctx := context.Background()
	const n, dim = 600, 100
	for seed := range 6 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		vs, ids := tieData(r, n, dim), seqIDs(1, n+1)
		for _, batch := range []bool{true, false} {
			ix := newIndex(t, memStore(t, dim, vector.L2), &hnsw.Options{M: 8, EfConstruction: 64, Seed: uint64(seed), Workers: 1})
			if batch {
				if err := ix.AddBatch(ctx, ids, vs); err != nil {
					t.Fatal(err)
				}
			} else {
				for i, id := range ids {
					if err := ix.Add(ctx, id, vs[i]); err != nil {
						t.Fatal(err)
					}
				}
				if err := ix.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			res, err := ix.SearchWith(ctx, vs[0], n, &hnsw.SearchOptions{Ef: n})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != n {
				t.Errorf("seed %d, batch %v: %d of %d nodes reachable", seed, batch, len(res), n)
			}
			if err := ix.Verify(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReadFromLinksCutOff reads a graph saved with nodes cut off, as
// versions before the connect pass saved them: ReadFrom links them.
func TestReadFromLinksCutOff(t *testing.T) {
	ctx := context.Background()
	const n, dim = 600, 100
	cut := 0
	for seed := range 6 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		vs, ids := tieData(r, n, dim), seqIDs(1, n+1)
		st := memStore(t, dim, vector.L2)
		o := &hnsw.Options{M: 8, EfConstruction: 64, Seed: uint64(seed), Workers: 1}
		ix := newIndex(t, st, o)
		var buf bytes.Buffer
		func() {
			defer hnsw.SetConnect(hnsw.SetConnect(false))
			if err := ix.AddBatch(ctx, ids, vs); err != nil {
				t.Fatal(err)
			}
			if _, err := ix.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
		}()
		cut += ix.Unreachable()
		back := newIndex(t, st, o)
		if _, err := back.ReadFrom(&buf); err != nil {
			t.Fatal(err)
		}
		if u := back.Unreachable(); u != 0 {
			t.Errorf("seed %d: %d of %d nodes cut off after ReadFrom (%d before the save)", seed, u, n, ix.Unreachable())
		}
		if err := back.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	if cut == 0 {
		t.Fatal("no graph saved had a node cut off: the test tests nothing")
	}
	t.Logf("%d nodes cut off in the graphs saved", cut)
}
