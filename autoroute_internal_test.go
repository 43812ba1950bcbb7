package cairn

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestAutoTargetRouting checks what an Auto collection with a recall target
// does with graphPays's verdict (stubbed here; the timing itself is
// measured by vecbench): it stays exact while the graph does not pay,
// measures again once it has doubled, switches when the graph pays,
// decides again on reopen, and remembers across reopen that exact search
// won, measuring again only once the collection has doubled.
func TestAutoTargetRouting(t *testing.T) {
	ctx := context.Background()
	pays, calls := false, 0
	defer func(f func(context.Context, *hnsw.Index, vector.Store, []vector.ID) (bool, error)) { graphPaysFunc = f }(graphPaysFunc)
	graphPaysFunc = func(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID) (bool, error) {
		calls++
		if _, err := g.Calibrate(ctx, nil); err != nil {
			return false, err
		}
		return pays, nil
	}
	path := filepath.Join(t.TempDir(), "auto.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := CollectionConfig{Dim: 16, AutoThreshold: 600, HNSW: hnsw.Options{TargetRecall: 0.9}}
	c, err := db.CreateCollection(ctx, "c", cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := recall.Clustered(3100, 0, 16, 3).Base
	add := func(lo, hi int) {
		t.Helper()
		items := make([]Item, 0, hi-lo)
		for i := lo; i < hi; i++ {
			items = append(items, Item{ID: string(rune('a'+i%26)) + string(rune('A'+i/26%26)) + string(rune('0'+i/676)), Embedding: base[i]})
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
	}
	add(0, 700)
	if got := mustInfo(t, c); calls != 1 || got.Index != Flat || got.Calibration != nil {
		t.Fatalf("after 700 items, graph not paying: %d measurements, %+v", calls, got)
	}
	add(700, 1300) // 1,300 < 2 × 700: no new measurement
	if calls != 1 || mustInfo(t, c).Index != Flat {
		t.Fatalf("after 1,300 items: %d measurements, index %v", calls, mustInfo(t, c).Index)
	}
	pays = true
	add(1300, 1500) // ≥ 1,400: measured again, and now it pays
	info := mustInfo(t, c)
	if calls != 2 || info.Index != HNSW || info.Calibration == nil || info.Calibration.Target != 0.9 {
		t.Fatalf("after 1,500 items, graph paying: %d measurements, %+v", calls, info)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// On reopen the graph is measured again: now it does not pay.
	pays = false
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustInfo(t, c); calls != 3 || got.Index != Flat || got.Config.HNSW.TargetRecall != 0.9 {
		t.Fatalf("reopened, graph not paying: %d measurements, %+v", calls, got)
	}
	hits, err := c.Query(ctx, base[5], 3, nil)
	if err != nil || len(hits) != 3 || hits[0].Similarity < 0.999 {
		t.Fatalf("query after reopen: %v, %v", hits, err)
	}
	// Reopened again, before doubling: the verdict is remembered, nothing
	// is built or measured.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	pays = true
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustInfo(t, c); calls != 3 || got.Index != Flat {
		t.Fatalf("reopened after exact search won: %d measurements, %+v", calls, got)
	}
	add(1500, 2900) // 2,900 < 2 × 1,500: still no measurement
	if calls != 3 || mustInfo(t, c).Index != Flat {
		t.Fatalf("after 2,900 items: %d measurements, index %v", calls, mustInfo(t, c).Index)
	}
	add(2900, 3100) // ≥ 3,000: measured again, and it pays
	if got := mustInfo(t, c); calls != 4 || got.Index != HNSW {
		t.Fatalf("after 3,100 items: %d measurements, %+v", calls, got)
	}
}

// TestGraphPays runs the real measurement on data where the graph wins by
// far (clustered, where recall 0.9 needs a small ef): a sanity check of
// the mechanism, not a timing.
func TestGraphPaysCalibrates(t *testing.T) {
	ctx := context.Background()
	st, err := vector.NewMemStore(16, vector.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := hnsw.New(st, &hnsw.Options{TargetRecall: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	ds := recall.Clustered(800, 0, 16, 4)
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	if err := g.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	if _, err := graphPays(ctx, g, st, ids); err != nil {
		t.Fatal(err)
	}
	c, ok := g.Calibration()
	if !ok || c.Len != 800 || (!c.Exact && c.Recall < 0.9) {
		t.Fatalf("calibration after graphPays: %+v, %v", c, ok)
	}
}
