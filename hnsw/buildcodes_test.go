package hnsw_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestBuildCodesRecall builds the same set in one batch twice, walking
// int8 codes and walking the float32 vectors, and checks that the codes
// are kept after the batch and dropped by the first search, and that the
// graph built on them is as good: recall@10 at ef = 10 within 0.01 of
// the other's, under every metric. One worker builds each, so that the
// figures are the same on every run (two workers moved them by 0.013
// from run to run at the size the race detector runs).
func TestBuildCodesRecall(t *testing.T) {
	n := 4000
	metrics := []vector.Metric{vector.Cosine, vector.L2, vector.Dot}
	if raceEnabled {
		// One worker builds, so the race detector has nothing to check
		// but the one goroutine: 1,500 vectors and one metric there
		// (2 s rather than 7); the plain run checks all three at 4,000.
		n, metrics = 1500, metrics[:1]
	}
	for _, m := range metrics {
		t.Run(m.String(), func(t *testing.T) {
			ds := recall.Clustered(n, 200, 256, 3)
			ds.Metric = m
			truth, err := recall.GroundTruth(context.Background(), ds, 10)
			if err != nil {
				t.Fatal(err)
			}
			build := func(codes bool) float64 {
				ix := buildInBatches(t, ds, &hnsw.Options{M: 8, EfConstruction: 64, Workers: 1}, codes, n)
				if b := ix.Stats().Memory.Build; (b > 0) != codes {
					t.Errorf("codes=%v: %d bytes of build codes after the batch", codes, b)
				}
				if err := ix.Verify(); err != nil {
					t.Fatal(err)
				}
				r := meanRecall(t, ix, ds, truth, 10, 10)
				if b := ix.Stats().Memory.Build; b != 0 {
					t.Errorf("codes=%v: %d bytes of build codes after searches, want 0", codes, b)
				}
				return r
			}
			withCodes, without := build(true), build(false)
			t.Logf("recall@10 at ef 10: built walking codes %.4f, float32 %.4f", withCodes, without)
			if withCodes < without-0.01 {
				t.Errorf("recall@10 after a build on codes %.4f, on float32 %.4f", withCodes, without)
			}
		})
	}
}

