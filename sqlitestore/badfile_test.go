package sqlitestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// makeDB writes a closed cairn database with n items of dimension 64.
func makeDB(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", 64, vector.L2)
	var items []Item
	for id := 1; id <= n; id++ {
		items = append(items, itemFor(vector.ID(id), 64))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestOpenBadFiles(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		want []error
	}{
		{"empty", func(t *testing.T, path string) {
			os.WriteFile(path, nil, 0o644)
		}, []error{ErrNotDatabase, vector.ErrCorrupt}},
		{"random bytes", func(t *testing.T, path string) {
			b := make([]byte, 64<<10)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			os.WriteFile(path, b, 0o644)
		}, []error{ErrNotDatabase, vector.ErrCorrupt}},
		{"short header", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("SQLite format 3\x00abc"), 0o644)
		}, []error{ErrNotDatabase}},
		{"text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("not a database\n", 100)), 0o644)
		}, []error{ErrNotDatabase}},
		{"other application's SQLite", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}, []error{ErrNotDatabase}},
		{"truncated mid-page", func(t *testing.T, path string) {
			makeDB(t, path, 2000)
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/2+100)
		}, []error{vector.ErrCorrupt}},
		{"truncated at a page boundary", func(t *testing.T, path string) {
			makeDB(t, path, 2000)
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/2/pageSize*pageSize)
		}, []error{vector.ErrCorrupt}},
		{"future version", func(t *testing.T, path string) {
			makeDB(t, path, 10)
			b, _ := os.ReadFile(path)
			binary.BigEndian.PutUint32(b[60:], uint32(schemaVersion()+1))
			os.WriteFile(path, b, 0o644)
		}, []error{vector.ErrUnsupportedVersion}},
		// A table or column of the history gone: Open succeeded, and
		// History failed later with "no such table", wrapping nothing.
		{"history dropped", func(t *testing.T, path string) {
			makeDB(t, path, 10)
			rawExec(t, path, "DROP TABLE history")
		}, []error{vector.ErrCorrupt}},
		{"history_since dropped", func(t *testing.T, path string) {
			makeDB(t, path, 10)
			rawExec(t, path, "DROP TABLE history_since")
		}, []error{vector.ErrCorrupt}},
		{"a history column renamed", func(t *testing.T, path string) {
			makeDB(t, path, 10)
			rawExec(t, path, "ALTER TABLE history RENAME COLUMN until TO untii")
		}, []error{vector.ErrCorrupt}},
		{"damaged b-tree page", func(t *testing.T, path string) {
			makeDB(t, path, 2000)
			b, _ := os.ReadFile(path)
			last := len(b)/pageSize - 1
			for p := 2; p <= last; p += 3 { // page type byte of a third of the pages
				b[p*pageSize] = 0x42
			}
			os.WriteFile(path, b, 0o644)
		}, []error{vector.ErrCorrupt}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "bad.cairn")
			tc.make(t, path)
			before := fileSum(t, path)
			entries, _ := os.ReadDir(dir)
			db, err := Open(ctx, path, nil)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("Open: %v; want errors.Is %v", err, want)
				}
			}
			if fileSum(t, path) != before {
				t.Error("the rejected file was modified")
			}
			if after, _ := os.ReadDir(dir); len(after) != len(entries) {
				t.Errorf("Open left files behind: %d entries before, %d after", len(entries), len(after))
			}
			// A read-only Open refuses it the same way, and leaves no log
			// or index behind either (it left an empty -wal and the -shm
			// where SQLite had connected before the refusal).
			if db, err := Open(ctx, path, &Options{ReadOnly: true}); err == nil {
				db.Close()
				t.Fatal("read-only Open succeeded")
			}
			if after, _ := os.ReadDir(dir); len(after) != len(entries) {
				t.Errorf("read-only Open left files behind: %d entries before, %d after", len(entries), len(after))
			}
			if fileSum(t, path) != before {
				t.Error("the rejected file was modified by a read-only Open")
			}
		})
	}
}

