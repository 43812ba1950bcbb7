package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// readOnlyConfigs are a collection of each index, each with a TTL.
var readOnlyConfigs = map[string]cairn.CollectionConfig{
	"flat":  {Dim: 8, Index: cairn.Flat, TTL: time.Hour},
	"graph": {Dim: 8, Index: cairn.HNSW, HNSW: hnsw.Options{M: 8, Seed: 3}, TTL: time.Hour},
	"qflat": {Dim: 8, Index: cairn.QFlat, TTL: time.Hour},
	"auto":  {Dim: 8, Index: cairn.Auto, AutoThreshold: 100, TTL: time.Hour},
	"route": {Dim: 8, Index: cairn.Auto, AutoThreshold: 100, HNSW: hnsw.Options{TargetRecall: 0.9}},
}

// readAll runs every kind of read on every collection of db and returns
// each collection's count.
func readAll(t *testing.T, db *cairn.DB) map[string]int {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 9))
	counts := map[string]int{}
	infos, err := db.Collections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		c, err := db.Collection(ctx, in.Name)
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			q := randVec(r, 8)
			for _, o := range []*cairn.QueryOptions{nil, {Mode: cairn.KeywordMode, Keywords: "text 7"},
				{Mode: cairn.HybridMode, Keywords: "text"}, {Filter: cairn.Gte("i", 10)}} {
				emb := q
				if o != nil && o.Mode == cairn.KeywordMode {
					emb = nil
				}
				if _, err := c.Query(ctx, emb, 5, o); err != nil {
					t.Fatalf("%s: Query: %v", in.Name, err)
				}
			}
		}
		if _, err := c.Get(ctx, "id1"); err != nil {
			t.Fatalf("%s: Get: %v", in.Name, err)
		}
		if _, err := c.Find(ctx, cairn.Eq("odd", true), 0); err != nil {
			t.Fatalf("%s: Find: %v", in.Name, err)
		}
		for _, err := range c.Items(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: Items: %v", in.Name, err)
			}
		}
		n, err := c.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		counts[in.Name] = n
	}
	return counts
}

func addItems(t *testing.T, c *cairn.Collection, from, to int) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(from), 1))
	items := make([]cairn.Item, 0, to-from)
	for i := from; i < to; i++ {
		items = append(items, cairn.Item{ID: fmt.Sprint("id", i), Embedding: randVec(r, 8), Text: fmt.Sprint("text ", i),
			Metadata: map[string]any{"i": i, "odd": i%2 == 1}})
	}
	if err := c.Add(context.Background(), items...); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyBesideWriter opens a store read-only while its writer has
