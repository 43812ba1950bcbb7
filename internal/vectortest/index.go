package vectortest

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestIndex runs the index conformance suite against indexes made by
// newIndex over stores made by newStore.
func TestIndex(t *testing.T, newStore StoreFactory, newIndex IndexFactory, cfg IndexConfig) {
	if cfg.MinRecall == 0 {
		cfg.MinRecall = 0.9
	}
	for _, m := range metrics {
		t.Run(m.String(), func(t *testing.T) {
			t.Run("Search", func(t *testing.T) { indexSearch(t, newStore, newIndex, cfg, m) })
			t.Run("BadInput", func(t *testing.T) { indexBadInput(t, newStore, newIndex, m) })
		})
	}
	t.Run("Empty", func(t *testing.T) { indexEmpty(t, newStore, newIndex) })
	t.Run("Ties", func(t *testing.T) { indexTies(t, newStore, newIndex) })
	t.Run("KLargerThanLen", func(t *testing.T) { indexSmallK(t, newStore, newIndex) })
	t.Run("DeleteReAdd", func(t *testing.T) { indexDelete(t, newStore, newIndex, cfg) })
	t.Run("Filter", func(t *testing.T) { indexFilter(t, newStore, newIndex, cfg) })
	t.Run("Batch", func(t *testing.T) { indexBatch(t, newStore, newIndex) })
	t.Run("Track", func(t *testing.T) { indexTrack(t, newStore, newIndex) })
	t.Run("Cancelled", func(t *testing.T) { indexCancelled(t, newStore, newIndex) })
	t.Run("Concurrent", func(t *testing.T) { indexConcurrent(t, newStore, newIndex) })
	t.Run("StoreClosed", func(t *testing.T) { indexStoreClosed(t, newStore, newIndex) })
}

type fixture struct {
	idx  vector.Index
	data map[vector.ID]vector.Vector
	m    vector.Metric
	dim  int
}

func build(t *testing.T, newStore StoreFactory, newIndex IndexFactory, m vector.Metric, dim, n int, r *rand.Rand) *fixture {
	t.Helper()
	idx := newIndex(t, newStore(t, dim, m))
	f := &fixture{idx: idx, data: map[vector.ID]vector.Vector{}, m: m, dim: dim}
	for i := range n {
		id := vector.ID(i*3 + 1)
		v := randVec(r, dim)
		if err := idx.Add(context.Background(), id, v); err != nil {
			t.Fatalf("Add(%d): %v", id, err)
		}
		f.data[id] = v
	}
	if idx.Len() != n {
		t.Fatalf("Len = %d after %d adds", idx.Len(), n)
	}
	return f
}

// check compares a search against the float64 reference: results sorted by
// (distance, id), distances right, and the same ids (for an exact index) or
// enough of them (for an approximate one). It returns the recall.
func (f *fixture) check(t *testing.T, q vector.Vector, k int, opts *vector.SearchOptions, allow func(vector.ID) bool, exact bool) float64 {
	t.Helper()
	got, err := f.idx.Search(context.Background(), q, k, opts)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	want := exactTopK(f.m, f.data, q, k, allow)
	if len(got) != len(want) {
		t.Fatalf("Search returned %d results, want %d", len(got), len(want))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Less(got[i-1]) {
			t.Fatalf("results out of order at %d: %v then %v", i, got[i-1], got[i])
		}
	}
	scale := 1.0
	if f.m != vector.Cosine {
		scale = float64(f.dim)
	}
	tol := 1e-4 * scale
	hit := 0
	inWant := map[vector.ID]bool{}
	for _, w := range want {
		inWant[w.ID] = true
	}
	for _, g := range got {
		raw, ok := f.data[g.ID]
		if !ok {
			t.Fatalf("result id %d was never added (or was deleted)", g.ID)
		}
		if allow != nil && !allow(g.ID) {
			t.Fatalf("result id %d is not allowed by the filter", g.ID)
		}
		if ref := f.m.Distance(q, raw); math.Abs(ref-float64(g.Distance)) > tol {
			t.Fatalf("distance of %d = %v, reference %v", g.ID, g.Distance, ref)
		}
		if inWant[g.ID] {
			hit++
		}
	}
	if exact && len(want) > 0 {
		// Near-ties may swap between float32 and float64: compare the
		// distances at each rank instead of the ids.
		for i := range got {
			if math.Abs(float64(got[i].Distance-want[i].Distance)) > tol {
				t.Fatalf("rank %d: got %v, want %v", i, got[i], want[i])
			}
		}
	}
	if len(want) == 0 {
		return 1
	}
	return float64(hit) / float64(len(want))
}

