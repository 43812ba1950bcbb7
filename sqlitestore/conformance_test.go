package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

var collections atomic.Int64

// newCollection is the conformance suites' StoreFactory: a new collection
// in a database shared by the test (one file per test).
func newCollection(t *testing.T, dim int, m vector.Metric) vector.Store {
	ctx := context.Background()
	db, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "conf.cairn"), &sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Errorf("integrity check: %v", err)
		}
		db.Close()
	})
	c, err := db.CreateCollection(ctx, fmt.Sprint("c", collections.Add(1)), sqlitestore.CollectionConfig{Dim: dim, Metric: m})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStoreConformance(t *testing.T) {
	vectortest.TestStore(t, newCollection)
}

func TestFlatOverCollection(t *testing.T) {
	vectortest.TestIndex(t, newCollection, func(t *testing.T, s vector.Store) vector.Index {
		return flat.New(s)
	}, vectortest.IndexConfig{})
}

// TestHNSWOverCollection runs the index suite for the approximate index over
// SQLite collections: every index of cairn over every store.
func TestHNSWOverCollection(t *testing.T) {
	vectortest.TestIndex(t, newCollection, func(t *testing.T, s vector.Store) vector.Index {
		idx, err := hnsw.New(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := idx.Verify(); err != nil {
				t.Errorf("hnsw graph: %v", err)
			}
		})
		return idx
	}, vectortest.IndexConfig{Approximate: true})
}

// TestQFlatOverCollection runs the index suite for the approximate flat
// index over SQLite collections.
func TestQFlatOverCollection(t *testing.T) {
	vectortest.TestIndex(t, newCollection, func(t *testing.T, s vector.Store) vector.Index {
		idx, err := qflat.New(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}, vectortest.IndexConfig{Approximate: true, MinRecall: 0.99})
}
