package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/sqlitetest"
	"github.com/cairndb/cairn/sqlitestore"
)

// TestUpsertBesideForeignWriter: another program (the sqlite3 shell, say)
// holds SQLite's write lock on a store's file, which the docs ask no one
// to do while cairn has it open. An Upsert then fails with an error
// wrapping sqlitestore.ErrLocked and changes nothing, not in memory nor
// in the file; once the other program lets go, writes go on, and a
// reopen finds every write that returned nil.
func TestUpsertBesideForeignWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.cairn")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	item := func(i int) cairn.Item {
		return cairn.Item{ID: fmt.Sprint("m", i), Text: fmt.Sprint("memory ", i), Embedding: []float32{1, float32(i)}}
	}
	if err := c.Upsert(ctx, item(1), item(2)); err != nil {
		t.Fatal(err)
	}

	conn := sqlitetest.ForeignWriter(t, path)
	if err := c.Upsert(ctx, item(3)); !errors.Is(err, sqlitestore.ErrLocked) {
		t.Fatalf("Upsert while another program holds the write lock: %v, want ErrLocked", err)
	}
	if _, err := c.Get(ctx, "m3"); err == nil {
		t.Fatal("the refused item is readable")
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	if err := c.Upsert(ctx, item(4)); err != nil {
		t.Fatalf("Upsert after the other program let go: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]bool{1: true, 2: true, 3: false, 4: true} {
		_, err := c.Get(ctx, fmt.Sprint("m", i))
		if got := err == nil; got != want {
			t.Errorf("after reopen, m%d present %v, want %v (%v)", i, got, want, err)
		}
	}
	res, err := c.Query(ctx, []float32{1, 4}, 1, nil)
	if err != nil || len(res) != 1 || res[0].ID != "m4" {
		t.Errorf("query after reopen: %v, %v", res, err)
	}
}
