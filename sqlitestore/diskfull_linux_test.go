package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// Fault injection on the group commit: the disk fills up (a small tmpfs,
// SQLITE_FULL) or the file size limit is hit (RLIMIT_FSIZE, an I/O error)
// while a group of writes is in its transaction. Whatever each write is
// told, the file must agree: done means durable, failed means absent, and
// a failed write can be retried as it was.

const faultDim = 256

type fault struct {
	name string
	// dir returns the directory to put the database in.
	dir func(t *testing.T) string
	// arm leaves about 64 KiB of room for the file at path to grow;
	// disarm gives the room back.
	arm, disarm func(t *testing.T, path string)
	// is is what a write the fault refuses must match, if anything.
	is error
}

func faults() []fault {
	var ballast string
	var limit syscall.Rlimit
	return []fault{
		{
			name: "disk full",
			dir: func(t *testing.T) string {
				dir := filepath.Join(t.TempDir(), "mnt")
				os.Mkdir(dir, 0o755)
				if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=32m"); err != nil {
					t.Skipf("cannot mount a tmpfs (needs root): %v", err)
				}
				t.Cleanup(func() { syscall.Unmount(dir, 0) })
				return dir
			},
			arm: func(t *testing.T, path string) {
				var st syscall.Statfs_t
				if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
					t.Fatal(err)
				}
				ballast = filepath.Join(filepath.Dir(path), "ballast")
				free := int64(st.Bavail) * st.Bsize
				if err := os.WriteFile(ballast, make([]byte, free-64<<10), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			disarm: func(t *testing.T, path string) { os.Remove(ballast) },
			is:     ErrDiskFull,
		},
		{
			name: "file size limit",
			dir:  func(t *testing.T) string { return t.TempDir() },
			arm: func(t *testing.T, path string) {
				var size int64
				for _, p := range []string{path, path + "-wal"} {
					if fi, err := os.Stat(p); err == nil {
						size = max(size, fi.Size())
					}
				}
				signal.Ignore(syscall.SIGXFSZ) // get EFBIG instead of being killed
				if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
					t.Fatal(err)
				}
				lower := limit
				lower.Cur = uint64(size + 64<<10)
				if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lower); err != nil {
					t.Fatal(err)
				}
			},
			disarm: func(t *testing.T, path string) {
				syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit)
				signal.Reset(syscall.SIGXFSZ)
			},
		},
	}
}

func TestGroupCommitFaults(t *testing.T) {
	for _, f := range faults() {
		// With a small page cache the large write spills pages to the log
		// in the middle of its statements; with the default one it meets
		// the fault only at COMMIT.
		for _, spill := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/spill=%v", f.name, spill), func(t *testing.T) { testGroupCommitFault(t, f, spill) })
		}
	}
}

