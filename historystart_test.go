package cairn_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairndb/cairn"

	_ "modernc.org/sqlite"
)

// TestCreateWhenHistoryCannotStart: a collection or tenant that keeps
// history is created in one transaction and its history begun in a
// second. When the disk refused the second (a full disk), the create
// failed and tried to drop what it had made, which the same disk
// refused: the call failed, yet the tenant stayed in the file, and
// creating it again failed with ErrTenantExists for good (seen on a
// full tmpfs). Now the create stands, and its history begins in memory
// until a later load can record it. Triggers that fail the history's
// start and every drop stand in for the full disk here.
func TestCreateWhenHistoryCannotStart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.cairn")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cairn.CollectionConfig{Dim: 2, Index: cairn.Flat, KeepHistory: &cairn.HistoryPolicy{}}
	if _, err := db.CreateCollection(ctx, "c", cfg); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TRIGGER full_since BEFORE INSERT ON history_since BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END",
		"CREATE TRIGGER full_tenants BEFORE DELETE ON tenants BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END",
		"CREATE TRIGGER full_colls BEFORE DELETE ON collections BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END",
	} {
		if _, err := sdb.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	sdb.Close()

	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, h interface {
		Add(context.Context, ...cairn.Item) error
		Upsert(context.Context, ...cairn.Item) error
		AsOf(context.Context, time.Time) (*cairn.Snapshot, error)
	}) {
		t.Helper()
		if err := h.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, Text: "one"}); err != nil {
			t.Fatalf("%s: Add: %v", what, err)
		}
		mid := time.Now()
		time.Sleep(time.Millisecond)
		if err := h.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{0, 1}, Text: "two"}); err != nil {
			t.Fatalf("%s: Upsert: %v", what, err)
		}
		s, err := h.AsOf(ctx, mid)
		if err != nil {
			t.Fatalf("%s: AsOf within the session: %v", what, err)
		}
		defer s.Close()
		got, err := s.Get(ctx, "a")
		if err != nil || len(got) != 1 || got[0].Text != "one" {
			t.Fatalf("%s: AsOf(mid).Get = %v, %v; want the first version", what, got, err)
		}
	}

	tn, err := c.CreateTenant(ctx, "alice")
	if err != nil {
		if _, again := c.CreateTenant(ctx, "alice"); errors.Is(again, cairn.ErrTenantExists) {
			t.Fatalf("CreateTenant failed (%v), yet the tenant was left in the file: created again, %v", err, again)
		}
		t.Fatalf("CreateTenant: %v", err)
	}
	check("tenant", tn)

	c2, err := db.CreateCollection(ctx, "d", cfg)
	if err != nil {
		if _, again := db.CreateCollection(ctx, "d", cfg); errors.Is(again, cairn.ErrCollectionExists) {
			t.Fatalf("CreateCollection failed (%v), yet the collection was left in the file: created again, %v", err, again)
		}
		t.Fatalf("CreateCollection: %v", err)
	}
	check("collection", c2)
	if _, err := c2.Get(ctx, "a"); err != nil {
		t.Fatal(err)
	}
}
