package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"testing"

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

	raw, err := sql.Open("sqlite", fileURI(path, url.Values{}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
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
	raw.Close()
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