// TestBuildCodesLifecycle checks when the codes are made and dropped: a
// large batch makes them, a small one that follows keeps them (and
// encodes its own), a search beside a batch leaves them to the end of
// the batch, Flush drops them, and a small batch makes none.
func TestBuildCodesLifecycle(t *testing.T) {
	od, ob := hnsw.SetBuildCodes(1, 500)
	defer hnsw.SetBuildCodes(od, ob)
	ds := recall.Clustered(3000, 10, 64, 2)
	ctx := context.Background()
	var ix *hnsw.Index
	var during atomic.Int64 // build code bytes after a search beside the batch
	searchBeside := atomic.Bool{}
	ix = newIndex(t, memStore(t, ds.Dim, ds.Metric), &hnsw.Options{M: 6, EfConstruction: 32, Workers: 1,
		Progress: func(done, total int) {
			if searchBeside.Load() && done < total && during.Load() == 0 {
				if _, err := ix.Search(ctx, ds.Queries[0], 3, nil); err != nil {
					t.Error(err)
				}
				during.Store(ix.Stats().Memory.Build)
			}
		}})
	build := func() int64 { return ix.Stats().Memory.Build }
	if err := ix.AddBatch(ctx, seqIDs(0, 100), ds.Base[:100]); err != nil {
		t.Fatal(err)
	}
	if b := build(); b != 0 {
		t.Fatalf("a batch of 100 made %d bytes of codes", b)
	}
	if err := ix.AddBatch(ctx, seqIDs(100, 1000), ds.Base[100:1000]); err != nil {
		t.Fatal(err)
	}
	first := build()
	if first == 0 {
		t.Fatal("a batch of 900 made no codes")
	}
	// Past the room of the first table (twice 1,024 slots): the codes
	// grow and stay.
	if err := ix.AddBatch(ctx, seqIDs(1000, 2200), ds.Base[1000:2200]); err != nil {
		t.Fatal(err)
	}
	if b := build(); b <= first {
		t.Fatalf("codes of %d bytes after growing past %d", b, first)
	}
	if err := ix.Add(ctx, 2200, ds.Base[2200]); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if b := build(); b != 0 {
		t.Fatalf("%d bytes of codes after Flush", b)
	}
	searchBeside.Store(true)
	if err := ix.AddBatch(ctx, seqIDs(2201, 3000), ds.Base[2201:3000]); err != nil {
		t.Fatal(err)
	}
	if during.Load() == 0 {
		t.Error("a search beside the batch dropped its codes")
	}
	if b := build(); b != 0 {
		t.Errorf("%d bytes of codes after a batch that a search ran beside", b)
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestBuildCodesConcurrent runs a batch that walks codes beside searches
// and deletes (run under -race), with single adds made from inside the
// batch that grow the index past the codes' room, which grows them; then
// checks the graph and that every id left is found by its own vector.
func TestBuildCodesConcurrent(t *testing.T) {
	od, ob := hnsw.SetBuildCodes(1, 500)
	defer hnsw.SetBuildCodes(od, ob)
	ds := recall.Clustered(4600, 40, 192, 5)
	s := memStore(t, ds.Dim, ds.Metric)
	ctx := context.Background()
	var (
		ix            *hnsw.Index
		armed         atomic.Bool
		once          sync.Once
		during, after int64 // build code bytes before and after the singles
	)
	// The first report of the second batch adds singles until the index
	// has more slots than the codes have room for.
	grow := func(done, total int) {
		if !armed.Load() || done == total {
			return
		}
		once.Do(func() {
			during = ix.Stats().Memory.Build
			for i := 2000; i < len(ds.Base); i++ {
				if err := ix.Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
					t.Error(err)
					return
				}
			}
			after = ix.Stats().Memory.Build
		})
	}
	ix = newIndex(t, s, &hnsw.Options{M: 6, EfConstruction: 32, Workers: 2, Progress: grow})
	if err := ix.AddBatch(ctx, seqIDs(0, 600), ds.Base[:600]); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := ix.AddBatch(ctx, seqIDs(600, 2000), ds.Base[600:2000]); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		for i := 0; i < 600; i += 3 {
			if err := ix.Delete(ctx, vector.ID(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range 300 {
			if _, err := ix.Search(ctx, ds.Queries[i%len(ds.Queries)], 5, nil); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if during == 0 || after <= during {
		t.Errorf("build code bytes: %d while the batch ran, %d after the singles; want more than 0, then more", during, after)
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	missed := 0
	for i := range ds.Base {
		res, err := ix.SearchWith(ctx, ds.Base[i], 1, &hnsw.SearchOptions{Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		deleted := i < 600 && i%3 == 0
		if !deleted && (len(res) == 0 || res[0].ID != vector.ID(i)) {
			missed++
		}
		if deleted && len(res) > 0 && res[0].ID == vector.ID(i) {
			t.Errorf("deleted id %d found", i)
		}
	}
	if missed > len(ds.Base)/100 {
		t.Errorf("%d of %d ids not found by their own vector", missed, len(ds.Base))
	}
	if b := ix.Stats().Memory.Build; b != 0 {
		t.Errorf("%d bytes of build codes after searches, want 0", b)
	}
	if !errors.Is(ix.Delete(ctx, 0), vector.ErrNotFound) {
		t.Error("id 0 deleted twice")
	}
}

// buildInBatches returns a new index with options o holding the first
// vectors of ds's base, added in batches of the sizes given, each of at
// least 1,000 vectors making build codes (any dimension) if codes, none
// ever making them if not.
func buildInBatches(t *testing.T, ds *recall.Dataset, o *hnsw.Options, codes bool, sizes ...int) *hnsw.Index {
	t.Helper()
	minDim := 1 << 30
	if codes {
		minDim = 1
	}
	od, ob := hnsw.SetBuildCodes(minDim, 1000)
	defer hnsw.SetBuildCodes(od, ob)
	ix := newIndex(t, memStore(t, ds.Dim, ds.Metric), o)
	lo := 0
	for _, n := range sizes {
		if err := ix.AddBatch(context.Background(), seqIDs(lo, lo+n), ds.Base[lo:lo+n]); err != nil {
			t.Fatal(err)
		}
		lo += n
	}
	return ix
}

// seqIDs returns the ids from lo to hi, hi excluded.
func seqIDs(lo, hi int) []vector.ID {
	ids := make([]vector.ID, hi-lo)
	for i := range ids {
		ids[i] = vector.ID(lo + i)
	}
	return ids
}

// TestBuildCodesDrift builds in batches whose data drift far outside the
// ranges the codes were trained on, too little of it at a time for a
// batch of its own to make codes: the codes must be made again, or the
// inserts walk the float32 vectors, and recall hold against a build that
// never walks codes.
func TestBuildCodesDrift(t *testing.T) {
	ctx := context.Background()
	n, more := 6000, 2000
	if raceEnabled {
		// One worker builds (nothing for the race detector to check but
		// the one goroutine): half the vectors there, 3 s rather than 6;
		// the plain run checks the full drift.
		n, more = 3000, 1000
	}
	ds := driftSet(n, more)
	truth, err := recall.GroundTruth(ctx, ds, 10)
	if err != nil {
		t.Fatal(err)
	}
	build := func(codes bool) float64 {
		ix := buildInBatches(t, ds, &hnsw.Options{M: 8, EfConstruction: 48, Workers: 1}, codes, n, more/4, more/4, more/4, more/4)
		return meanRecall(t, ix, ds, truth, 10, 32)
	}
	withCodes, without := build(true), build(false)
	t.Logf("recall@10 at ef 32 on the drifted queries: built walking codes %.4f, float32 %.4f", withCodes, without)
	if withCodes < without-0.02 {
		t.Errorf("recall@10 after a drifting build on codes %.4f, on float32 %.4f", withCodes, without)
	}
}

// TestBuildCodesQuantizedRows checks that an index that keeps int8 codes
// in its rows makes build codes only before it has trained any: its
// first batch walks a table of its own, the batches after it the rows'
// codes, and the table is gone.
func TestBuildCodesQuantizedRows(t *testing.T) {
	od, ob := hnsw.SetBuildCodes(1, 500)
	defer hnsw.SetBuildCodes(od, ob)
	ds := recall.Clustered(3000, 100, 64, 4)
	ctx := context.Background()
	ix := newIndex(t, memStore(t, ds.Dim, ds.Metric), &hnsw.Options{M: 8, EfConstruction: 48, Quantize: hnsw.QuantizeInt8})
	if err := ix.AddBatch(ctx, seqIDs(0, 1000), ds.Base[:1000]); err != nil {
		t.Fatal(err)
	}
	if b := ix.Stats().Memory.Build; b == 0 {
		t.Fatal("the first batch made no build codes")
	}
	if ix.Quantizer() == nil {
		t.Fatal("no row codes after the first batch")
	}
	if err := ix.AddBatch(ctx, seqIDs(1000, 3000), ds.Base[1000:]); err != nil {
		t.Fatal(err)
	}
	if b := ix.Stats().Memory.Build; b != 0 {
		t.Errorf("%d bytes of build codes beside the rows' codes", b)
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	truth, err := recall.GroundTruth(ctx, ds, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r := meanRecall(t, ix, ds, truth, 10, 32); r < 0.95 {
		t.Errorf("recall@10 at ef 32: %.4f", r)
	}
}
