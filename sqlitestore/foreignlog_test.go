package sqlitestore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestForeignLogRefusedUntouched: a write-ahead log left beside a file it
// does not belong to (a backup copied back over a store whose -wal
// stayed) makes SQLite read the log's pages in place of the file's. When
// Open sees the damage and refuses the file, the file and the log must be
// as they were: a writable Open's connection, closed as the last one,
// used to checkpoint the foreign log into the file and delete it, so that
// a good file was ruined for good and removing the stray log no longer
// brought it back.
func TestForeignLogRefusedUntouched(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.cairn"), filepath.Join(dir, "b.cairn")
	db, err := Open(ctx, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "a", 64, vector.L2)
	var items []Item
	for id := vector.ID(1); id <= 500; id++ {
		items = append(items, itemFor(id, 64))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, good, 0o644); err != nil {
		t.Fatal(err)
	}

	// b, a copy of a, written on: a log whose pages are b's, not a's.
	db, err = Open(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	cb := mustCollection(t, db, "b", 8, vector.L2)
	items = items[:0]
	for id := vector.ID(1); id <= 300; id++ {
		items = append(items, itemFor(id, 8))
	}
	if err := cb.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	// Checkpointed into b: the log from here on builds on pages a lacks.
	db.connMu.Lock()
	_, err = db.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	db.connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	items = items[:0]
	for id := vector.ID(301); id <= 600; id++ {
		items = append(items, itemFor(id, 8))
	}
	if err := cb.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	ca, err := db.Collection(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var ids []vector.ID
	for id := vector.ID(1); id <= 250; id++ {
		ids = append(ids, id)
	}
	if err := ca.DeleteItems(ctx, ids); err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(b + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	if err := os.WriteFile(a+"-wal", wal, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, a, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open took the foreign log for the file's own; this test needs a log Open refuses")
	}
	if !errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt", err)
	}
	if got, _ := os.ReadFile(a); !bytes.Equal(got, good) {
		t.Errorf("the refused Open wrote the file (%d bytes, were %d): the foreign log was checkpointed into it", len(got), len(good))
	}
	if got, err := os.ReadFile(a + "-wal"); err != nil || !bytes.Equal(got, wal) {
		t.Errorf("the refused Open changed the log beside the file (%v)", err)
	}

	// Without the stray log, the file is the good store it was.
	os.Remove(a + "-wal")
	os.Remove(a + "-shm")
	db, err = Open(ctx, a, nil)
	if err != nil {
		t.Fatalf("Open without the stray log: %v", err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Len(); n != 500 {
		t.Errorf("collection a holds %d items, want 500", n)
	}
}
