package sqlitestore

import (
	"context"
	"errors"
	"os"
	"os/exec"
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
	// A new file there, before: "create: unable to open database file (14)".
	if _, err := Open(ctx, filepath.Join(dir, "new.cairn"), nil); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("a new file on read-only media: %v, want ErrNotWritable", err)
	}
	read(path)
	if fileSum(t, path) != before {
		t.Fatal("the file changed")
	}
}

// TestOpenOthersFile has another user (nobody) open a file they may read
// but not write, in a directory they may write: SQLite would open it
// read-only and fail each write, so a writable Open must fail with
// ErrNotWritable, leaving no log beside the file, and a read-only one
// read it (its log and index stay: see DB.tidy). It needs root, to run
// the test binary as nobody.
func TestOpenOthersFile(t *testing.T) {
	ctx := context.Background()
	if path := os.Getenv("SQLITESTORE_OPEN_AS_OTHER"); path != "" {
		// The test binary, run as nobody by the test below.
		if _, err := Open(ctx, path, nil); !errors.Is(err, ErrNotWritable) {
			t.Fatalf("writable Open: %v, want ErrNotWritable", err)
		}
		for _, side := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + side); err == nil {
				t.Errorf("the writable Open left %s beside the file", side)
			}
		}
		db, err := Open(ctx, path, &Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only Open: %v", err)
		}
		defer db.Close()
		if c, err := db.Collection(ctx, "c"); err != nil || c.Len() != 20 {
			t.Fatalf("read-only Open: %v", err)
		}
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root, to run as another user")
	}
	// A directory everyone may enter and write, as /tmp.
	dir, err := os.MkdirTemp("", "cairn-others-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "root.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 21)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sqlitestore.test")
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestOpenOthersFile$", "-test.v")
	cmd.Env = append(os.Environ(), "SQLITESTORE_OPEN_AS_OTHER="+path)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("as nobody: %v\n%s", err, out)
	case err != nil: // a temporary directory mounted noexec, say
		t.Skipf("cannot run the test binary as nobody: %v", err)
	}
	if fileSum(t, path) != before {
		t.Fatal("the file changed")
	}
}
