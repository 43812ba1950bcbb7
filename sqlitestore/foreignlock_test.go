package sqlitestore

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/cairndb/cairn/internal/sqlitetest"
	"github.com/cairndb/cairn/vector"
)

// TestReaderBesideStalledWriter stands a plain SQLite connection in for a
// writer stopped (SIGSTOP, a debugger) between the two copies of the log
// index's header it was updating: it holds the log's write lock while the
// copies differ. SQLite's readers retry for about ten seconds and then
// give up with "locking protocol". That is a lock a reader cannot get, not
// a damaged file: Open says ErrLocked, and once the writer goes away the
// next reader repairs the index and sees every item.
func TestReaderBesideStalledWriter(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "c", 8, vector.L2)
	putRange(t, c, 1, 11)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	conn := sqlitetest.ForeignWriter(t, path)
	shm, err := os.OpenFile(path+"-shm", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	// Byte 8 of a header copy is its change counter; the second copy
	// starts at byte 48.
	var b [1]byte
	if _, err := shm.ReadAt(b[:], 48+8); err != nil {
		t.Fatal(err)
	}
	b[0]++
	if _, err := shm.WriteAt(b[:], 48+8); err != nil {
		t.Fatal(err)
	}

	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err == nil {
		r.Close()
		t.Fatal("a reader opened while the log's index was half written")
	}
	if !errors.Is(err, ErrLocked) || errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("reader beside a stalled writer: %v, want ErrLocked and not ErrCorrupt", err)
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	r, err = Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reader after the writer went: %v", err)
	}
	defer r.Close()
	rc, err := r.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Len() != 10 {
		t.Fatalf("reader after the writer went sees %d items, want 10", rc.Len())
	}
}

// TestWriteBesideForeignWriter: another program (the sqlite3 shell, say)
// holds SQLite's write lock on the file, which the docs ask no one to do
// while cairn has it open. A write then fails with ErrLocked at once
// (LockTimeout 0), not with SQLite's bare "database is locked", and
// changes nothing; once the other program lets go, writes go on.
func TestWriteBesideForeignWriter(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "c", 8, vector.L2)
	putRange(t, c, 1, 6)

	if _, err := c.CreateTenant(ctx, "kept"); err != nil {
		t.Fatal(err)
	}

	conn := sqlitetest.ForeignWriter(t, path)
	writes := map[string]func() error{
		"PutItems":    func() error { return c.PutItems(ctx, []Item{itemFor(6, 8)}) },
		"DeleteItems": func() error { return c.DeleteItems(ctx, []vector.ID{1}) },
		"CreateCollection": func() error {
			_, err := db.CreateCollection(ctx, "d", CollectionConfig{Dim: 8, Metric: vector.L2})
			return err
		},
		"DropCollection": func() error { return db.DropCollection(ctx, "c") },
		"CreateTenant": func() error {
			_, err := c.CreateTenant(ctx, "t")
			return err
		},
		"DropTenant": func() error { return c.DropTenant(ctx, "kept") },
		"SaveIndex":  func() error { return c.SaveIndex(ctx, "g", fakeIndex{seq: 1, size: 100}) },
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, ErrLocked) {
			t.Errorf("%s while another program holds the write lock: %v, want ErrLocked", name, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	putRange(t, c, 6, 11)
	if c.Len() != 10 {
		t.Fatalf("%d items after the other program let go, want 10", c.Len())
	}
	if _, err := c.Tenant(ctx, "kept"); err != nil {
		t.Fatalf("the tenant a refused DropTenant named: %v", err)
	}
	if _, err := db.Collection(ctx, "d"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("the collection a refused CreateCollection named: %v, want ErrNotFound", err)
	}
	for id := vector.ID(1); id <= 10; id++ {
		it, err := c.GetItem(ctx, id)
		if err != nil {
			t.Fatalf("item %d: %v", id, err)
		}
		if err := checkItem(it, 8); err != nil {
			t.Fatal(err)
		}
	}
}
