package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// TestPagedConformance runs the store suite over collections whose arena
// is paged (Options.PageVectorsIn).
func TestPagedConformance(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "p.cairn"), &sqlitestore.Options{PageVectorsIn: t.TempDir()})
		if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("Open with PageVectorsIn on %s: %v", runtime.GOOS, err)
		}
		return
	}
	vectortest.TestStore(t, func(t *testing.T, dim int, m vector.Metric) vector.Store {
		ctx := context.Background()
		db, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "p.cairn"), &sqlitestore.Options{Sync: sqlitestore.SyncNormal, PageVectorsIn: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		c, err := db.CreateCollection(ctx, fmt.Sprint("c", collections.Add(1)), sqlitestore.CollectionConfig{Dim: dim, Metric: m})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

// TestPagedReopen writes through a paged collection and a tenant of it,
// reopens the file with and without paging, and reads the same vectors;
// the page directory is left empty.
func TestPagedReopen(t *testing.T) {
	if runtime.GOOS != "linux" {
		return
	}
	ctx := context.Background()
	path, pages := filepath.Join(t.TempDir(), "p.cairn"), t.TempDir()
	const dim, n = 8, 700
	want := make([]sqlitestore.Item, n)
	for i := range want {
		v := make(vector.Vector, dim)
		for j := range v {
			v[j] = float32(i*dim + j)
		}
		want[i] = sqlitestore.Item{ID: vector.ID(i + 1), Vector: v}
	}
	db, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{PageVectorsIn: pages})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: dim, Metric: vector.L2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutItems(ctx, want); err != nil {
		t.Fatal(err)
	}
	ten, err := c.CreateTenant(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.PutItems(ctx, want[:10]); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*sqlitestore.Options{{PageVectorsIn: pages}, nil} {
		db, err := sqlitestore.Open(ctx, path, o)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != n {
			t.Fatalf("Len %d, want %d", c.Len(), n)
		}
		for _, it := range want {
			got, err := c.Get(it.ID)
			if err != nil {
				t.Fatal(err)
			}
			for j := range got {
				if got[j] != it.Vector[j] {
					t.Fatalf("id %d [%d]: %v, want %v", it.ID, j, got[j], it.Vector[j])
				}
			}
		}
		ten, err := c.Tenant(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if ten.Len() != 10 {
			t.Fatalf("tenant Len %d", ten.Len())
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(pages); len(ents) != 0 {
		t.Fatalf("%d files left in the page directory", len(ents))
	}
	if _, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{PageVectorsIn: filepath.Join(pages, "missing")}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("a missing page directory: %v", err)
	}
}
