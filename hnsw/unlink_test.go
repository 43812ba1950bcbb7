package hnsw_test

// This file holds the test of unlinking under load: most of a graph
// untracked, a few ids at a time as expiry does, while searches and
// inserts run.

import (
	"bytes"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestUnlinkUnderLoad untracks 70% of a graph of 2,000, 16 ids at a time, while two
// goroutines search and one inserts new vectors (which may link to nodes
// of a batch being unlinked), under -race. Every result must be an id
// indexed when its search began and not untracked before it, at its exact
// distance, in order, and k of them once the inserts are done; tombstones must stay within 1.5 batches while the
// untracks go on; after a Flush the graph must verify, hold no
// tombstones, and reach recall@10 within 0.03 of a fresh build of the
// same vectors.
func TestUnlinkUnderLoad(t *testing.T) {
	const (
		n, extra, dim = 2000, 200, 32
		step          = 16
	)
	ds := recall.Clustered(n+extra, 50, dim, 11)
	o := &hnsw.Options{M: 8, EfConstruction: 64, Workers: 2}
	s := memStore(t, dim, ds.Metric)
	ix := newIndex(t, s, o)
	ctx := context.Background()
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base[:n]); err != nil {
		t.Fatal(err)
	}
	// The first 70% of ids go, in order: untracked counts those gone so
	// far, added the extra vectors linked so far.
	gone := n * 7 / 10
	var untracked, added atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for qi := w; ; qi++ {
				select {
				case <-stop:
					return
				default:
				}
				q := ds.Queries[qi%len(ds.Queries)]
				before, linked := int(untracked.Load()), int(added.Load())
				res, err := ix.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: 32})
				if err != nil {
					t.Error(err)
					return
				}
				for i, r := range res {
					id := int(r.ID)
					switch {
					case id < before:
						t.Errorf("search returned id %d, untracked before it began (%d gone)", id, before)
					case id >= n+extra || id >= n && id-n > int(added.Load()): // one Add may be in flight
						t.Errorf("search returned id %d, never indexed", id)
					}
					if id < 0 || id >= len(ds.Base) {
						return
					}
					want := 1 - vector.InnerProduct(q, ds.Base[id])
					if math.Abs(float64(r.Distance-want)) > 1e-5 {
						t.Errorf("id %d at distance %v, want %v", id, r.Distance, want)
					}
					if i > 0 && r.Distance < res[i-1].Distance {
						t.Errorf("results out of order: %v", res)
					}
				}
				// While an insert runs, a search may land on its node
				// before the node has links on layer 0 (inserts link top
				// down) and come back short: count only once they are done.
				if len(res) < 10 && linked == extra {
					t.Errorf("%d results with %d indexed", len(res), n-before+extra)
				}
				if t.Failed() {
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := n; i < n+extra; i++ {
			if err := ix.Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
				t.Error(err)
				return
			}
			added.Add(1)
		}
	})
	maxPending, maxBatch := 0, 0
	for i := 0; i < gone; i += step {
		chunk := ids[i:min(i+step, gone)]
		if err := ix.Untrack(ctx, chunk); err != nil {
			t.Fatal(err)
		}
		untracked.Store(int64(i + len(chunk)))
		if i%(8*step) == 0 {
			st := ix.Stats()
			batch := max(32, (st.Len+st.Deleted)/8)
			if st.Deleted > maxPending {
				maxPending, maxBatch = st.Deleted, batch
			}
			if st.Deleted > batch*3/2+step {
				t.Errorf("%d tombstones of %d nodes, more than 1.5 batches of %d", st.Deleted, st.Len+st.Deleted, batch)
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("at most %d tombstones pending (batch %d)", maxPending, maxBatch)
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Deleted != 0 || st.Len != n-gone+extra {
		t.Fatalf("after Flush: %d deleted, Len %d; want 0 and %d", st.Deleted, st.Len, n-gone+extra)
	}

	// Recall over the remaining vectors, ids renumbered, against a fresh
	// build of them.
	rest := &recall.Dataset{Name: "rest", Dim: dim, Metric: ds.Metric, Queries: ds.Queries, Base: ds.Base[gone:]}
	truth, err := recall.GroundTruth(ctx, rest, 10)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := build(t, rest, o)
	const ef = 16
	var after float64
	for qi, q := range ds.Queries {
		got, err := ix.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: ef})
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i].ID -= vector.ID(gone)
		}
		after += recall.At(got, truth[qi], 10)
	}
	after /= float64(len(ds.Queries))
	want := meanRecall(t, fresh, rest, truth, 10, ef)
	t.Logf("ef=%d recall@10 after untracking %d of %d under load: %.4f, fresh build: %.4f", ef, gone, n, after, want)
	if after < want-0.03 {
		t.Errorf("recall after untracking %.4f, more than 0.03 below a fresh build (%.4f)", after, want)
	}
}

// TestBatchInterrupted leaves a batch half unlinked (deletes one at a time
// just past a batch), then checks that Verify, WriteTo and, over another
// batch in progress, ReadFrom and further untracks leave a sound graph.
func TestBatchInterrupted(t *testing.T) {
	ds := recall.Clustered(1000, 5, 16, 12)
	o := &hnsw.Options{M: 8, EfConstruction: 64}
	ix, _ := build(t, ds, o)
	ctx := context.Background()
	for i := range 130 { // a batch is 125; the first Delete past it scans 17 slots
		if err := ix.Delete(ctx, vector.ID(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Deleted != 130 {
		t.Fatalf("%d deleted pending, want 130 (the batch half done)", st.Deleted)
	}
	// A copy of the graph as it is, for ReadFrom; WriteTo finishes the
	// batch and the rest.
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Deleted != 0 || st.Len != 870 {
		t.Fatalf("after WriteTo: %d deleted, Len %d", st.Deleted, st.Len)
	}
	// Over a batch in progress (untracked: the store keeps the vectors, so
	// the copy still matches it), ReadFrom replaces it.
	for i := 130; i < 270; i++ {
		if err := ix.Untrack(ctx, []vector.ID{vector.ID(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if st := ix.Stats(); st.Deleted == 0 {
		t.Fatal("no batch in progress")
	}
	if _, err := ix.ReadFrom(&buf); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Deleted != 0 || st.Len != 870 {
		t.Fatalf("after ReadFrom: %d deleted, Len %d", st.Deleted, st.Len)
	}
	for i := 130; i < 400; i++ {
		if err := ix.Untrack(ctx, []vector.ID{vector.ID(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	re := ix
	got, err := re.SearchWith(ctx, ds.Queries[0], 10, &hnsw.SearchOptions{Ef: 64})
	if err != nil || len(got) != 10 {
		t.Fatalf("search: %v, %d results", err, len(got))
	}
	for _, r := range got {
		if r.ID < 400 {
			t.Fatalf("search returned removed id %d", r.ID)
		}
	}
	if err := re.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := re.Verify(); err != nil {
		t.Fatal(err)
	}
	if st := re.Stats(); st.Deleted != 0 || st.Len != 600 {
		t.Fatalf("after Flush: %d deleted, Len %d", st.Deleted, st.Len)
	}
}
