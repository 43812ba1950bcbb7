package cairn

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/route"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// stubRoute replaces route.Choose, for the test's life, by one that takes
// the graph's calibration as the real one does (on the recorded queries
// given) and returns *verdict, with the index of that kind; it counts its
// calls in *calls.
func stubRoute(t *testing.T, verdict *IndexKind, calls *int) {
	saved := chooseRouteFunc
	t.Cleanup(func() { chooseRouteFunc = saved })
	chooseRouteFunc = func(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID, qo *qflat.Options, recorded [][]float32, _ bool) (route.Verdict, error) {
		*calls++
		if _, err := route.Calibration(ctx, g, len(ids), len(recorded), false); err != nil {
			return route.Verdict{}, err
		}
		switch *verdict {
		case Flat:
			return route.Verdict{Kind: route.Flat, Index: flat.New(st)}, nil
		case QFlat:
			q, err := qflat.New(st, qo)
			if err != nil {
				return route.Verdict{}, err
			}
			return route.Verdict{Kind: route.QFlat, Index: q}, q.Track(ctx, ids)
		}
		return route.Verdict{Kind: route.HNSW, Index: g}, nil
	}
}

// routedCollection creates the collection name in the file at path: Auto,
// 16-d, switching at 600 items, with a recall target.
func routedCollection(t *testing.T, path, name string) (*DB, *Collection) {
	t.Helper()
	db, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.GetOrCreateCollection(context.Background(), name, CollectionConfig{Dim: 16, AutoThreshold: 600, HNSW: hnsw.Options{TargetRecall: 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	return db, c
}

// addRange adds base[lo:hi] to c under the keys "k<i>".
func addRange(t *testing.T, c *Collection, base []vector.Vector, lo, hi int) {
	t.Helper()
	items := make([]Item, 0, hi-lo)
	for i := lo; i < hi; i++ {
		items = append(items, Item{ID: fmt.Sprint("k", i), Embedding: base[i]})
	}
	if err := c.Add(context.Background(), items...); err != nil {
		t.Fatal(err)
	}
}

// TestAutoTargetRouting checks what an Auto collection with a recall target
// does with route.Choose's verdict (stubbed here; the timing itself is
// measured by vecbench): it stays exact while a scan wins, measures again
// in the background once it has doubled, and switches when the graph wins.
// Its file keeps the verdict (once a write has saved it: a session that
// only reads writes nothing): reopened, it measures again only once the
// collection has halved since the graph won, or doubled since a scan won.
func TestAutoTargetRouting(t *testing.T) {
	ctx := context.Background()
	verdict, calls := Flat, 0
	stubRoute(t, &verdict, &calls)
	path := filepath.Join(t.TempDir(), "auto.db")
	db, c := routedCollection(t, path, "c")
	base := recall.Clustered(2200, 0, 16, 3).Base
	addRange(t, c, base, 0, 700)
	if got := mustInfo(t, c); calls != 1 || got.Index != Flat || got.Recall.Calibration != nil {
		t.Fatalf("after 700 items, the exact scan winning: %d measurements, %+v", calls, got)
	}
	addRange(t, c, base, 700, 1300) // 1,300 < 2 × 700: no new measurement
	if calls != 1 || mustInfo(t, c).Index != Flat {
		t.Fatalf("after 1,300 items: %d measurements, index %v", calls, mustInfo(t, c).Index)
	}
	verdict = HNSW
	addRange(t, c, base, 1300, 1500) // ≥ 1,400: measured again, in the background, and now the graph wins
	waitRemeasured(t, c)
	info := mustInfo(t, c)
	if calls != 2 || info.Index != HNSW || info.Recall.Calibration == nil || info.Recall.Calibration.Target != 0.9 {
		t.Fatalf("after 1,500 items, the graph winning: %d measurements, %+v", calls, info)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, the graph's verdict stands: nothing is measured.
	verdict = Flat
	db, c = routedCollection(t, path, "c")
	if got := mustInfo(t, c); calls != 2 || got.Index != HNSW || got.Recall.Route == nil || got.Recall.Route.Len != 1500 {
		t.Fatalf("reopened after the graph won: %d measurements, %+v", calls, got)
	}
	// Halved since: the next open measures again, and the scan wins.
	var gone []string
	for i := range 800 {
		gone = append(gone, fmt.Sprint("k", i))
	}
	if err := c.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, c = routedCollection(t, path, "c")
	if got := mustInfo(t, c); calls != 3 || got.Index != Flat || got.Config.HNSW.TargetRecall != 0.9 {
		t.Fatalf("reopened at 700 items, the exact scan winning: %d measurements, %+v", calls, got)
	}
	hits, err := c.Query(ctx, base[805], 3, nil)
	if err != nil || len(hits) != 3 || hits[0].Similarity < 0.999 {
		t.Fatalf("query after reopen: %v, %v", hits, err)
	}
	// A session that only read leaves the file as it was: the verdict of
	// its open is not kept, and the next open measures again.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, c = routedCollection(t, path, "c")
	if got := mustInfo(t, c); calls != 4 || got.Index != Flat {
		t.Fatalf("reopened after a session that only read: %d measurements, %+v", calls, got)
	}
	// A write saves the verdict with it.
	if err := c.Upsert(ctx, Item{ID: "k805", Embedding: base[805]}); err != nil {
		t.Fatal(err)
	}
	// Reopened again, before doubling: the verdict is remembered, nothing
	// is built or measured.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	verdict = HNSW
	db, c = routedCollection(t, path, "c")
	defer db.Close()
	if got := mustInfo(t, c); calls != 4 || got.Index != Flat {
		t.Fatalf("reopened after the exact scan won: %d measurements, %+v", calls, got)
	}
	addRange(t, c, base, 1500, 2099) // 1,299 < 2 × 700: still no measurement
	if calls != 4 || mustInfo(t, c).Index != Flat {
		t.Fatalf("after 1,299 items: %d measurements, index %v", calls, mustInfo(t, c).Index)
	}
	addRange(t, c, base, 2099, 2200) // ≥ 1,400: measured again, and the graph wins
	waitRemeasured(t, c)
	if got := mustInfo(t, c); calls != 5 || got.Index != HNSW {
		t.Fatalf("after 1,400 items: %d measurements, %+v", calls, got)
	}
}

// TestAutoTargetRoutingQFlat: when the approximate scan wins, an Auto
// collection searches with it, keeps it up to date through writes, keeps
// it across reopen until the collection has doubled, and then measures
// again.
func TestAutoTargetRoutingQFlat(t *testing.T) {
	ctx := context.Background()
	verdict, calls := QFlat, 0
	stubRoute(t, &verdict, &calls)
	path := filepath.Join(t.TempDir(), "auto.db")
	db, c := routedCollection(t, path, "q")
	base := recall.Uniform(1500, 0, 16, 5).Base
	addRange(t, c, base, 0, 700)
	if got := mustInfo(t, c); calls != 1 || got.Index != QFlat {
		t.Fatalf("after 700 items, the approximate scan winning: %d measurements, %+v", calls, got)
	}
	addRange(t, c, base, 700, 1300)
	found := func(i int) {
		t.Helper()
		hits, err := c.Query(ctx, base[i], 1, nil)
		if err != nil || len(hits) != 1 || hits[0].ID != fmt.Sprint("k", i) {
			t.Fatalf("query for item %d: %v, %v", i, hits, err)
		}
	}
	found(1200) // written after the switch
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	verdict = HNSW
	db, c = routedCollection(t, path, "q")
	defer db.Close()
	if got := mustInfo(t, c); calls != 1 || got.Index != QFlat {
		t.Fatalf("reopened before doubling: %d measurements, %+v", calls, got)
	}
	found(5)
	addRange(t, c, base, 1300, 1500) // ≥ 1,400: measured again
	waitRemeasured(t, c)
	if got := mustInfo(t, c); calls != 2 || got.Index != HNSW {
		t.Fatalf("after 1,500 items, the graph winning: %d measurements, %+v", calls, got)
	}
}

// TestAutoTargetSearches: the Info of an Auto collection that has grown
// past doublings beside its background calibrations says which way its
// queries went, and they went through the graph its calibration chose
// (a calibration beside the growth once chose exact search, and the
// queries of such a collection were answered exactly while its Info showed
// the graph).
func TestAutoTargetSearches(t *testing.T) {
	ctx := context.Background()
	verdict, calls := HNSW, 0
	stubRoute(t, &verdict, &calls)
	db, c := routedCollection(t, filepath.Join(t.TempDir(), "auto.db"), "g")
	defer db.Close()
	base := recall.Clustered(5000, 0, 16, 6).Base
	for lo := 0; lo < len(base); lo += 250 {
		addRange(t, c, base, lo, lo+250)
	}
	c.mu.RLock()
	g := c.idx.(*hnsw.Index)
	c.mu.RUnlock()
	// Calibrate waits for the background calibration still running.
	if _, err := g.Calibrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	before := mustInfo(t, c)
	if before.Index != HNSW || before.Recall.Calibration == nil || before.Recall.Calibration.Exact || before.Recall.Searches == nil {
		t.Fatalf("info after growing to 5,000: %+v", before)
	}
	for i := range 40 {
		if _, err := c.Query(ctx, base[i*7], 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	after := mustInfo(t, c)
	if got := *after.Recall.Searches; got.Graph-before.Recall.Searches.Graph != 40 || got.Exact != before.Recall.Searches.Exact {
		t.Errorf("after 40 queries, searches %+v (before %+v), want 40 more through the graph", got, *before.Recall.Searches)
	}
}