func TestIndexBlobs(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	o := &Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	path := filepath.Join(t.TempDir(), "idx.cairn")
	db, err := Open(ctx, path, o)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", 8, vector.Dot)
	if err := c.PutItems(ctx, []Item{itemFor(1, 8), itemFor(2, 8)}); err != nil {
		t.Fatal(err)
	}
	var l fakeLoader
	if err := c.LoadIndex(ctx, "g", &l); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("LoadIndex of nothing: %v, want ErrNotFound", err)
	}
	big := fakeIndex{seq: 7, size: 3*indexChunk + 12345} // several chunks
	if err := c.SaveIndex(ctx, "g", big); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadIndex(ctx, "g", &l); err != nil || l.seq != 7 {
		t.Fatalf("LoadIndex: seq %d, %v", l.seq, err)
	}
	// Reopen: still fresh.
	db.Close()
	if db, err = Open(ctx, path, o); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	l = fakeLoader{}
	if err := c.LoadIndex(ctx, "g", &l); err != nil || l.seq != 7 {
		t.Fatalf("LoadIndex after reopen: seq %d, %v", l.seq, err)
	}
	// A write makes it stale.
	if err := c.Delete(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadIndex(ctx, "g", &l); !errors.Is(err, ErrStaleIndex) {
		t.Fatalf("LoadIndex after a write: %v, want ErrStaleIndex", err)
	}
	if !strings.Contains(logs.String(), "rebuild") {
		t.Errorf("stale index not logged; log:\n%s", logs.String())
	}
	// Re-save, then damage one byte of a chunk: ErrCorrupt, items intact.
	if err := c.SaveIndex(ctx, "g", fakeIndex{seq: 8, size: 2 * indexChunk}); err != nil {
		t.Fatal(err)
	}
	err = db.withConn(func(conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, "UPDATE index_chunks SET data = substr(data, 1, 1000) || x'ff' || substr(data, 1002) WHERE seq = 1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if err := c.LoadIndex(ctx, "g", &l); !errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("LoadIndex of a damaged blob: %v, want ErrCorrupt", err)
	}
	if !strings.Contains(logs.String(), "WARN") {
		t.Errorf("damaged index not logged; log:\n%s", logs.String())
	}
	if it, err := c.GetItem(ctx, 1); err != nil || checkItem(it, 8) != nil {
		t.Fatalf("item 1 after index damage: %v", err)
	}
	// Rebuild and re-save: loads again.
	if err := c.SaveIndex(ctx, "g", fakeIndex{seq: 9, size: 100}); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadIndex(ctx, "g", &l); err != nil || l.seq != 9 {
		t.Fatalf("LoadIndex after re-save: seq %d, %v", l.seq, err)
	}
	if err := c.DeleteIndex(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadIndex(ctx, "g", &l); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("LoadIndex after DeleteIndex: %v", err)
	}
	if err := c.DeleteIndex(ctx, "g"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("DeleteIndex twice: %v", err)
	}
}

// rawExec runs statements on the file at path through SQLite alone.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenLongName creates files whose names are as long as a directory
// entry allows once SQLite's "-journal" is added: the temporary name a
// new file is built under must fit too.
func TestOpenLongName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{
		strings.Repeat("L", 247),
		strings.Repeat("é", 123) + "x", // a cut must not split a character
	} {
		path := filepath.Join(dir, name)
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatalf("Open of a new file with a %d-byte name: %v", len(name), err)
		}
		putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 3)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".*"))
		if len(left) > 0 {
			t.Errorf("left beside it: %q", left)
		}
	}
}

// TestOpenTrailingBytes opens a whole file with bytes appended after the
// pages its header counts, as a careless copy may leave: SQLite reads it
// whole, so it must open, read-only and writable, with every item.
func TestOpenTrailingBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 21)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("0123456789"))
	f.Close()
	for _, ro := range []bool{true, false} {
		db, err := Open(ctx, path, &Options{ReadOnly: ro})
		if err != nil {
			t.Fatalf("read-only %v: a whole file with 10 bytes appended: %v", ro, err)
		}
		c, err := db.Collection(ctx, "c")
		if err != nil || c.Len() != 20 {
			t.Fatalf("read-only %v: %v", ro, err)
		}
		if !ro {
			putRange(t, c, 21, 400)
			if err := db.IntegrityCheck(ctx); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
}

// TestOpenOrphanLog opens a missing file beside which the write-ahead log
// of a deleted database was left: SQLite would take the log's pages into
// the new file. Open refuses, creating nothing and leaving the log as it
// is; once the log is gone, it creates the file.
func TestOpenOrphanLog(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 200)
	log, err := os.ReadFile(path + "-wal") // as a crash would leave it
	if err != nil || len(log) == 0 {
		t.Fatalf("no log to leave: %d bytes, %v", len(log), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if err := os.WriteFile(path+"-wal", log, 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(ctx, path, nil); !errors.Is(err, ErrOrphanLog) {
		if err == nil {
			db.Close()
		}
		t.Fatalf("Open beside an orphan log = %v, want ErrOrphanLog", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused Open made the file: %v", err)
	}
	if got, _ := os.ReadFile(path + "-wal"); !bytes.Equal(got, log) {
		t.Errorf("the refused Open changed the log")
	}
	// A backup made there would meet the log at its first Open.
	other, _ := openTemp(t, nil)
	if err := other.Backup(ctx, path); !errors.Is(err, ErrOrphanLog) {
		t.Errorf("Backup beside an orphan log = %v, want ErrOrphanLog", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused Backup made the file: %v", err)
	}
	os.Remove(path + "-wal")
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open once the log is gone: %v", err)
	}
	defer db.Close()
	if names, err := db.Collections(ctx); err != nil || len(names) != 0 {
		t.Errorf("the new file holds collections %v, %v", names, err)
	}
}