// it open: the reader answers every read as of its Open, refuses every
// write, and a second writer is still refused. Read-only opens of the
// closed file, every read included, leave its bytes as they were.
func TestReadOnlyBesideWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "live.cairn")
	w, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for name, cfg := range readOnlyConfigs {
		c := mustCollection(t, w, name, cfg)
		addItems(t, c, 0, 150)
		// An item that has expired: hidden from the reader, never removed
		// by it.
		if err := c.Add(ctx, cairn.Item{ID: "gone", Embedding: make([]float32, 8), ExpiresAt: time.Now().Add(-time.Second)}); err != nil && !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatal(err)
		}
	}

	r, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open beside the writer: %v", err)
	}
	defer r.Close()
	before := readAll(t, r)
	for name, n := range before {
		if n != 150 {
			t.Fatalf("reader: %s has %d items, want 150", name, n)
		}
	}
	if _, err := cairn.Open(ctx, path, nil); !errors.Is(err, sqlitestore.ErrLocked) {
		t.Fatalf("a second writer: %v, want ErrLocked", err)
	}
	for name := range readOnlyConfigs {
		wc, err := w.Collection(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		addItems(t, wc, 150, 200)
		rc, err := r.Collection(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for op, err := range map[string]error{
			"Add":           rc.Add(ctx, cairn.Item{ID: "x", Embedding: make([]float32, 8)}),
			"Upsert":        rc.Upsert(ctx, cairn.Item{ID: "id1", Embedding: make([]float32, 8)}),
			"Delete":        rc.Delete(ctx, "id1"),
			"DeleteWhere":   func() error { _, err := rc.DeleteWhere(ctx, cairn.Eq("odd", true)); return err }(),
			"RemoveExpired": func() error { _, err := rc.RemoveExpired(ctx); return err }(),
		} {
			if !errors.Is(err, sqlitestore.ErrReadOnly) {
				t.Errorf("%s on %s of a reader: %v, want ErrReadOnly", op, name, err)
			}
		}
	}
	if _, err := r.CreateCollection(ctx, "new", cairn.CollectionConfig{Dim: 8}); !errors.Is(err, sqlitestore.ErrReadOnly) {
		t.Errorf("CreateCollection on a reader: %v, want ErrReadOnly", err)
	}
	if err := r.DeleteCollection(ctx, "flat"); !errors.Is(err, sqlitestore.ErrReadOnly) {
		t.Errorf("DeleteCollection on a reader: %v, want ErrReadOnly", err)
	}
	if after := readAll(t, r); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the reader's snapshot moved: %v, was %v", after, before)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	sum := fileSum(t, path)
	for range 2 {
		r, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range readAll(t, r) {
			if n != 200 {
				t.Fatalf("a new reader: %s has %d items, want 200", name, n)
			}
		}
		time.Sleep(50 * time.Millisecond) // a sweeper, if one ran, would act
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if fileSum(t, path) != sum {
			t.Fatal("a read-only open changed the file")
		}
	}
}

// TestReadOnlyHistory reads a collection's history through a read-only
// open: History, AsOf and a rehearsed Restore answer, an applied Restore
// is refused with ErrReadOnly, and the file is left as it was.
func TestReadOnlyHistory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "past.cairn")
	w, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, w, "notes", cairn.CollectionConfig{Dim: 8, KeepHistory: &cairn.HistoryPolicy{}})
	addItems(t, c, 0, 20)
	then := time.Now()
	time.Sleep(2 * time.Millisecond)
	if err := c.Delete(ctx, "id1", "id2"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, path)

	r, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rc, err := r.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := rc.History(ctx, "id1"); err != nil || len(vs) != 3 || !vs[0].Absent || vs[1].Absent || vs[1].Item.Text != "text 1" {
		t.Fatalf("History of a deleted item on a reader: %+v, %v; want absent, its one version, absent", vs, err)
	}
	snap, err := rc.AsOf(ctx, then)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := snap.Count(ctx); err != nil || n != 20 {
		t.Fatalf("AsOf before the deletes on a reader: %d items, %v; want 20", n, err)
	}
	res, err := rc.Restore(ctx, then, &cairn.RestoreOptions{DryRun: true})
	if err != nil || len(res.Put) != 2 {
		t.Fatalf("a rehearsed Restore on a reader: %+v, %v; want 2 items to put back", res, err)
	}
	if _, err := rc.Restore(ctx, then, nil); !errors.Is(err, sqlitestore.ErrReadOnly) {
		t.Fatalf("an applied Restore on a reader: %v, want ErrReadOnly", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != sum {
		t.Fatal("reading the history through a read-only open changed the file")
	}
}

// TestReadOnlyDeleteCollectionLeavesTenants: a reader's DeleteCollection
// is refused before it touches anything: the collection's loaded tenants
// stay loaded, and a call in flight on one (an iteration, read page by
// page) goes on to its end, not "collection deleted" halfway.
func TestReadOnlyDeleteCollectionLeavesTenants(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ro.cairn")
	w, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tn, err := mustCollection(t, w, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat}).CreateTenant(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	const n = 600 // more than a page of Items
	items := make([]cairn.Item, n)
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}}
	}
	if err := tn.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := r.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if tn, err = c.Tenant(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, err := range tn.Items(ctx, nil) {
		if err != nil {
			t.Fatalf("item %d of the iteration: %v", seen, err)
		}
		if seen++; seen == 1 {
			if err := r.DeleteCollection(ctx, "c"); !errors.Is(err, sqlitestore.ErrReadOnly) {
				t.Fatalf("DeleteCollection on a reader: %v, want ErrReadOnly", err)
			}
			if loaded, _ := r.LoadedTenantsForTest(); loaded != 1 {
				t.Errorf("after the refused delete, %d tenants loaded, want 1", loaded)
			}
		}
	}
	if seen != n {
		t.Errorf("the iteration gave %d items, want %d", seen, n)
	}
}
