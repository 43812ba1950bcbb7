package cairn_test

// This file tests the calls that make a store easy to use and to retry:
// GetOrCreateCollection, DeleteIfExists, the collection-name sentinel, and
// the error of every call once the store is closed.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

func TestGetOrCreateCollection(t *testing.T) {
	ctx := context.Background()
	for _, op := range openers {
		t.Run(op.name, func(t *testing.T) {
			db := op.open(t, nil)
			cfg := cairn.CollectionConfig{Dim: 3}
			// Many at once: one creates, all get the same collection.
			var g sync.WaitGroup
			got := make([]*cairn.Collection, 8)
			for i := range got {
				g.Go(func() {
					c, err := db.GetOrCreateCollection(ctx, "mem", cfg)
					if err != nil {
						t.Error(err)
					}
					got[i] = c
				})
			}
			g.Wait()
			for _, c := range got {
				if c != got[0] || c == nil {
					t.Fatalf("GetOrCreateCollection returned different collections: %v", got)
				}
			}
			if err := got[0].Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0, 0}}); err != nil {
				t.Fatal(err)
			}
			again, err := db.GetOrCreateCollection(ctx, "mem", cairn.CollectionConfig{Dim: 3, Index: cairn.HNSW})
			if err != nil || again != got[0] || cairn.MustCount(t, again) != 1 {
				t.Errorf("second GetOrCreateCollection: %v, %v", again, err)
			}
			for _, bad := range []cairn.CollectionConfig{{Dim: 4}, {Dim: 3, Metric: vector.L2}} {
				if _, err := db.GetOrCreateCollection(ctx, "mem", bad); !errors.Is(err, vector.ErrInvalidOptions) {
					t.Errorf("GetOrCreateCollection with %+v: %v, want ErrInvalidOptions", bad, err)
				}
			}
			if _, err := db.GetOrCreateCollection(ctx, "", cfg); !errors.Is(err, vector.ErrInvalidOptions) {
				t.Errorf("empty name: %v", err)
			}
		})
	}
	// A collection in the file, not loaded yet: got, not created; and
	// CreateCollection of it is ErrCollectionExists.
	path := filepath.Join(t.TempDir(), "g.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "kept", cairn.CollectionConfig{Dim: 2})
	if err := c.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 1}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateCollection(ctx, "kept", cairn.CollectionConfig{Dim: 2}); !errors.Is(err, cairn.ErrCollectionExists) || errors.Is(err, vector.ErrDuplicateID) {
		t.Errorf("CreateCollection of one in the file: %v, want ErrCollectionExists alone", err)
	}
	c, err = db.GetOrCreateCollection(ctx, "kept", cairn.CollectionConfig{Dim: 2})
	if err != nil || cairn.MustCount(t, c) != 1 {
		t.Fatalf("GetOrCreateCollection of one in the file: %v", err)
	}
}

func TestDeleteIfExists(t *testing.T) {
	ctx := context.Background()
	forEachDB(t, func(t *testing.T, op opener) {
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: op.kind})
		for _, id := range []string{"a", "b", "c"} {
			if err := c.Add(ctx, cairn.Item{ID: id, Text: "word " + id, Embedding: []float32{1, float32(len(id))}}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := c.DeleteIfExists(ctx, "a", "missing", "c", "a")
		if err != nil || n != 2 {
			t.Fatalf("DeleteIfExists = %d, %v; want 2", n, err)
		}
		// The retry: nothing left to delete, and no error.
		if n, err := c.DeleteIfExists(ctx, "a", "missing", "c"); err != nil || n != 0 {
			t.Errorf("retried DeleteIfExists = %d, %v; want 0, nil", n, err)
		}
		if n, err := c.DeleteIfExists(ctx); err != nil || n != 0 {
			t.Errorf("DeleteIfExists of nothing = %d, %v", n, err)
		}
		if got, err := c.Find(ctx, nil, 0); err != nil || len(got) != 1 || got[0].ID != "b" {
			t.Errorf("left: %v, %v", got, err)
		}
		// Gone from the keyword list too.
		if got, _ := c.QueryText(ctx, "word", 5, &cairn.QueryOptions{Mode: cairn.KeywordMode}); len(got) != 1 || got[0].ID != "b" {
			t.Errorf("keyword list after DeleteIfExists: %v", ids(got))
		}
		// Delete stays strict.
		if err := c.Delete(ctx, "b", "missing"); !errors.Is(err, vector.ErrNotFound) || cairn.MustCount(t, c) != 1 {
			t.Errorf("Delete with a missing id: %v", err)
		}
	})
}

