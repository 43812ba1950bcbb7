// Package vectortest holds the conformance suites that every store and
// index in cairn must pass, in the manner of testing/fstest: TestStore
// checks any [vector.Store], TestIndex any [vector.Index] over any store.
// Implementations call them from their own tests with a factory.
package vectortest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// StoreFactory returns a new, empty store of the given dimension and
// metric. It should register any clean-up with t.Cleanup.
type StoreFactory func(t *testing.T, dim int, m vector.Metric) vector.Store

// IndexFactory returns a new index over the store s, which may already hold
// vectors (an index over a non-empty store must index them, or the factory
// must Track them).
type IndexFactory func(t *testing.T, s vector.Store) vector.Index

// IndexConfig says what TestIndex may expect of the index under test.
type IndexConfig struct {
	// Approximate relaxes "results equal an exact search" to a recall bound
	// (MinRecall, default 0.9) on the random collections of the suite.
	Approximate bool
	// MinRecall is the recall@k an approximate index must reach.
	MinRecall float64
}

var metrics = []vector.Metric{vector.Cosine, vector.Dot, vector.L2}

// randVec returns a vector with components uniform in [-1, 1).
func randVec(r *rand.Rand, dim int) vector.Vector {
	v := make(vector.Vector, dim)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

func newRand(t *testing.T) *rand.Rand {
	seed := uint64(len(t.Name())) * 0x9e3779b97f4a7c15
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 1))
}

// prepared returns v as a store of metric m keeps it.
func prepared(t *testing.T, v vector.Vector, m vector.Metric) vector.Vector {
	t.Helper()
	p, err := vector.Prepare(v, len(v), m)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return p
}

func equalVec(a, b vector.Vector, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i])-float64(b[i])) > tol {
			return false
		}
	}
	return true
}

// badVectors is the table of invalid input shared by the suites.
func badVectors(dim int, m vector.Metric) []struct {
	name string
	v    vector.Vector
	want error
} {
	nan := make(vector.Vector, dim)
	nan[dim/2] = float32(math.NaN())
	nan[0] = 1
	inf := make(vector.Vector, dim)
	inf[dim-1] = float32(math.Inf(1))
	ninf := make(vector.Vector, dim)
	ninf[0] = float32(math.Inf(-1))
	cases := []struct {
		name string
		v    vector.Vector
		want error
	}{
		{"short", make(vector.Vector, dim-1), vector.ErrDimensionMismatch},
		{"long", make(vector.Vector, dim+1), vector.ErrDimensionMismatch},
		{"nil", nil, vector.ErrDimensionMismatch},
		{"nan", nan, vector.ErrNonFinite},
		{"+inf", inf, vector.ErrNonFinite},
		{"-inf", ninf, vector.ErrNonFinite},
	}
	if m == vector.Cosine {
		cases = append(cases, struct {
			name string
			v    vector.Vector
			want error
		}{"zero", make(vector.Vector, dim), vector.ErrZeroVector})
	}
	return cases
}

// TestStore runs the store conformance suite against stores made by
// newStore.
func TestStore(t *testing.T, newStore StoreFactory) {
	for _, m := range metrics {
		t.Run(m.String(), func(t *testing.T) {
			t.Run("RoundTrip", func(t *testing.T) { storeRoundTrip(t, newStore, m) })
			t.Run("BadInput", func(t *testing.T) { storeBadInput(t, newStore, m) })
			t.Run("DeleteReuse", func(t *testing.T) { storeDelete(t, newStore, m) })
			t.Run("ForEach", func(t *testing.T) { storeForEach(t, newStore, m) })
			t.Run("Batch", func(t *testing.T) { storeBatch(t, newStore, m) })
			t.Run("Blocks", func(t *testing.T) { storeBlocks(t, newStore, m) })
		})
	}
	t.Run("Concurrent", func(t *testing.T) { storeConcurrent(t, newStore) })
}

func fill(t *testing.T, s vector.Store, r *rand.Rand, n int) map[vector.ID]vector.Vector {
	t.Helper()
	ctx := context.Background()
	want := make(map[vector.ID]vector.Vector, n)
	for i := range n {
		id := vector.ID(i*7 + 3)
		v := randVec(r, s.Dim())
		if err := s.Put(ctx, id, v); err != nil {
			t.Fatalf("Put(%d): %v", id, err)
		}
		want[id] = v
	}
	return want
}

