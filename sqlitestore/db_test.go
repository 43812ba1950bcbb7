package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

func TestOpenReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "docs", 8, vector.Cosine)
	var items []Item
	for id := vector.ID(1); id <= 100; id++ {
		items = append(items, itemFor(id, 8))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := c.SetSettings(ctx, []byte(`{"index":"hnsw"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(1); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	if err := c.Put(ctx, 1000, vecFor(1000, 8)); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}

	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 100 || c.Dim() != 8 || c.Metric() != vector.Cosine || string(c.Settings()) != `{"index":"hnsw"}` {
		t.Fatalf("reopened: len %d dim %d metric %v settings %s", c.Len(), c.Dim(), c.Metric(), c.Settings())
	}
	for id := vector.ID(1); id <= 100; id++ {
		it, err := c.GetItem(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkItem(it, 8); err != nil {
			t.Fatal(err)
		}
		want, _ := vector.Prepare(it.Vector, 8, vector.Cosine)
		got, err := c.Get(id)
		if err != nil || !equalVec(got, want) {
			t.Fatalf("Get(%d) = %v, %v; want the prepared vector", id, got, err)
		}
	}
	if _, err := db.Collection(ctx, "nope"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("missing collection: %v", err)
	}
}

func TestSecondOpenLocked(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	_ = db
	_, err := Open(ctx, path, nil)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
}

// TestForEachItemFullIDRange stores ids at both ends of the uint64 range
// (negative as SQLite integers) and walks them across several pages.
func TestForEachItemFullIDRange(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 4, vector.L2)
	var items []Item
	want := map[vector.ID]bool{}
	for i := range 3*forEachPage + 7 {
		id := vector.ID(i)
		if i%2 == 1 {
			id = ^vector.ID(0) - vector.ID(i)
		}
		items = append(items, itemFor(id, 4))
		want[id] = true
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	seen := 0
	err := c.ForEachItem(ctx, func(it Item) error {
		if !want[it.ID] {
			t.Errorf("unexpected or repeated id %d", it.ID)
		}
		delete(want, it.ID)
		seen++
		return checkItem(it, 4)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 0 {
		t.Fatalf("ForEachItem missed %d ids (saw %d)", len(want), seen)
	}
	n := 0
	err = c.ForEachPayload(ctx, func(it Item) error {
		n++
		want := itemFor(it.ID, 4)
		if it.Vector != nil || it.Key != want.Key || it.Text != want.Text || string(it.Metadata) != string(want.Metadata) {
			return fmt.Errorf("ForEachPayload item %d: %+v", it.ID, it)
		}
		return nil
	})
	if err != nil || n != seen {
		t.Fatalf("ForEachPayload: %d items, %v", n, err)
	}
	stop := errors.New("stop")
	if err := c.ForEachItem(ctx, func(Item) error { return stop }); err != stop {
		t.Fatalf("ForEachItem did not return fn's error: %v", err)
	}
}

// TestMigrateForward plays a future build: with one more migration
// registered, an existing file of this build's version is migrated at
// Open, keeping its items; this build then refuses the migrated file.
func TestMigrateForward(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.cairn")
	makeDB(t, path, 50)

	saved := migrations
	migrations = append(slices.Clip(migrations), func(ctx context.Context, conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, "CREATE TABLE extra (x INTEGER)")
		return err
	})
	db, err := Open(ctx, path, nil)
	if err != nil {
		migrations = saved
		t.Fatalf("Open with a newer schema: %v", err)
	}
	var version int64
	err = db.withConn(func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "INSERT INTO extra VALUES (1)"); err != nil {
			return err
		}
		return conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version)
	})
	n := -1
	if c, cerr := db.Collection(ctx, "c"); cerr == nil {
		n = c.Len()
	}
	db.Close()
	migrations = saved
	if err != nil || version != int64(len(saved)+1) {
		t.Fatalf("after migration: user_version %d, %v", version, err)
	}
	if n != 50 {
		t.Fatalf("after migration the collection holds %d items, want 50", n)
	}
	before := fileSum(t, path)
	if _, err := Open(ctx, path, nil); !errors.Is(err, vector.ErrUnsupportedVersion) {
		t.Fatalf("old build opening a migrated file: %v, want ErrUnsupportedVersion", err)
	}
	if fileSum(t, path) != before {
		t.Fatal("refused file was modified")
	}
}

func TestOpenDirectory(t *testing.T) {
	if _, err := Open(context.Background(), t.TempDir(), nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("Open of a directory: %v, want ErrInvalidOptions", err)
	}
	if _, err := Open(context.Background(), "x.cairn", &Options{MaxGroup: -1}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("Open with bad options: %v, want ErrInvalidOptions", err)
	}
}

// TestOpenInMissingDirectory: a new file in a directory that does not
// exist is refused with an error wrapping fs.ErrNotExist, where SQLite
// said only "unable to open database file" of a temporary name.
func TestOpenInMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "x.cairn")
	if _, err := Open(context.Background(), path, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open in a missing directory: %v, want fs.ErrNotExist", err)
	}
}

func TestOpenOddPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "we?ird #dir% ü")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a&b=c?.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", 2, vector.L2)
	if err := c.Put(ctx, 1, vector.Vector{1, 2}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at its path: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d files in the directory after Close, want 1", len(entries))
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.Collection(ctx, "c"); err != nil || c.Len() != 1 {
		t.Fatalf("reopened: %v", err)
	}
}

func TestBackup(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 8, vector.Cosine)
	var items []Item
	for id := range vector.ID(300) {
		items = append(items, itemFor(id, 8))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveIndex(ctx, "g", fakeIndex{seq: 3, size: 1000}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.cairn")
	if err := db.Backup(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, dst); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Backup over an existing file: %v", err)
	}
	cp, err := Open(ctx, dst, nil)
	if err != nil {
		t.Fatalf("Open of the backup: %v", err)
	}
	defer cp.Close()
	c2, err := cp.Collection(ctx, "c")
	if err != nil || c2.Len() != 300 || c2.Changes() != c.Changes() {
		t.Fatalf("backup: %v, len %d", err, c2.Len())
	}
	if err := c2.ForEachItem(ctx, func(it Item) error { return checkItem(it, 8) }); err != nil {
		t.Fatal(err)
	}
	var l fakeLoader
	if err := c2.LoadIndex(ctx, "g", &l); err != nil || l.seq != 3 {
		t.Fatalf("index in the backup: %v", err)
	}
	if err := cp.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	var av, ps int64
	var jm string
	cp.withConn(func(conn *sql.Conn) error {
		conn.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&av)
		conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&ps)
		return conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&jm)
	})
	if av != 2 || ps != pageSize || jm != "wal" {
		t.Fatalf("backup opened with auto_vacuum %d, page size %d, journal %q", av, ps, jm)
	}
}

// TestBackupCancelled: a Backup cut short by its ctx leaves nothing at
// its path, so a retry there succeeds; it left the file VACUUM INTO had
// begun (empty, or whole but not synced), and the retry failed with
// ErrExist.
func TestBackupCancelled(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 64, vector.Cosine)
	var items []Item
	for id := range vector.ID(20000) {
		items = append(items, itemFor(id, 64))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := 0
	for i := 0; i < 200 && cut < 3; i++ {
		dst := filepath.Join(dir, fmt.Sprint("copy", i))
		cctx, cancel := context.WithTimeout(ctx, time.Duration(i)*100*time.Microsecond)
		err := db.Backup(cctx, dst)
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Backup cut short: %v", err)
		}
		cut++
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a Backup cut short left %s: %v", filepath.Base(dst), err)
		}
		if err := db.Backup(ctx, dst); err != nil {
			t.Fatalf("Backup again at the path of one cut short: %v", err)
		}
	}
	if cut == 0 {
		t.Fatal("no Backup was cut short")
	}
}

// TestBackupOddNames backs up to names SQLite would read as a URI or a
// URI's parts, relative to the working directory: each copy must be at
// the name asked for, and open.
func TestBackupOddNames(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 21)
	t.Chdir(t.TempDir())
	for _, name := range []string{"file:copy.cairn", "x?mode=memory", "a#b", "%41", "sp ace"} {
		if err := db.Backup(ctx, name); err != nil {
			t.Fatalf("Backup(%q): %v", name, err)
		}
		cp, err := Open(ctx, name, &Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("Open of the backup %q: %v", name, err)
		}
		if c, err := cp.Collection(ctx, "c"); err != nil || c.Len() != 20 {
			t.Errorf("backup %q: %v", name, err)
		}
		cp.Close()
	}
	if names, _ := filepath.Glob("*"); len(names) != 5 {
		t.Errorf("files made: %q", names)
	}
}