func indexSearch(t *testing.T, newStore StoreFactory, newIndex IndexFactory, cfg IndexConfig, m vector.Metric) {
	r := newRand(t)
	f := build(t, newStore, newIndex, m, 24, 500, r)
	var sum float64
	const nq = 30
	for range nq {
		sum += f.check(t, randVec(r, 24), 10, nil, nil, !cfg.Approximate)
	}
	if rec := sum / nq; rec < cfg.MinRecall {
		t.Fatalf("recall@10 = %.3f, want >= %.2f", rec, cfg.MinRecall)
	}
	// A stored vector is its own nearest neighbour (except under Dot, where
	// a longer vector in the same direction beats it).
	if m != vector.Dot {
		got, err := f.idx.Search(context.Background(), f.data[31], 1, nil)
		if err != nil || len(got) != 1 || got[0].ID != 31 {
			t.Fatalf("Search(stored vector 31) = %v, %v", got, err)
		}
	}
}

func indexBadInput(t *testing.T, newStore StoreFactory, newIndex IndexFactory, m vector.Metric) {
	const dim = 8
	r := newRand(t)
	f := build(t, newStore, newIndex, m, dim, 40, r)
	ctx := context.Background()
	for _, c := range badVectors(dim, m) {
		t.Run(c.name, func(t *testing.T) {
			if err := f.idx.Add(ctx, 9999, c.v); !errors.Is(err, c.want) {
				t.Fatalf("Add error = %v, want %v", err, c.want)
			}
			if _, err := f.idx.Search(ctx, c.v, 3, nil); !errors.Is(err, c.want) {
				t.Fatalf("Search error = %v, want %v", err, c.want)
			}
			if f.idx.Len() != 40 {
				t.Fatalf("Len = %d after rejected Add", f.idx.Len())
			}
		})
	}
	if err := f.idx.Add(ctx, 1, randVec(r, dim)); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("Add(existing id) = %v, want ErrDuplicateID", err)
	}
	for _, k := range []int{0, -1} {
		if _, err := f.idx.Search(ctx, randVec(r, dim), k, nil); !errors.Is(err, vector.ErrInvalidK) {
			t.Fatalf("Search(k=%d) = %v, want ErrInvalidK", k, err)
		}
	}
	if err := f.idx.Delete(ctx, 123456); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Delete(missing) = %v, want ErrNotFound", err)
	}
	if f.idx.Len() != 40 {
		t.Fatalf("Len = %d after rejected calls", f.idx.Len())
	}
	f.check(t, randVec(r, dim), 5, nil, nil, false)
}

func indexEmpty(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	idx := newIndex(t, newStore(t, 4, vector.Cosine))
	got, err := idx.Search(context.Background(), vector.Vector{1, 0, 0, 0}, 5, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Search(empty) = %v, %v; want no results, no error", got, err)
	}
}