// checkContents asserts that s holds exactly want (raw vectors).
func checkContents(t *testing.T, s vector.Store, want map[vector.ID]vector.Vector) {
	t.Helper()
	if s.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(want))
	}
	for id, v := range want {
		got, err := s.Get(id)
		if err != nil {
			t.Fatalf("Get(%d): %v", id, err)
		}
		if !equalVec(got, prepared(t, v, s.Metric()), 1e-6) {
			t.Fatalf("Get(%d) = %v, want %v", id, got[:min(4, len(got))], v[:min(4, len(v))])
		}
	}
}

func storeRoundTrip(t *testing.T, newStore StoreFactory, m vector.Metric) {
	const dim = 13
	s := newStore(t, dim, m)
	if s.Dim() != dim || s.Metric() != m {
		t.Fatalf("Dim, Metric = %d, %v; want %d, %v", s.Dim(), s.Metric(), dim, m)
	}
	if s.Len() != 0 {
		t.Fatalf("new store Len = %d", s.Len())
	}
	r := newRand(t)
	want := fill(t, s, r, 300)
	checkContents(t, s, want)
	// The store keeps a copy: changing the caller's slice changes nothing.
	v := randVec(r, dim)
	orig := slices.Clone(v)
	if err := s.Put(context.Background(), 1<<40, v); err != nil {
		t.Fatal(err)
	}
	v[0] = 42
	want[1<<40] = orig
	checkContents(t, s, want)
	if m == vector.Cosine {
		got, _ := s.Get(3)
		var n float64
		for _, x := range got {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Fatalf("cosine vector stored with squared norm %v, want 1", n)
		}
	}
	if _, err := s.Get(999999); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Get(missing) error = %v, want ErrNotFound", err)
	}
}

func storeBadInput(t *testing.T, newStore StoreFactory, m vector.Metric) {
	const dim = 8
	s := newStore(t, dim, m)
	r := newRand(t)
	want := fill(t, s, r, 20)
	ctx := context.Background()
	for _, c := range badVectors(dim, m) {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Put(ctx, 5000, c.v); !errors.Is(err, c.want) {
				t.Fatalf("Put error = %v, want %v", err, c.want)
			}
			checkContents(t, s, want)
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		if err := s.Put(ctx, 3, randVec(r, dim)); !errors.Is(err, vector.ErrDuplicateID) {
			t.Fatalf("Put(existing) error = %v, want ErrDuplicateID", err)
		}
		checkContents(t, s, want)
	})
	if m != vector.Cosine {
		if err := s.Put(ctx, 6000, make(vector.Vector, dim)); err != nil {
			t.Fatalf("zero vector under %v: %v", m, err)
		}
	}
}

func storeDelete(t *testing.T, newStore StoreFactory, m vector.Metric) {
	const dim = 5
	s := newStore(t, dim, m)
	r := newRand(t)
	ctx := context.Background()
	want := fill(t, s, r, 100)
	if err := s.Delete(ctx, 424242); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Delete(missing) = %v, want ErrNotFound", err)
	}
	for id := range want {
		if id%2 == 0 {
			if err := s.Delete(ctx, id); err != nil {
				t.Fatalf("Delete(%d): %v", id, err)
			}
			if _, err := s.Get(id); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("Get after Delete = %v", err)
			}
			if err := s.Delete(ctx, id); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("second Delete(%d) = %v", id, err)
			}
			delete(want, id)
		}
	}
	checkContents(t, s, want)
	// Re-adding deleted ids and new ones reuses space and keeps the rest.
	for i := range 60 {
		id := vector.ID(i * 2 * 7)
		v := randVec(r, dim)
		if _, ok := want[id]; ok {
			continue
		}
		if err := s.Put(ctx, id, v); err != nil {
			t.Fatalf("Put after delete(%d): %v", id, err)
		}
		want[id] = v
	}
	checkContents(t, s, want)
}

