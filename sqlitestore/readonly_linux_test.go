package sqlitestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestReadOnlyMedia reads a file on a read-only mount: a tmpfs remounted
// read-only, and a read-only bind mount of a directory, where SQLite may
// create neither a log nor its index. It needs root, for the mounts.
func TestReadOnlyMedia(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	path := filepath.Join(dir, "backup.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 101)
	// A bind mount is one more name of the same file: a second writer
	// through it is refused.
	rw := filepath.Join(t.TempDir(), "rw")
	os.Mkdir(rw, 0o755)
	if err := syscall.Mount(dir, rw, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, filepath.Join(rw, "backup.cairn"), nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second writer through a bind mount: %v, want ErrLocked", err)
	}
	syscall.Unmount(rw, syscall.MNT_DETACH)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)

	bind := filepath.Join(t.TempDir(), "bind")
	os.Mkdir(bind, 0o755)
	if err := syscall.Mount(dir, bind, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(bind, syscall.MNT_DETACH) })
	if err := syscall.Mount("", bind, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	read := func(path string) {
		t.Helper()
		r, err := Open(ctx, path, &Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only Open of %s: %v", path, err)
		}
		defer r.Close()
		c, err := r.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ForEachItem(ctx, func(it Item) error { return checkItem(it, 8) }); err != nil {
			t.Fatal(err)
		}
		if c.Len() != 100 {
			t.Fatalf("%d items, want 100", c.Len())
		}
		if err := r.IntegrityCheck(ctx); err != nil {
			t.Fatal(err)
		}
		backup := filepath.Join(t.TempDir(), "copy.cairn")
		if err := r.Backup(ctx, backup); err != nil {
			t.Fatalf("Backup: %v", err)
		}
	}
	read(filepath.Join(bind, "backup.cairn")) // the bind mount is read-only

	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	read(path)
	if _, err := Open(ctx, path, nil); !errors.Is(err, ErrNotWritable) || errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("a writable Open on read-only media: %v, want ErrNotWritable, not ErrCorrupt", err)
	}
	read(path)
	if fileSum(t, path) != before {
		t.Fatal("the file changed")
	}
}
