package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairndb/cairn/vector"
)

const openerEnv = "CAIRN_SQLITESTORE_OPENER" // "write" or "read", then the path

// TestOpenerChild is the child side of the tests below: it opens the file
// named in its environment once, as a writer ("write") that adds one item
// or as a reader ("read") that counts them, and prints what happened. It
// does nothing in a normal run.
func TestOpenerChild(t *testing.T) {
	mode, path, ok := strings.Cut(os.Getenv(openerEnv), " ")
	if !ok {
		t.Skip("only runs as the child of an open test")
	}
	ctx := context.Background()
	db, err := Open(ctx, path, &Options{ReadOnly: mode == "read"})
	switch {
	case errors.Is(err, ErrLocked):
		fmt.Println("locked")
		return
	case errors.Is(err, ErrHardLinked):
		fmt.Println("linked")
		return
	case err != nil:
		fmt.Println("error", err)
		return
	}
	defer db.Close()
	c, err := db.Collection(ctx, "c")
	if err != nil {
		fmt.Println("error", err)
		return
	}
	if mode == "write" {
		if err := c.PutItems(ctx, []Item{itemFor(1_000_000, 8)}); err != nil {
			fmt.Println("error", err)
			return
		}
	}
	fmt.Println("items", c.Len())
}

// opener runs TestOpenerChild in a new process and returns its line.
func opener(t *testing.T, mode, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), openerEnv+"="+mode+" "+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return strings.SplitN(string(out), "\n", 2)[0]
}

func putRange(t *testing.T, c *Collection, from, to vector.ID) {
	t.Helper()
	for id := from; id < to; id++ {
		if err := c.PutItems(context.Background(), []Item{itemFor(id, 8)}); err != nil {
			t.Fatalf("PutItems(%d): %v", id, err)
		}
	}
}