func storeForEach(t *testing.T, newStore StoreFactory, m vector.Metric) {
	s := newStore(t, 4, m)
	r := newRand(t)
	want := fill(t, s, r, 50)
	_ = s.Delete(context.Background(), 3)
	delete(want, 3)
	seen := map[vector.ID]bool{}
	err := s.ForEach(func(id vector.ID, v vector.Vector) error {
		if seen[id] {
			t.Errorf("ForEach visited %d twice", id)
		}
		seen[id] = true
		w, ok := want[id]
		if !ok {
			t.Errorf("ForEach visited unknown id %d", id)
		} else if !equalVec(v, prepared(t, w, m), 1e-6) {
			t.Errorf("ForEach vector of %d differs", id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(want) {
		t.Fatalf("ForEach visited %d, want %d", len(seen), len(want))
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.ForEach(func(vector.ID, vector.Vector) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("ForEach returned %v after %d calls, want the callback's error after 1", err, calls)
	}
}

func storeBatch(t *testing.T, newStore StoreFactory, m vector.Metric) {
	s := newStore(t, 6, m)
	bp, ok := s.(vector.BatchPutter)
	if !ok {
		t.Skip("store has no PutBatch")
	}
	r := newRand(t)
	ctx := context.Background()
	want := fill(t, s, r, 10)
	ids := []vector.ID{100, 101, 102}
	vs := []vector.Vector{randVec(r, 6), randVec(r, 6), randVec(r, 6)}
	bad := slices.Clone(vs)
	bad[2] = make(vector.Vector, 5)
	if err := bp.PutBatch(ctx, ids, bad); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Fatalf("PutBatch(bad dim) = %v", err)
	}
	if err := bp.PutBatch(ctx, []vector.ID{100, 101, 100}, vs); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("PutBatch(repeated id) = %v", err)
	}
	if err := bp.PutBatch(ctx, []vector.ID{100, 101, 3}, vs); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("PutBatch(stored id) = %v", err)
	}
	if err := bp.PutBatch(ctx, ids[:2], vs); err == nil {
		t.Fatal("PutBatch with mismatched lengths succeeded")
	}
	checkContents(t, s, want)
	if err := bp.PutBatch(ctx, ids, vs); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		want[id] = vs[i]
	}
	checkContents(t, s, want)
}

func storeBlocks(t *testing.T, newStore StoreFactory, m vector.Metric) {
	s := newStore(t, 3, m)
	bv, ok := s.(vector.BlockViewer)
	if !ok {
		t.Skip("store has no ViewBlocks")
	}
	r := newRand(t)
	want := fill(t, s, r, 700)
	for id := range want {
		if id%3 == 0 {
			_ = s.Delete(context.Background(), id)
			delete(want, id)
		}
	}
	seen := 0
	err := bv.ViewBlocks(func(blocks []vector.Block) error {
		for _, b := range blocks {
			if len(b.Live) != len(b.IDs) || len(b.Data) != len(b.IDs)*3 {
				t.Fatalf("block sizes: %d ids, %d live, %d floats", len(b.IDs), len(b.Live), len(b.Data))
			}
			for i, id := range b.IDs {
				if !b.Live[i] {
					continue
				}
				seen++
				w, ok := want[id]
				if !ok {
					t.Fatalf("block holds unknown live id %d", id)
				}
				if !equalVec(b.Data[i*3:i*3+3], prepared(t, w, m), 1e-6) {
					t.Fatalf("block data of %d differs", id)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Fatalf("blocks hold %d live vectors, want %d", seen, len(want))
	}
}

func storeConcurrent(t *testing.T, newStore StoreFactory) {
	const dim = 8
	s := newStore(t, dim, vector.L2)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for i := range 100 {
				id := vector.ID(w*1000 + i)
				if err := s.Put(ctx, id, randVec(r, dim)); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				if i%3 == 0 {
					if err := s.Delete(ctx, id); err != nil {
						t.Errorf("Delete: %v", err)
					}
				}
			}
		})
		wg.Go(func() {
			for i := range 100 {
				if v, err := s.Get(vector.ID(w*1000 + i)); err == nil && len(v) != dim {
					t.Errorf("Get returned %d floats", len(v))
				}
				_ = s.Len()
				_ = s.ForEach(func(vector.ID, vector.Vector) error { return nil })
			}
		})
	}
	wg.Wait()
	if got, want := s.Len(), 4*(100-34); got != want {
		t.Fatalf("Len after concurrent writes = %d, want %d", got, want)
	}
}

// exactTopK is the float64 reference search over raw vectors.
func exactTopK(m vector.Metric, data map[vector.ID]vector.Vector, q vector.Vector, k int, allow func(vector.ID) bool) []vector.Result {
	type scored struct {
		id vector.ID
		d  float64
	}
	all := make([]scored, 0, len(data))
	for id, v := range data {
		if allow != nil && !allow(id) {
			continue
		}
		all = append(all, scored{id, m.Distance(q, v)})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].id < all[j].id
	})
	out := make([]vector.Result, 0, min(k, len(all)))
	for _, s := range all[:min(k, len(all))] {
		out = append(out, vector.Result{ID: s.id, Distance: float32(s.d)})
	}
	return out
}
