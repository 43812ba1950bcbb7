package sqlitestore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// read it. It needs root, to run
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
	runAs(t, dir, 65534, "TestOpenOthersFile", "SQLITESTORE_OPEN_AS_OTHER="+path)
	if fileSum(t, path) != before {
		t.Fatal("the file changed")
	}
}

// TestFullDiskReaderLeavesNothing reads a file on a full disk: SQLite's
// first attempt makes an empty log and a few bytes of its index before it
// fails, the reader then reads the file as immutable, and its Close must
// remove what that attempt made. It needs root, for the mount.
func TestFullDiskReaderLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		if os.Getuid() != 0 {
			t.Skipf("needs root, to mount a tmpfs: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	path := filepath.Join(dir, "full.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 21)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	pad, err := os.Create(filepath.Join(dir, "pad"))
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 4096); ; {
		if _, err := pad.Write(buf); err != nil {
			break // full
		}
	}
	pad.Close()
	before := fileSum(t, path)
	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open on a full disk: %v", err)
	}
	if c, err := r.Collection(ctx, "c"); err != nil || c.Len() != 20 {
		t.Fatalf("read on a full disk: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != before {
		t.Fatal("the file changed")
	}
	for _, side := range []string{"-wal", "-shm"} {
		if fi, err := os.Stat(path + side); err == nil {
			t.Errorf("the reader left %s beside the file (%d bytes)", side, fi.Size())
		}
	}
}

// TestOthersReaderLeavesOwnerWriting has another user read a file in a
// directory both may write: SQLite makes the log and its index as that
// user, which a writable Open by the file's owner cannot use, and the
// reader, who may not write the file, cannot tell whether it may remove
// them. The owner's Open removes them where the directory lets it, after
// a reader's Close and after a reader's death; in a sticky directory
// such as /tmp it cannot, and must say why it cannot write. It needs
// root, to run the test binary as two other users.
func TestOthersReaderLeavesOwnerWriting(t *testing.T) {
	const owner, reader = 1000, 65534
	ctx := context.Background()
	if path, role := os.Getenv("SQLITESTORE_OTHERS_PATH"), os.Getenv("SQLITESTORE_OTHERS_ROLE"); path != "" {
		// The test binary, run as owner or reader by the test below.
		switch role {
		case "read", "read-and-die":
			db, err := Open(ctx, path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only Open: %v", err)
			}
			if role == "read-and-die" {
				os.Exit(0) // no Close
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		case "write":
			db, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatalf("the owner's writable Open: %v", err)
			}
			c, err := db.Collection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, vector.ID(c.Len())); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		case "refused":
			_, err := Open(ctx, path, nil)
			if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), "another user") {
				t.Fatalf("the owner's writable Open: %v, want ErrNotWritable naming another user", err)
			}
		}
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root, to run as other users")
	}
	for _, mode := range []os.FileMode{0o777, 0o1777} {
		dir, err := os.MkdirTemp("", "cairn-others-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "owned.cairn")
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		putRange(t, mustCollection(t, db, "c", 8, vector.L2), 1, 21)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, owner, owner); err != nil {
			t.Fatal(err)
		}
		run := func(uid uint32, role string) {
			t.Helper()
			runAs(t, dir, uid, "TestOthersReaderLeavesOwnerWriting", "SQLITESTORE_OTHERS_PATH="+path, "SQLITESTORE_OTHERS_ROLE="+role)
		}
		if mode&os.ModeSticky != 0 {
			run(reader, "read")
			run(owner, "refused")
			continue
		}
		run(reader, "read")
		run(owner, "write")
		run(reader, "read-and-die")
		run(owner, "write")
		for _, side := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + side); err == nil {
				t.Errorf("directory mode %v: the owner's Close left %s beside the file", mode, side)
			}
		}
	}
}

// runAs runs test of this test binary as user (and group) uid, from a
// copy of the binary in dir, with env added to its environment; it fails
// t if the test fails, and skips t where the binary cannot run so (a
// temporary directory mounted noexec, say).
func runAs(t *testing.T, dir string, uid uint32, test string, env ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sqlitestore.test")
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("%s as uid %d (%s): %v\n%s", test, uid, strings.Join(env, " "), err, out)
	case err != nil:
		t.Skipf("cannot run the test binary as uid %d: %v", uid, err)
	}
}