func indexTies(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	idx := newIndex(t, newStore(t, 3, vector.L2))
	ctx := context.Background()
	for _, id := range []vector.ID{50, 7, 30, 12, 99} {
		if err := idx.Add(ctx, id, vector.Vector{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Add(ctx, 1, vector.Vector{9, 9, 9}); err != nil {
		t.Fatal(err)
	}
	got, err := idx.Search(ctx, vector.Vector{1, 2, 3}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []vector.ID{7, 12, 30}
	for i, w := range want {
		if i >= len(got) || got[i].ID != w || got[i].Distance != 0 {
			t.Fatalf("tied results = %v, want ids %v at distance 0", got, want)
		}
	}
}

// indexSmallK checks that a k beyond the index's size, up to the largest
// int, returns every vector (it must not size anything by k).
func indexSmallK(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	r := newRand(t)
	f := build(t, newStore, newIndex, vector.Cosine, 6, 17, r)
	for _, k := range []int{100, 1 << 40, math.MaxInt} {
		f.check(t, randVec(r, 6), k, nil, nil, true)
	}
}

// indexStoreClosed checks that searches and writes over a closed store
// fail with ErrClosed, rather than answer from what the index still
// holds. Stores that cannot be closed (no Close method) are not tried.
func indexStoreClosed(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	s := newStore(t, 8, vector.L2)
	closer, ok := s.(io.Closer)
	if !ok {
		return
	}
	idx := newIndex(t, s)
	ctx := context.Background()
	r := newRand(t)
	for i := range 200 {
		if err := idx.Add(ctx, vector.ID(i), randVec(r, 8)); err != nil {
			t.Fatal(err)
		}
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	q := randVec(r, 8)
	for name, opts := range map[string]*vector.SearchOptions{
		"plain":     nil,
		"small set": {Filter: vector.NewIDSet(3, 5, 7)},
		"large set": {Filter: vector.NewIDSet(idRange(0, 150)...)},
		"func":      {Filter: vector.FilterFunc(func(id vector.ID) bool { return id%2 == 0 })},
	} {
		if got, err := idx.Search(ctx, q, 5, opts); !errors.Is(err, vector.ErrClosed) {
			t.Errorf("Search (%s) after the store's Close = %v, %v; want ErrClosed", name, got, err)
		}
	}
	if err := idx.Add(ctx, 1000, q); !errors.Is(err, vector.ErrClosed) {
		t.Errorf("Add after the store's Close: %v; want ErrClosed", err)
	}
	if err := idx.Delete(ctx, 3); !errors.Is(err, vector.ErrClosed) {
		t.Errorf("Delete after the store's Close: %v; want ErrClosed", err)
	}
}

func idRange(lo, hi int) []vector.ID {
	ids := make([]vector.ID, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ids = append(ids, vector.ID(i))
	}
	return ids
}

func indexDelete(t *testing.T, newStore StoreFactory, newIndex IndexFactory, cfg IndexConfig) {
	r := newRand(t)
	f := build(t, newStore, newIndex, vector.L2, 12, 300, r)
	ctx := context.Background()
	for id := range f.data {
		if id%2 == 0 {
			if err := f.idx.Delete(ctx, id); err != nil {
				t.Fatalf("Delete(%d): %v", id, err)
			}
			delete(f.data, id)
		}
	}
	if f.idx.Len() != len(f.data) {
		t.Fatalf("Len = %d, want %d", f.idx.Len(), len(f.data))
	}
	var sum float64
	for range 20 {
		sum += f.check(t, randVec(r, 12), 10, nil, nil, !cfg.Approximate)
	}
	// Re-adding an id under a new vector (an update) works.
	for i := range 50 {
		id := vector.ID(i*6 + 4)
		if _, ok := f.data[id]; ok {
			continue
		}
		v := randVec(r, 12)
		if err := f.idx.Add(ctx, id, v); err != nil {
			t.Fatalf("re-Add(%d): %v", id, err)
		}
		f.data[id] = v
		got, err := f.idx.Search(ctx, v, 1, nil)
		if err != nil || len(got) == 0 || got[0].ID != id {
			t.Fatalf("re-added %d is not its own nearest: %v %v", id, got, err)
		}
	}
	for range 20 {
		sum += f.check(t, randVec(r, 12), 10, nil, nil, !cfg.Approximate)
	}
	if rec := sum / 40; rec < cfg.MinRecall {
		t.Fatalf("recall@10 after deletes = %.3f, want >= %.2f", rec, cfg.MinRecall)
	}
}

func indexFilter(t *testing.T, newStore StoreFactory, newIndex IndexFactory, cfg IndexConfig) {
	r := newRand(t)
	f := build(t, newStore, newIndex, vector.Cosine, 16, 600, r)
	// A filter admitting one item in ten must still yield k results.
	tenth := func(id vector.ID) bool { return id%10 == 1 }
	opts := &vector.SearchOptions{Filter: vector.FilterFunc(tenth)}
	for range 10 {
		f.check(t, randVec(r, 16), 10, opts, tenth, !cfg.Approximate)
	}
	// A small allow-list is searched exactly, whatever the index.
	set := vector.NewIDSet(1, 4, 301, 1000, 1795, 555555)
	in := set.Allow
	for range 5 {
		f.check(t, randVec(r, 16), 10, &vector.SearchOptions{Filter: set}, in, true)
	}
	// A filter that admits nothing gives no results.
	none := &vector.SearchOptions{Filter: vector.FilterFunc(func(vector.ID) bool { return false })}
	if got, err := f.idx.Search(context.Background(), randVec(r, 16), 5, none); err != nil || len(got) != 0 {
		t.Fatalf("Search(deny all) = %v, %v", got, err)
	}
}

func indexBatch(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	idx := newIndex(t, newStore(t, 8, vector.Dot))
	ba, ok := idx.(vector.BatchAdder)
	if !ok {
		t.Skip("index has no AddBatch")
	}
	r := newRand(t)
	ctx := context.Background()
	ids := make([]vector.ID, 200)
	vs := make([]vector.Vector, 200)
	for i := range ids {
		ids[i] = vector.ID(i)
		vs[i] = randVec(r, 8)
	}
	bad := append([]vector.Vector(nil), vs...)
	bad[150] = vector.Vector{1}
	if err := ba.AddBatch(ctx, ids, bad); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Fatalf("AddBatch(bad) = %v", err)
	}
	if idx.Len() != 0 {
		t.Fatalf("Len = %d after failed AddBatch", idx.Len())
	}
	if err := ba.AddBatch(ctx, ids, vs); err != nil {
		t.Fatal(err)
	}
	f := &fixture{idx: idx, data: map[vector.ID]vector.Vector{}, m: vector.Dot, dim: 8}
	for i, id := range ids {
		f.data[id] = vs[i]
	}
	f.check(t, randVec(r, 8), 10, nil, nil, false)
	if err := ba.AddBatch(ctx, []vector.ID{5000, 3}, vs[:2]); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("AddBatch(existing) = %v", err)
	}
	if idx.Len() != 200 {
		t.Fatalf("Len = %d after rejected AddBatch", idx.Len())
	}
}

func indexTrack(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	s := newStore(t, 6, vector.L2)
	idx := newIndex(t, s)
	tr, ok := idx.(vector.Tracker)
	if !ok {
		t.Skip("index is not a Tracker")
	}
	r := newRand(t)
	ctx := context.Background()
	f := &fixture{idx: idx, data: map[vector.ID]vector.Vector{}, m: vector.L2, dim: 6}
	var ids []vector.ID
	for i := range 100 {
		id := vector.ID(i + 10)
		v := randVec(r, 6)
		if err := s.Put(ctx, id, v); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		f.data[id] = v
	}
	if err := tr.Track(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if idx.Len() != 100 {
		t.Fatalf("Len = %d after Track", idx.Len())
	}
	f.check(t, randVec(r, 6), 10, nil, nil, false)
	if err := tr.Track(ctx, []vector.ID{999}); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Track(not stored) = %v, want ErrNotFound", err)
	}
	if err := tr.Track(ctx, ids[:1]); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("Track(already indexed) = %v, want ErrDuplicateID", err)
	}
	// A repeated id: its second removal finds it gone, so nothing goes.
	if err := tr.Untrack(ctx, []vector.ID{ids[0], ids[1], ids[0]}); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Untrack(repeated id) = %v, want ErrNotFound", err)
	}
	if idx.Len() != 100 {
		t.Fatalf("Len = %d after a refused Untrack, want 100", idx.Len())
	}
	if err := tr.Untrack(ctx, ids[:50]); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:50] {
		delete(f.data, id)
		if _, err := s.Get(id); err != nil {
			t.Fatalf("Untrack removed %d from the store: %v", id, err)
		}
	}
	f.check(t, randVec(r, 6), 10, nil, nil, false)
	if err := tr.Untrack(ctx, ids[:1]); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Untrack(not indexed) = %v, want ErrNotFound", err)
	}
	if err := tr.Track(ctx, []vector.ID{ids[0], ids[0]}); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("Track(repeated id) = %v, want ErrDuplicateID", err)
	}
	if idx.Len() != 50 {
		t.Fatalf("Len = %d after a refused Track, want 50", idx.Len())
	}
}