// TestOpenByAnyNameKeepsLock opens a file its own Open created, then
// opens it again under every other name it has: a symlink, a hard link,
// a relative path, a path through "..". Each second Open is refused, and
// the refusal must not cost the owner its lock: another process still
// finds the file locked, and every write the owner made before and after
// is in the file after Close. A refused Open that opened and closed a
// descriptor of the file dropped the owner's POSIX locks; the other
// process then wrote and the owner's writes were lost.
//
// While the file has two names, a reader under either is refused too
// (ErrHardLinked), as is the owner's own reopen: SQLite keeps the log
// beside the name it opened, and a reader under the hard link read the
// file without the owner's log (1,610 of 2,000 items, or torn pages).
func TestOpenByAnyNameKeepsLock(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "owned.cairn")
	db, err := Open(ctx, path, nil) // creates it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "c", 8, vector.L2)
	putRange(t, c, 1, 101)

	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink, hardlink := filepath.Join(dir, "symlink.cairn"), filepath.Join(dir, "hardlink.cairn")
	if err := os.Symlink(path, symlink); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hardlink); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	names := []string{path, symlink, hardlink, "../owned.cairn", filepath.Join(sub, "..", "owned.cairn")}
	for i, name := range names {
		if _, err := Open(ctx, name, nil); !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open as %s: %v, want ErrLocked", name, err)
		}
		if got := opener(t, "write", name); got != "locked" {
			t.Fatalf("another process's Open as %s, after the refusal: %q, want locked", name, got)
		}
		putRange(t, c, vector.ID(101+100*i), vector.ID(201+100*i))
	}
	for _, name := range []string{path, hardlink} {
		if _, err := Open(ctx, name, &Options{ReadOnly: true}); !errors.Is(err, ErrHardLinked) {
			t.Fatalf("read-only Open as %s beside the owner: %v, want ErrHardLinked", name, err)
		}
		if got := opener(t, "read", name); got != "linked" {
			t.Fatalf("another process's read-only Open as %s: %q, want linked", name, got)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path, nil); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("reopen of a file with two names: %v, want ErrHardLinked", err)
	}
	if err := os.Remove(hardlink); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	want := 100 + 100*len(names)
	if c.Len() != want {
		t.Fatalf("%d items after reopen, want %d", c.Len(), want)
	}
	for id := vector.ID(1); id <= vector.ID(want); id++ {
		it, err := c.GetItem(ctx, id)
		if err != nil {
			t.Fatalf("item %d: %v", id, err)
		}
		if err := checkItem(it, 8); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadersBesideWriter opens readers, in this process and another,
// while a writer has the file: each sees the file as of its Open, a
// second writer is refused, and the readers change nothing.
func TestReadersBesideWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "c", 8, vector.L2)
	putRange(t, c, 1, 51)

	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open beside the writer: %v", err)
	}
	defer r.Close()
	rc, err := r.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := opener(t, "read", path); got != "items 50" {
		t.Fatalf("a reader in another process: %q, want items 50", got)
	}
	putRange(t, c, 51, 101)
	if err := c.DeleteItems(ctx, []vector.ID{1, 2}); err != nil {
		t.Fatal(err)
	}
	// This reader's snapshot is the file at its Open; a new one sees the
	// writes since.
	if rc.Len() != 50 {
		t.Fatalf("reader's snapshot has %d items, want 50", rc.Len())
	}
	for _, id := range []vector.ID{1, 2, 50} {
		it, err := rc.GetItem(ctx, id)
		if err != nil {
			t.Fatalf("reader's item %d: %v", id, err)
		}
		if err := checkItem(it, 8); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rc.GetItem(ctx, 60); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("reader sees item 60, written after its Open: %v", err)
	}
	if got := opener(t, "read", path); got != "items 98" {
		t.Fatalf("a new reader in another process: %q, want items 98", got)
	}
	if got := opener(t, "write", path); got != "locked" {
		t.Fatalf("a second writer in another process beside readers: %q, want locked", got)
	}
	if _, err := Open(ctx, path, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second writer in this process: %v, want ErrLocked", err)
	}

	// Every write on a reader is refused, and changes nothing.
	writes := map[string]error{
		"PutItems":       rc.PutItems(ctx, []Item{itemFor(500, 8)}),
		"DeleteItems":    rc.DeleteItems(ctx, []vector.ID{3}),
		"SetSettings":    rc.SetSettings(ctx, []byte(`{}`)),
		"SaveIndex":      rc.SaveIndex(ctx, "x", strings.NewReader("")),
		"DeleteIndex":    rc.DeleteIndex(ctx, "x"),
		"Compact":        r.Compact(ctx),
		"DropCollection": r.DropCollection(ctx, "c"),
		"CreateCollection": func() error {
			_, err := r.CreateCollection(ctx, "d", CollectionConfig{Dim: 2, Metric: vector.L2})
			return err
		}(),
	}
	for name, err := range writes {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a reader: %v, want ErrReadOnly", name, err)
		}
	}
	if rc.Len() != 50 {
		t.Fatalf("reader has %d items after refused writes", rc.Len())
	}

	// A reader's backup holds the latest commit.
	backup := filepath.Join(t.TempDir(), "backup.cairn")
	if err := r.Backup(ctx, backup); err != nil {
		t.Fatalf("Backup from a reader: %v", err)
	}
	b, err := Open(ctx, backup, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	bc, err := b.Collection(ctx, "c")
	if err != nil || bc.Len() != 98 {
		t.Fatalf("backup: %v, %d items, want 98", err, bc.Len())
	}
	b.Close()

	// The writer goes on, and closes, while the reader is open; the
	// reader still reads its snapshot, and the file holds every write.
	putRange(t, c, 101, 111)
	if err := db.Close(); err != nil {
		t.Fatalf("writer's Close beside a reader: %v", err)
	}
	if it, err := rc.GetItem(ctx, 1); err != nil || checkItem(it, 8) != nil {
		t.Fatalf("reader after the writer closed: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("reader's Close: %v", err)
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.Collection(ctx, "c"); err != nil || c.Len() != 108 {
		t.Fatalf("reopened: %v, %d items, want 108", err, c.Len())
	}
}

// TestReadOnlyChangesNothing opens a closed file read-only, reads it and
// closes it: every byte of the file is as it was, and no log is left.
func TestReadOnlyChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "closed.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", 8, vector.Cosine)
	putRange(t, c, 1, 201)
	if err := c.SaveIndex(ctx, "g", strings.NewReader("graph")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	link := filepath.Join(t.TempDir(), "link.cairn")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, link, path} {
		r, err := Open(ctx, name, &Options{ReadOnly: true, CheckIntegrity: true})
		if err != nil {
			t.Fatal(err)
		}
		rc, err := r.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.ForEachItem(ctx, func(it Item) error { return checkItem(it, 8) }); err != nil {
			t.Fatal(err)
		}
		if err := r.IntegrityCheck(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if fileSum(t, path) != before {
			t.Fatal("a read-only open changed the file")
		}
	}
	for _, f := range []string{path + "-wal", path + "-shm", link + "-wal", link + "-shm"} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a reader left %s: %v", f, err)
		}
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "none.cairn"), &Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only Open of a missing file: %v, want ErrNotExist", err)
	}
}

