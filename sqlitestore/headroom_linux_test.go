package sqlitestore

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// A store whose disk filled up must take writes again once some room is
// made: the write-ahead log and its checkpoint must not need more than the
// headroom documented in RELIABILITY.md. The tests here fill a small tmpfs
// (root only) with writers until SQLITE_FULL, remove a filler file written
// before them, and retry.

const (
	headroomDim  = 768  // a common embedding size
	headroomText = 1024 // bytes of text per item
	// headroomBatch is the items of each write: batches, so that most
	// pages in the log are new ones, which a checkpoint must add to the
	// file.
	headroomBatch = 8
)

var headroomScan = flag.Bool("headroom", false, "TestDiskFullHeadroom: scan the space freed after a full disk for the least that lets retries succeed")

// fullRun is the outcome of one fill, free and retry.
type fullRun struct {
	acked                int   // writes acknowledged before the disk filled
	retried, retryFailed int   // writes that had failed on the full disk, and of them, those that failed again
	more, moreFailed     int   // new writes after the retries, and those that failed
	db, wal              int64 // file sizes when the disk filled
}

func (r fullRun) ok() bool { return r.retryFailed == 0 && r.moreFailed == 0 }

// mountTmpfs mounts a tmpfs of mib MiB, or skips the test without root.
func mountTmpfs(t *testing.T, mib int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dm", mib)); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

func headroomItem(id vector.ID) Item {
	it := itemFor(id, headroomDim)
	it.Text = strings.Repeat(string(rune('a'+id%26)), headroomText)
	return it
}

// fillFreeRetry writes a filler of filler bytes on a tmpfs of mib MiB,
// then lets writers write batches of headroomBatch items until each has
// met a full disk; it removes the filler, retries each writer's failed
// write, lets each write more new batches, and checks after reopen that every
// acknowledged write is stored whole and no failed one is.
func fillFreeRetry(t *testing.T, mib, writers int, filler int64, more int) fullRun {
	t.Helper()
	ctx := context.Background()
	dir := mountTmpfs(t, mib)
	path := filepath.Join(dir, "test.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	c := mustCollection(t, db, "c", headroomDim, vector.L2)
	fill := filepath.Join(dir, "filler")
	if err := os.WriteFile(fill, make([]byte, filler), 0o644); err != nil {
		t.Fatalf("filler of %d bytes: %v", filler, err)
	}
	var (
		mu     sync.Mutex
		acked  = map[vector.ID]bool{}
		failed = make([]vector.ID, writers)
		run    fullRun
		wg     sync.WaitGroup
	)
	// put writes the batch of items id to id+headroomBatch-1.
	put := func(id vector.ID) error {
		items := make([]Item, headroomBatch)
		for i := range items {
			items[i] = headroomItem(id + vector.ID(i))
		}
		err := c.PutItems(ctx, items)
		if err == nil {
			mu.Lock()
			for _, it := range items {
				acked[it.ID] = true
			}
			mu.Unlock()
		} else if !isFull(err) {
			t.Errorf("write %d: %v, want SQLITE_FULL", id, err)
		}
		return err
	}
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := vector.ID(w*1_000_000 + i*headroomBatch)
				if err := put(id); err != nil {
					failed[w] = id
					return
				}
			}
		})
	}
	wg.Wait()
	run.acked = len(acked)
	for _, p := range []struct {
		name string
		size *int64
	}{{path, &run.db}, {path + "-wal", &run.wal}} {
		if fi, err := os.Stat(p.name); err == nil {
			*p.size = fi.Size()
		}
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		wg.Go(func() {
			retryErr := put(failed[w])
			n := 0
			for i := range more {
				if put(vector.ID(w*1_000_000+500_000+i*headroomBatch)) != nil {
					n++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			run.retried++
			if retryErr != nil {
				run.retryFailed++
			}
			run.more += more
			run.moreFailed += n
		})
	}
	wg.Wait()
	if err := db.Close(); err != nil && !isFull(err) {
		t.Fatalf("Close: %v", err)
	}
	if db, err = Open(ctx, path, nil); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if n := c.Len(); n != len(acked) {
		t.Errorf("%d items after reopen, %d writes acknowledged", n, len(acked))
	}
	for id := range acked {
		got, err := c.GetItem(ctx, id)
		if err != nil {
			t.Fatalf("acknowledged item %d: %v", id, err)
		}
		want := headroomItem(id)
		if got.Key != want.Key || got.Text != want.Text || string(got.Metadata) != string(want.Metadata) || !equalVec(got.Vector, want.Vector) {
			t.Fatalf("acknowledged item %d read back wrong", id)
		}
	}
	for _, id := range failed {
		for i := range vector.ID(headroomBatch) {
			if _, err := c.GetItem(ctx, id+i); !acked[id+i] && !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("item %d, whose writes all failed, is stored (%v)", id+i, err)
			}
		}
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestDiskFullRetry fills a 20 MiB tmpfs with four writers, frees 6 MiB,
// and checks that each writer's failed write succeeds when retried, and
// that new writes do too. With SQLite's default log policy (checkpoint at
// 1,000 pages, 16 MiB here) the log and its checkpoint took that room and
// most writes failed again.
func TestDiskFullRetry(t *testing.T) {
	r := fillFreeRetry(t, 20, 4, 6<<20, 4)
	t.Logf("%+v", r)
	if !r.ok() {
		t.Fatalf("after freeing 6 MiB, %d of %d retried writes and %d of %d new ones failed on a full disk",
			r.retryFailed, r.retried, r.moreFailed, r.more)
	}
}

// TestDiskFullHeadroom measures, with -headroom, the least room that lets
// every retry and new write succeed after the disk filled (the tester's
// setup: a 20 MiB tmpfs, four writers, 768-d items with 1 KiB of text):
//
//	go test -run TestDiskFullHeadroom -headroom -v ./sqlitestore
//
// It frees from 0.5 MiB up in steps of 0.5 MiB, three runs each, and
// reports the least amount from which on every run succeeded.
func TestDiskFullHeadroom(t *testing.T) {
	if !*headroomScan {
		t.Skip("a measurement: run with -headroom")
	}
	const step = 512 << 10
	least := int64(-1)
	for free := int64(step); free <= 16<<20; free += step {
		all := true
		for range 3 {
			r := fillFreeRetry(t, 20, 4, free, 4)
			t.Logf("freed %4.1f MiB: %d acked; retries failed %d/%d, new writes failed %d/%d; file %.1f MiB, log %.1f MiB at full",
				float64(free)/(1<<20), r.acked, r.retryFailed, r.retried, r.moreFailed, r.more, float64(r.db)/(1<<20), float64(r.wal)/(1<<20))
			all = all && r.ok()
		}
		switch {
		case all && least < 0:
			least = free
		case !all:
			least = -1
		}
	}
	if least < 0 {
		t.Fatalf("retries still failed after freeing 16 MiB")
	}
	t.Logf("least room freed from which on every retry and new write succeeded: %.1f MiB", float64(least)/(1<<20))
}