func indexCancelled(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	r := newRand(t)
	f := build(t, newStore, newIndex, vector.Cosine, 8, 50, r)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.idx.Search(ctx, randVec(r, 8), 5, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Search(cancelled) = %v, want context.Canceled", err)
	}
	if err := f.idx.Add(ctx, 77777, randVec(r, 8)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add(cancelled) = %v, want context.Canceled", err)
	}
	if f.idx.Len() != 50 {
		t.Fatalf("Len = %d after cancelled Add", f.idx.Len())
	}
}

func indexConcurrent(t *testing.T, newStore StoreFactory, newIndex IndexFactory) {
	const dim = 8
	idx := newIndex(t, newStore(t, dim, vector.Cosine))
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for i := range 150 {
				id := vector.ID(w*1000 + i)
				if err := idx.Add(ctx, id, randVec(r, dim)); err != nil {
					t.Errorf("Add(%d): %v", id, err)
					return
				}
				if i%4 == 0 {
					if err := idx.Delete(ctx, id); err != nil {
						t.Errorf("Delete(%d): %v", id, err)
					}
				}
			}
		})
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 4))
			for range 150 {
				res, err := idx.Search(ctx, randVec(r, dim), 5, nil)
				if err != nil {
					t.Errorf("Search: %v", err)
					return
				}
				for i := 1; i < len(res); i++ {
					if res[i].Less(res[i-1]) {
						t.Errorf("unsorted results under concurrency")
					}
				}
			}
		})
	}
	wg.Wait()
	if got, want := idx.Len(), 3*(150-38); got != want {
		t.Fatalf("Len after concurrent adds and deletes = %d, want %d", got, want)
	}
}