// TestReaderLeavesWhatItFound: a reader leaves the log and index a dead
// writer left beside the file (an empty log, an index to rebuild), as it
// found them but for SQLite's rebuild of the index (it used to delete
// them: the log held no commit).
func TestReaderLeavesWhatItFound(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "left.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putRange(t, mustCollection(t, db, "c", 8, vector.Cosine), 1, 11)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	if err := os.WriteFile(path+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-shm", make([]byte, 32<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if rc, err := r.Collection(ctx, "c"); err != nil || rc.Len() != 10 {
		t.Fatalf("reader: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != before {
		t.Fatal("the reader changed the file")
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); err != nil {
			t.Errorf("the reader removed the %s it found: %v", side, err)
		}
	}
}

// TestWriterAfterRefusalBesideReader opens a reader in this process while
// another process writes the file: this process's writer is refused, and
// once the other writer is gone, it is let in.
func TestWriterAfterRefusalBesideReader(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "held.cairn")
	ch := startChild(t, "hold", path, 0)
	ch.waitReady(t)
	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reader beside another process's writer: %v", err)
	}
	defer r.Close()
	if _, err := Open(ctx, path, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("writer while another process writes: %v, want ErrLocked", err)
	}
	ch.kill(t, 0)
	w, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("writer once the other is gone, beside this process's reader: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDanglingLink opens a path that is a symbolic link to a file
// not yet there: the file is created where the link points, as open(2)
// creates it, and the link opens it afterwards.
func TestOpenDanglingLink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "data"), 0o755)
	link := filepath.Join(dir, "link.cairn")
	if err := os.Symlink(filepath.Join("data", "real.cairn"), link); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, link, nil)
	if err != nil {
		t.Fatalf("Open through a dangling link: %v", err)
	}
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 11)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "data", "real.cairn")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("no file where the link points: %v", err)
	}
	db, err = Open(ctx, link, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.Collection(ctx, "c"); err != nil || c.Len() != 10 {
		t.Fatalf("reopened: %v", err)
	}
}

// TestReaderClosesBesideWriterOpening has readers of this process open
// and close a file while a writer of this process opens it, writes and
// closes, over and over: a closing reader removes the log and index it
// made only while no other DB of the process has the file (its locks are
// blind to the process's own), so no acknowledged write is lost.
func TestReaderClosesBesideWriterOpening(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCollection(t, db, "c", 8, vector.L2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	t.Cleanup(func() {
		close(stop)
		readers.Wait()
	})
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := Open(ctx, path, &Options{ReadOnly: true})
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				r.Close()
			}
		})
	}
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for id := range vector.ID(rounds) {
		w, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatalf("writer: %v", err)
		}
		c, err := w.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PutItems(ctx, []Item{itemFor(id+1, 8)}); err != nil {
			t.Fatal(err)
		}
		// A crash now must keep the write: check that the log the commit
		// went to is the one beside the file.
		if n := walFrames(t, path); n == 0 {
			t.Fatalf("round %d: the commit is in no log beside the file", id)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.Collection(ctx, "c"); err != nil || c.Len() != rounds {
		t.Fatalf("after %d acknowledged writes: %v, %d items", rounds, err, c.Len())
	}
}

// walFrames returns the number of frames in the log beside the file at
// path (0 if there is none).
func walFrames(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		return 0
	}
	return int((fi.Size() - 32) / (24 + pageSize))
}