// TestEveryCallAfterClose: once the DB is closed, every call on it and its
// collections returns an error wrapping vector.ErrClosed, with the
// package's prefix.
func TestEveryCallAfterClose(t *testing.T) {
	ctx := context.Background()
	for _, op := range openers {
		t.Run(op.name, func(t *testing.T) {
			var db *cairn.DB
			if op.name == "memory" {
				db = cairn.OpenMemory(nil)
			} else {
				var err error
				if db, err = cairn.Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil); err != nil {
					t.Fatal(err)
				}
			}
			c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, KeepHistory: &cairn.HistoryPolicy{}})
			if err := c.Add(ctx, cairn.Item{ID: "a", Text: "alpha", Embedding: []float32{1, 0}}); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			kw := &cairn.QueryOptions{Mode: cairn.KeywordMode}
			now := time.Now()
			checks := map[string]error{
				"Count":          func() error { _, err := c.Count(ctx); return err }(),
				"Info":           func() error { _, err := c.Info(ctx); return err }(),
				"Add":            c.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 0}}),
				"Upsert":         c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}}),
				"Delete":         c.Delete(ctx, "a"),
				"DeleteIfExists": func() error { _, err := c.DeleteIfExists(ctx, "a"); return err }(),
				"DeleteWhere":    func() error { _, err := c.DeleteWhere(ctx, cairn.And()); return err }(),
				"Get":            func() error { _, err := c.Get(ctx, "a"); return err }(),
				"Find":           func() error { _, err := c.Find(ctx, nil, 0); return err }(),
				"Query":          func() error { _, err := c.Query(ctx, []float32{1, 0}, 1, nil); return err }(),
				"Query hybrid": func() error {
					_, err := c.Query(ctx, []float32{1, 0}, 1, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "alpha"})
					return err
				}(),
				"QueryText keyword":     func() error { _, err := c.QueryText(ctx, "alpha", 1, kw); return err }(),
				"CreateCollection":      func() error { _, err := db.CreateCollection(ctx, "d", cairn.CollectionConfig{Dim: 2}); return err }(),
				"GetOrCreateCollection": func() error { _, err := db.GetOrCreateCollection(ctx, "d", cairn.CollectionConfig{Dim: 2}); return err }(),
				"Collection":            func() error { _, err := db.Collection(ctx, "c"); return err }(),
				"Collections":           func() error { _, err := db.Collections(ctx); return err }(),
				"DeleteCollection":      db.DeleteCollection(ctx, "c"),
				"History":               func() error { _, err := c.History(ctx, "a"); return err }(),
				"AsOf":                  func() error { _, err := c.AsOf(ctx, now); return err }(),
				"AsOf, the future":      func() error { _, err := c.AsOf(ctx, now.Add(time.Hour)); return err }(),
				"AsOf, before history":  func() error { _, err := c.AsOf(ctx, time.Unix(0, 0)); return err }(),
				"Restore":               func() error { _, err := c.Restore(ctx, now, nil); return err }(),
			}
			for name, err := range checks {
				if !errors.Is(err, vector.ErrClosed) || !strings.HasPrefix(err.Error(), "cairn: ") {
					t.Errorf("%s after Close: %v, want an error wrapping ErrClosed with the cairn prefix", name, err)
				}
			}
			if c.Name() != "c" || c.Config().Dim != 2 {
				t.Errorf("Name and Config after Close: %q, %+v", c.Name(), c.Config())
			}
		})
	}
	// A deleted collection's handle reports ErrNotFound, from its history
	// calls too (AsOf in a file said ErrClosed).
	for _, op := range openers {
		db := cairn.OpenMemory(nil)
		if op.name != "memory" {
			var err error
			if db, err = cairn.Open(ctx, filepath.Join(t.TempDir(), "g.db"), nil); err != nil {
				t.Fatal(err)
			}
		}
		c := mustCollection(t, db, "gone", cairn.CollectionConfig{Dim: 2, KeepHistory: &cairn.HistoryPolicy{}})
		if err := db.DeleteCollection(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for name, err := range map[string]error{
			"Count":   func() error { _, err := c.Count(ctx); return err }(),
			"History": func() error { _, err := c.History(ctx, "a"); return err }(),
			"AsOf":    func() error { _, err := c.AsOf(ctx, now); return err }(),
			"Restore": func() error { _, err := c.Restore(ctx, now, nil); return err }(),
		} {
			if !errors.Is(err, vector.ErrNotFound) {
				t.Errorf("%s: %s of a deleted collection: %v, want ErrNotFound", op.name, name, err)
			}
		}
		db.Close()
	}
}
