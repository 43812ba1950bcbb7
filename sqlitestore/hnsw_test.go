package sqlitestore_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// TestHNSWGraphRoundTrip saves an HNSW graph over a collection, reopens the
// file and loads it: the loaded graph answers exactly as the saved one did.
// After a write the save is stale, and the rebuild path works.
func TestHNSWGraphRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.cairn")
	const n, dim = 600, 16
	db, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.Cosine})
	if err != nil {
		t.Fatal(err)
	}
	vs := randVecs(n, dim, 5)
	items := make([]sqlitestore.Item, n)
	ids := make([]vector.ID, n)
	for i, v := range vs {
		ids[i] = vector.ID(i) * 3
		items[i] = sqlitestore.Item{ID: ids[i], Vector: v}
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	ix, err := hnsw.New(c, &hnsw.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Track(ctx, ids); err != nil {
		t.Fatal(err)
	}
	qs := randVecs(20, dim, 6)
	var before [][]vector.Result
	for _, q := range qs {
		res, err := ix.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, res)
	}
	if err := c.SaveIndex(ctx, "hnsw", ix); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, _ = db.Collection(ctx, "c")
	ix2, _ := hnsw.New(c, &hnsw.Options{Seed: 1})
	if err := c.LoadIndex(ctx, "hnsw", ix2); err != nil {
		t.Fatal(err)
	}
	for i, q := range qs {
		res, err := ix2.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(res, before[i], func(a, b vector.Result) bool {
			return a.ID == b.ID && math.Abs(float64(a.Distance-b.Distance)) < 1e-6
		}) {
			t.Fatalf("query %d: loaded graph gives %v, saved gave %v", i, res, before[i])
		}
	}
	// A write: stale, rebuild, save, load.
	if err := c.Put(ctx, 1, vs[0]); err != nil {
		t.Fatal(err)
	}
	ix3, _ := hnsw.New(c, nil)
	if err := c.LoadIndex(ctx, "hnsw", ix3); !errors.Is(err, sqlitestore.ErrStaleIndex) {
		t.Fatalf("LoadIndex after a write: %v, want ErrStaleIndex", err)
	}
	if err := ix3.Track(ctx, append(ids, 1)); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveIndex(ctx, "hnsw", ix3); err != nil {
		t.Fatal(err)
	}
	ix4, _ := hnsw.New(c, nil)
	if err := c.LoadIndex(ctx, "hnsw", ix4); err != nil || ix4.Len() != n+1 {
		t.Fatalf("LoadIndex after rebuild: %d nodes, %v", ix4.Len(), err)
	}
}