func testGroupCommitFault(t *testing.T, f fault, spill bool) {
	ctx := context.Background()
	path := filepath.Join(f.dir(t), "test.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	c := mustCollection(t, db, "c", faultDim, vector.L2)
	batch := func(from, to int) []Item {
		var items []Item
		for id := from; id <= to; id++ {
			items = append(items, itemFor(vector.ID(id), faultDim))
		}
		return items
	}
	if err := c.PutItems(ctx, batch(1, 100)); err != nil {
		t.Fatal(err)
	}
	db.connMu.Lock()
	if spill {
		if _, err := db.conn.ExecContext(ctx, "PRAGMA cache_size=20"); err != nil {
			t.Fatal(err)
		}
	}
	// Queue one group behind the held lock: a constraint failure, a large
	// write that cannot fit, and a small one.
	type write struct {
		name  string
		items []Item
		err   chan error
	}
	writes := []*write{
		{name: "duplicate", items: batch(1, 1)},
		{name: "duplicate in group", items: batch(2, 2)},
		{name: "large", items: batch(1000, 1999)},
		{name: "small", items: batch(5000, 5000)},
	}
	for i, w := range writes {
		w.err = make(chan error, 1)
		go func() { w.err <- c.PutItems(ctx, w.items) }()
		for deadline := time.Now().Add(10 * time.Second); ; {
			// The first is taken by the committer, which then waits for
			// the lock; the others queue up behind it.
			if (i == 0 && len(db.reqs) == 0) || (i > 0 && len(db.reqs) == i) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("write %q never queued", w.name)
			}
			time.Sleep(time.Millisecond)
		}
		if i == 0 {
			time.Sleep(20 * time.Millisecond) // let the committer finish gathering
		}
	}
	f.arm(t, path)
	db.connMu.Unlock()
	results := map[string]error{}
	for _, w := range writes {
		results[w.name] = <-w.err
	}
	f.disarm(t, path)
	for _, w := range writes {
		t.Logf("%s: %v", w.name, results[w.name])
	}
	if !errors.Is(results["duplicate"], vector.ErrDuplicateID) || !errors.Is(results["duplicate in group"], vector.ErrDuplicateID) {
		t.Errorf("the duplicates were not refused as duplicates: %v; %v", results["duplicate"], results["duplicate in group"])
	}
	if results["large"] == nil {
		t.Fatal("the large write fitted: the fault never fired")
	}
	if f.is != nil && (!errors.Is(results["large"], f.is) || !errors.Is(results["large"], syscall.ENOSPC)) {
		t.Errorf("the large write's error does not match %v and ENOSPC: %v", f.is, results["large"])
	}
	// What each write was told, the store must show, now and after reopen.
	check := func(when string) {
		for _, w := range writes[2:] {
			for _, it := range w.items {
				got, err := c.GetItem(ctx, it.ID)
				switch {
				case results[w.name] == nil && err != nil:
					t.Fatalf("%s: %s write reported done, item %d: %v", when, w.name, it.ID, err)
				case results[w.name] == nil:
					if err := checkItem(got, faultDim); err != nil {
						t.Fatalf("%s: %v", when, err)
					}
				case !errors.Is(err, vector.ErrNotFound):
					t.Fatalf("%s: %s write reported failed (%v), yet item %d is stored (%v)", when, w.name, results[w.name], it.ID, err)
				}
			}
		}
	}
	check("after the fault")
	// Retried with room to spare, the failed writes succeed as they were.
	for _, w := range writes[2:] {
		if results[w.name] != nil {
			if err := c.PutItems(ctx, w.items); err != nil {
				t.Fatalf("retry of the %s write: %v", w.name, err)
			}
			results[w.name] = nil
		}
	}
	check("after the retries")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	check("after reopen")
	if n := c.Len(); n != 100+1000+1 {
		t.Fatalf("%d items after reopen, want %d", n, 1101)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestOpenOnFullDisk opens a file whose disk has no room left: a writable
// Open, which must make the log's index beside the file, fails with
// ErrDiskFull and leaves the file as it was; a read-only Open reads it;
// once there is room, the file opens as before.
func TestOpenOnFullDisk(t *testing.T) {
	ctx := context.Background()
	disk := faults()[0]
	path := filepath.Join(disk.dir(t), "test.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", faultDim, vector.L2)
	var items []Item
	for id := vector.ID(1); id <= 100; id++ {
		items = append(items, itemFor(id, faultDim))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-shm") // as a copy of the file, or a reboot, leaves it
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	disk.arm(t, path)
	// The ballast leaves 64 KiB: take that too.
	fill, err := os.Create(filepath.Join(filepath.Dir(path), "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := fill.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	fill.Close()
	db, err = Open(ctx, path, nil)
	if err == nil {
		db.Close()
		t.Fatal("a writable Open on a full disk succeeded")
	}
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writable Open on a full disk: %v, want ErrDiskFull", err)
	}
	if after, err := os.ReadFile(path); err != nil || string(after) != string(before) {
		t.Fatalf("the failed Open changed the file (read error %v)", err)
	}
	countItems := func(ro bool) {
		t.Helper()
		db, err := Open(ctx, path, &Options{ReadOnly: ro})
		if err != nil {
			t.Fatalf("Open (read-only %v): %v", ro, err)
		}
		defer db.Close()
		c, err := db.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Len(); n != len(items) {
			t.Fatalf("Open (read-only %v): %d items, want %d", ro, n, len(items))
		}
	}
	countItems(true)

	os.Remove(fill.Name())
	disk.disarm(t, path)
	countItems(false)
}
