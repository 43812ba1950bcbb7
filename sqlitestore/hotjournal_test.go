package sqlitestore

// This file holds the tests of a file in rollback-journal mode (as Backup
// writes it, as every build's Backup has) left with a hot journal: the
// journal of a transaction a process was killed in, which the file's
// next writer rolls back.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// backupOpen writes a backup of a database of one collection "c" of n
// items of the given text, in a directory of its own, and opens it with
// SQLite, one connection, closed when the test ends. It returns the
// collection, the backup's path and the connection.
func backupOpen(t *testing.T, n int, text string) (*Collection, string, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 8, vector.L2)
	items := make([]Item, n)
	for i := range items {
		items[i] = itemFor(vector.ID(i+1), 8)
		items[i].Key = fmt.Sprintf("k%d", i)
		items[i].Text = text
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.cairn")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	sqldb, err := sql.Open("sqlite", fileURI(backup, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqldb.Close() })
	sqldb.SetMaxOpenConns(1)
	conn, err := sqldb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return c, backup, conn
}

// leftHotJournal returns the path of a copy of a backup of a database of one
// collection "c" of n items, with the hot journal of a transaction that
// was rewriting every item's text when it stopped: the file holds some of
// its pages, the journal the pages they replaced.
func leftHotJournal(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	c, backup, conn := backupOpen(t, n, strings.Repeat("committed ", 40))
	orig, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	// A cache of a few pages makes SQLite write pages of the transaction
	// into the file before it commits, once the journal holds the old ones.
	if err := execAll(ctx, conn, "PRAGMA cache_size=2", "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE "+c.table+" SET text = ?", strings.Repeat("uncommitted ", 60)); err != nil {
		t.Fatal(err)
	}
	crash := filepath.Join(t.TempDir(), "crash.cairn")
	for _, side := range []string{"", "-journal"} {
		b, err := os.ReadFile(backup + side)
		if err != nil {
			t.Fatal(err)
		}
		if side == "" && bytes.Equal(b, orig) {
			t.Fatal("the transaction wrote no page into the file before its commit")
		}
		if err := os.WriteFile(crash+side, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	return crash
}

// TestReadOnlyHotJournal opens read-only a file left with a hot journal:
// the reader, which may not roll the journal back, must not read the
// file's half-written pages as its content (an uncommitted state, or
// damage that is not there); it fails with ErrReadOnly and changes
// nothing, and a writable Open then rolls the journal back and finds
// every item as committed.
func TestReadOnlyHotJournal(t *testing.T) {
	ctx := context.Background()
	const n = 300
	path := leftHotJournal(t, n)
	snap := func() [2][]byte {
		var s [2][]byte
		for i, side := range []string{"", "-journal"} {
			s[i], _ = os.ReadFile(path + side)
		}
		return s
	}
	before := snap()
	db, err := Open(ctx, path, &Options{ReadOnly: true})
	if err == nil {
		db.Close()
		t.Fatal("read-only Open of a file with a hot journal succeeded")
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Open of a file with a hot journal: %v, want ErrReadOnly", err)
	}
	if after := snap(); !bytes.Equal(before[0], after[0]) || !bytes.Equal(before[1], after[1]) {
		t.Fatal("read-only Open changed the file or its journal")
	}
	for _, side := range []string{"-wal", "-shm"} {
		if exists(path + side) {
			t.Fatalf("read-only Open left %s", filepath.Base(path+side))
		}
	}
	db, err = Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatalf("writable Open: %v", err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	if err := c.ForEachItem(ctx, func(it Item) error {
		if it.Text != strings.Repeat("committed ", 40) {
			return fmt.Errorf("item %q: text %.20q...", it.Key, it.Text)
		}
		got++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("%d items after the rollback, want %d", got, n)
	}
}

// grownHotJournal returns the path of a copy of a backup (in rollback
// mode) of a database of one collection "c" of n items, as a writer
// killed in the commit of a transaction that grew the file leaves it:
// SQLite writes a commit's pages in page order, page 1 first, with the
// new page count in its header, so the file holds that header and lacks
// the pages the transaction appended, and the journal, complete and hot,
// holds the pages the transaction replaced.
func grownHotJournal(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	_, backup, conn := backupOpen(t, n, "")
	dir := filepath.Dir(backup)
	fi, err := os.Stat(backup)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	// A transaction as a migration's: new tables, the file grows.
	if err := execAll(ctx, conn, "BEGIN IMMEDIATE", "CREATE TABLE grown (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		if _, err := conn.ExecContext(ctx, "INSERT INTO grown VALUES (zeroblob(20000))"); err != nil {
			t.Fatal(err)
		}
	}
	// The journal, kept under another name when the commit deletes it.
	journal := filepath.Join(dir, "journal")
	if err := os.Link(backup+"-journal", journal); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) <= size {
		t.Fatalf("the transaction did not grow the file (%d bytes, was %d)", len(b), size)
	}
	j, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	crash := filepath.Join(t.TempDir(), "crash.cairn")
	if err := os.WriteFile(crash, b[:size], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crash+"-journal", j, 0o644); err != nil {
		t.Fatal(err)
	}
	return crash
}

// TestOpenGrownHotJournal opens a file left by a writer killed while its
// commit grew the file (grownHotJournal). The file is intact: its
// journal restores it. A read-only Open, which may not roll it back,
// fails with ErrReadOnly and changes nothing; a writable Open rolls it
// back and finds every item, not a file it takes for truncated.
func TestOpenGrownHotJournal(t *testing.T) {
	ctx := context.Background()
	const n = 200
	path := grownHotJournal(t, n)
	before, _ := os.ReadFile(path)
	db, err := Open(ctx, path, &Options{ReadOnly: true})
	if err == nil {
		db.Close()
		t.Fatal("read-only Open of a file with a hot journal succeeded")
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only Open of a file with a hot journal: %v, want ErrReadOnly", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("read-only Open changed the file")
	}
	db, err = Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatalf("writable Open: %v", err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != n {
		t.Fatalf("%d items after the rollback, want %d", c.Len(), n)
	}
	var tables int
	if err := db.withConn(func(conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'grown'").Scan(&tables)
	}); err != nil || tables != 0 {
		t.Fatalf("the rolled-back table: %d (%v)", tables, err)
	}
}
