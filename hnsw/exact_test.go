package hnsw_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// slotStore is a MemStore without its arena: an index over it scores its
// own vectors in the exact search.
type slotStore struct{ vector.Store }

// tiedIndex builds an index over n 32-d vectors of which every fifth
// repeats one of eight vectors, so that exact results have ties, then
// deletes a few ids and untracks a few more (they stay in the store).
func tiedIndex(t *testing.T, s vector.Store, n int) (ix *hnsw.Index, gone map[vector.ID]bool, ds *recall.Dataset) {
	t.Helper()
	ctx := context.Background()
	ds = recall.Clustered(n, 20, 32, 5)
	for i := range ds.Base {
		if i%5 == 0 {
			ds.Base[i] = slices.Clone(ds.Base[i%40])
		}
	}
	ix = newIndex(t, s, &hnsw.Options{M: 8, EfConstruction: 32})
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	gone = map[vector.ID]bool{}
	for _, id := range []vector.ID{1, 6, 41, 500, vector.ID(n)} { // ids 1 and 41 hold one vector
		if err := ix.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	untracked := []vector.ID{11, 16, 81, 777}
	if err := ix.Untrack(ctx, untracked); err != nil {
		t.Fatal(err)
	}
	for _, id := range untracked {
		gone[id] = true
	}
	return ix, gone, ds
}

// TestSearchAllMatchesFlat: the index's exact search, split across
// workers, returns what flat's scan of the same store returns, ties and
// their order by id included, with and without a filter, leaving out the
// vectors the store holds but the graph does not.
func TestSearchAllMatchesFlat(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	s := memStore(t, 32, vector.Cosine)
	ix, gone, ds := tiedIndex(t, s, 4200)
	ex := flat.New(s)
	odd := vector.FilterFunc(func(id vector.ID) bool { return id%2 == 1 })
	for qi, q := range append(ds.Queries, ds.Base[0], ds.Base[77]) {
		pq, err := vector.Prepare(q, 32, vector.Cosine)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			k      int
			filter vector.Filter
		}{{"all", 10, nil}, {"k=100", 100, nil}, {"odd", 25, odd}} {
			allow := vector.FilterFunc(func(id vector.ID) bool {
				return !gone[id] && (c.filter == nil || c.filter.Allow(id))
			})
			want, err := ex.Search(ctx, q, c.k, &vector.SearchOptions{Filter: allow})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ix.SearchAll(ctx, pq, c.k, c.filter)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("query %d, %s: exact search\n got %v\nwant %v", qi, c.name, got, want)
			}
		}
	}
	// A query equal to a repeated vector ties with all its copies: they
	// come back in id order.
	pq, _ := vector.Prepare(ds.Base[3*5], 32, vector.Cosine)
	got, _ := ix.SearchAll(ctx, pq, 8, nil)
	if len(got) != 8 || got[0].Distance != got[1].Distance || got[0].ID > got[1].ID {
		t.Errorf("ties: %v", got)
	}
}

// TestSearchAllOwnVectors: over a store that lends no arena the exact
// search scores the graph's own vectors, in parallel, and finds the same
// neighbours as flat (distances to within rounding: the kernels group the
// vectors differently).
func TestSearchAllOwnVectors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	ms := memStore(t, 32, vector.L2)
	ix, gone, ds := tiedIndex(t, slotStore{ms}, 4200)
	ex := flat.New(ms)
	allow := vector.FilterFunc(func(id vector.ID) bool { return !gone[id] })
	for qi, q := range ds.Queries {
		want, err := ex.Search(ctx, q, 10, &vector.SearchOptions{Filter: allow})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.SearchAll(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("query %d: %d results, want %d", qi, len(got), len(want))
		}
		for i := range got {
			if math.Abs(float64(got[i].Distance-want[i].Distance)) > 1e-4*math.Max(1, math.Abs(float64(want[i].Distance))) {
				t.Fatalf("query %d: result %d is %v, want %v", qi, i, got[i], want[i])
			}
		}
	}
}

// TestSearchAllCancelled: a cancelled context ends the exact search with
// its error, on both paths.
func TestSearchAllCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, s := range map[string]vector.Store{
		"arena": memStore(t, 32, vector.Cosine), "slots": slotStore{memStore(t, 32, vector.Cosine)},
	} {
		ix, _, ds := tiedIndex(t, s, 4200)
		pq, _ := vector.Prepare(ds.Queries[0], 32, vector.Cosine)
		if _, err := ix.SearchAll(ctx, pq, 10, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: exact search with a cancelled context = %v, want context.Canceled", name, err)
		}
	}
}

// TestTargetExactMatchesFlat: an index with a recall target too small to
// calibrate answers exactly, through Search, what flat answers.
func TestTargetExactMatchesFlat(t *testing.T) {
	ctx := context.Background()
	s := memStore(t, 16, vector.Dot)
	ds := recall.Uniform(400, 30, 16, 9)
	ix := newIndex(t, s, &hnsw.Options{TargetRecall: 0.99})
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	ex := flat.New(s)
	for _, q := range ds.Queries {
		got, err := ix.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ex.Search(ctx, q, 10, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("exact search %v, want %v", got, want)
		}
	}
	if st := ix.TargetSearches(); st.Exact != int64(len(ds.Queries)) {
		t.Errorf("TargetSearches = %+v, want %d exact", st, len(ds.Queries))
	}
}
