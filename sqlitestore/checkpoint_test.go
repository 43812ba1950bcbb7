package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// Tests of Open on a file caught by a crash in the middle of a checkpoint:
// the header already counts pages that only the write-ahead log holds.

const ckptDim = 256

// walPair writes a database whose write-ahead log holds the items above
// first (enough of them to grow the file), copies the file and its log
// while the DB is open (as a crash leaves them), and returns the copy's
// path and the ids written.
func walPair(t testing.TB) (string, int) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.cairn")
	db, err := Open(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", ckptDim, vector.L2)
	put := func(from, to int) {
		var items []Item
		for id := from; id <= to; id++ {
			items = append(items, itemFor(vector.ID(id), ckptDim))
		}
		if err := c.PutItems(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	put(1, 200)
	if err := db.Close(); err != nil { // checkpoints: the log is empty
		t.Fatal(err)
	}
	if db, err = Open(ctx, src, nil); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	const n = 2000 // about 150 pages of 16 KiB: below the auto-checkpoint
	for from := 201; from <= n; from += 200 {
		put(from, from+199)
	}
	dst := filepath.Join(dir, "crash.cairn")
	copyFile(t, src, dst)
	copyFile(t, src+"-wal", dst+"-wal")
	return dst, n
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// logCommit is one commit of a write-ahead log: the database's size
// after it, and the pages it wrote.
type logCommit struct {
	size  uint32
	pages map[uint32][]byte
}

// logCommits reads the log of the database at path naively (frames of 24
// bytes plus a page, salts equal to the header's), as an independent
// check of readWAL, and returns its page size and commits in order.
func logCommits(t *testing.T, path string) (int, []logCommit) {
	t.Helper()
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.BigEndian.Uint32(wal[8:]))
	var commits []logCommit
	pending := map[uint32][]byte{}
	for off := walHeaderSize; off+walFrameHeaderSize+ps <= len(wal); off += walFrameHeaderSize + ps {
		fh := wal[off : off+walFrameHeaderSize]
		if !bytes.Equal(fh[8:16], wal[16:24]) {
			break
		}
		pending[binary.BigEndian.Uint32(fh)] = wal[off+walFrameHeaderSize : off+walFrameHeaderSize+ps]
		if size := binary.BigEndian.Uint32(fh[4:]); size != 0 {
			commits = append(commits, logCommit{size, pending})
			pending = map[uint32][]byte{}
		}
	}
	return ps, commits
}

// copyPages writes into the database file at path the pages of commits,
// in order (a later commit's page over an earlier's), those up to last.
func copyPages(t *testing.T, path string, ps int, commits []logCommit, last int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commits {
		for p, b := range c.pages {
			if int64(p) <= last {
				if _, err := f.WriteAt(b, int64(p-1)*int64(ps)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkpointPrefix copies into the database file the latest committed
// frame of every page up to its current size, as a checkpoint that
// crashed before extending the file does.
func checkpointPrefix(t *testing.T, path string) (oldPages, newPages int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ps, commits := logCommits(t, path)
	if len(commits) > 0 {
		newPages = int64(commits[len(commits)-1].size)
	}
	oldPages = fi.Size() / int64(ps)
	if newPages <= oldPages {
		t.Fatalf("the log does not grow the file (%d pages → %d): the test writes too little", oldPages, newPages)
	}
	copyPages(t, path, ps, commits, oldPages)
	return oldPages, newPages
}

// putBatch puts items from to to (inclusive) into c in one call.
func putBatch(t *testing.T, c *Collection, from, to int) {
	t.Helper()
	var items []Item
	for id := from; id <= to; id++ {
		items = append(items, itemFor(vector.ID(id), ckptDim))
	}
	if err := c.PutItems(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

// checkpointed makes src with a collection "c" of n items, closes it (a
// checkpoint: the log is empty) and opens it again. The DB is closed
// when the test ends.
func checkpointed(t *testing.T, src string, n int) (*DB, *Collection) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	putBatch(t, mustCollection(t, db, "c", ckptDim, vector.L2), 1, n)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, src, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	return db, c
}

// cutBeforePageOne copies src and its log to path, then truncates the
// copy to the size of the log's last commit, as a power cut in the
// checkpoint leaves a file whose truncation reached the disk and whose
// page 1 did not. It fails t unless the commits shrank the database.
// It returns the page size and the last commit's size in pages.
func cutBeforePageOne(t *testing.T, src, path string) (ps int, last uint32) {
	t.Helper()
	copyFile(t, src, path)
	copyFile(t, src+"-wal", path+"-wal")
	ps, commits := logCommits(t, path)
	last = commits[len(commits)-1].size
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size()/int64(ps) <= int64(last) {
		t.Fatalf("the database did not shrink (%d pages, log's last commit %d)", fi.Size()/int64(ps), last)
	}
	if err := os.Truncate(path, int64(last)*int64(ps)); err != nil {
		t.Fatal(err)
	}
	return ps, last
}

// wantOpens checks that path opens, passes an integrity check and holds
// n items in its collection "c".
func wantOpens(t *testing.T, path string, n int) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != n {
		t.Fatalf("%d items, want %d", c.Len(), n)
	}
	return db
}

func TestOpenAfterCrashMidCheckpoint(t *testing.T) {
	ctx := context.Background()
	path, n := walPair(t)
	old, grown := checkpointPrefix(t, path)
	t.Logf("file %d pages, header and log %d", old, grown)
	db, err := Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatalf("Open after a crash mid-checkpoint: %v", err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != n {
		t.Fatalf("%d items, want %d", c.Len(), n)
	}
	for id := 1; id <= n; id++ {
		it, err := c.GetItem(ctx, vector.ID(id))
		if err != nil {
			t.Fatalf("item %d: %v", id, err)
		}
		if err := checkItem(it, ckptDim); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestOpenHeaderCountsMoreThanLog checks that a file whose header counts
// more pages than its log's last commit opens when the header is one the
// log wrote. A checkpoint held back by a reader's old snapshot leaves such
// a file after the database shrank: it copies the pages as that snapshot
// had them, page 1 counting the pages the database had then, skips the
// pages beyond the newest commit's size, and neither truncates the file
// nor restarts the log; SQLite reads page 1 from the log. Open refused
// such a file as truncated ("holds 103 of its 100 pages"), found after a
// reader outlived two crashed writers, a collection's delete and a
// Compact.
func TestOpenHeaderCountsMoreThanLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.cairn")
	db, _ := checkpointed(t, src, 200)
	big := mustCollection(t, db, "big", ckptDim, vector.L2)
	for from := 1; from <= 1600; from += 200 {
		putBatch(t, big, from, from+199)
	}
	if err := db.DropCollection(ctx, "big"); err != nil { // and vacuums: the database shrinks
		t.Fatal(err)
	}
	path := filepath.Join(dir, "held.cairn")
	copyFile(t, src, path)
	copyFile(t, src+"-wal", path+"-wal")

	// The checkpoint, held at the largest commit by a reader's snapshot.
	ps, commits := logCommits(t, path)
	last, held := commits[len(commits)-1].size, 0
	for i, c := range commits {
		if c.size > commits[held].size {
			held = i
		}
	}
	if commits[held].size <= last {
		t.Fatalf("the log does not shrink the database (largest %d pages, last %d)", commits[held].size, last)
	}
	copyPages(t, path, ps, commits[:held+1], int64(last))
	t.Logf("header %d pages, log's last commit %d", commits[held].size, last)

	rdb := wantOpens(t, path, 200)
	if _, err := rdb.Collection(ctx, "big"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("the deleted collection: %v, want ErrNotFound", err)
	}
}

// TestOpenRefusesTruncationTheLogDoesNotCover checks that trusting the log
// does not let real damage through: a short file whose missing pages are
// not all in the log is refused, and neither file is modified.
func TestOpenRefusesTruncationTheLogDoesNotCover(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"log deleted", func(t *testing.T, path string) {
			os.Remove(path + "-wal")
		}},
		{"log cut to its header", func(t *testing.T, path string) {
			os.Truncate(path+"-wal", walHeaderSize)
		}},
		{"log cut before its last commit", func(t *testing.T, path string) {
			fi, _ := os.Stat(path + "-wal")
			os.Truncate(path+"-wal", fi.Size()/3)
		}},
		{"log checksum broken", func(t *testing.T, path string) {
			f, _ := os.OpenFile(path+"-wal", os.O_RDWR, 0)
			f.WriteAt([]byte{0xde, 0xad}, walHeaderSize+walFrameHeaderSize+100)
			f.Close()
		}},
		{"file cut below what the log holds", func(t *testing.T, path string) {
			os.Truncate(path, pageSize) // page 1 only; the log holds only changed pages
		}},
		{"file cut mid-page", func(t *testing.T, path string) {
			os.Truncate(path, 3*pageSize+100)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := walPair(t)
			checkpointPrefix(t, path)
			tc.damage(t, path)
			before := sums(t, path)
			db, err := Open(ctx, path, nil)
			if err == nil {
				db.Close()
				t.Fatal("Open accepted the damaged file")
			}
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			if after := sums(t, path); after != before {
				t.Fatalf("Open modified the files: %v → %v", before, after)
			}
		})
	}
}

// sums identifies the contents of a database file and its log (empty if
// absent).
func sums(t *testing.T, path string) [2][32]byte {
	var s [2][32]byte
	for i, p := range []string{path, path + "-wal"} {
		if _, err := os.Stat(p); err == nil {
			s[i] = fileSum(t, p)
		}
	}
	return s
}

// FuzzParseWAL feeds parseWAL damaged logs, seeded with the head of a real
// one: it must never panic nor fail on bytes alone, and never report pages
// without a commit.
func FuzzParseWAL(f *testing.F) {
	path, _ := walPair(f)
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(wal[:min(len(wal), walHeaderSize+2*(walFrameHeaderSize+pageSize))])
	f.Add(wal[:walHeaderSize])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ps := range []int{512, pageSize} {
			w, err := parseWAL(bytes.NewReader(data), ps)
			if err != nil {
				t.Fatalf("parseWAL: %v", err)
			}
			if w.pages == 0 && len(w.has) != 0 {
				t.Fatal("pages without a commit")
			}
		}
	})
}

// TestOpenCompactCutBeforePageOne checks a file a power cut can leave in
// the middle of Compact's checkpoint: the log holds every page of the
// compacted database (VACUUM rewrites them all), the file was truncated
// to the compacted size, but the write of page 1, unsynced like the
// truncation, was lost, so the file's header still counts the pages the
// file had before. SQLite reads every page from the log, so the file is
// good; Open refused it as truncated ("file holds 2561 of its 2561
// pages, and its write-ahead log lacks the others"), in a scatter image
// of cmd/torture -compact -powerloss.
func TestOpenCompactCutBeforePageOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.cairn")
	db, c := checkpointed(t, src, 1000)
	var gone []vector.ID
	for id := 1; id <= 1000; id += 5 { // a fifth: free pages stay
		gone = append(gone, vector.ID(id))
	}
	if err := c.DeleteItems(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := db.withWriteConn(func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return err
		}
		// The VACUUM's pages stay in the log, as a crash before the
		// checkpoint leaves them.
		if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0"); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, "VACUUM")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cut.cairn")
	cutBeforePageOne(t, src, path)
	wantOpens(t, path, 800)
}

// TestOpenShrinkCutBeforePageOne checks a file a power cut can leave in
// the checkpoint after a commit that shrank the database (a delete of
// more than a quarter of the items, which vacuums incrementally): the
// file was truncated to the new size, but the write of page 1, unsynced
// like the truncation, was lost, so the file's header still counts the
// pages it had before, and the log, unlike after a VACUUM, holds only
// the pages the commits changed. SQLite reads page 1 from the log and
// the other pages from the file: the file is good. Open refused it as
// truncated ("file holds 48 of its 48 pages, and its write-ahead log
// lacks the others").
func TestOpenShrinkCutBeforePageOne(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.cairn")
	db, c := checkpointed(t, src, 1000)
	if err := db.withWriteConn(func(conn *sql.Conn) error {
		// The commits stay in the log, as a crash before the checkpoint
		// leaves them.
		_, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var gone []vector.ID
	for id := 1; id <= 600; id++ {
		gone = append(gone, vector.ID(id))
	}
	if err := c.DeleteItems(ctx, gone); err != nil {
		t.Fatal(err)
	}
	// The committer answers the delete, then vacuums holding the
	// connection: wait for it, or the copies can predate the shrink.
	if err := db.withWriteConn(func(*sql.Conn) error { return nil }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cut.cairn")
	ps, last := cutBeforePageOne(t, src, path)
	w, err := readWAL(path+"-wal", ps)
	if err != nil {
		t.Fatal(err)
	}
	if w.covers(1, int64(last)) {
		t.Fatal("the log holds every page: this is the VACUUM's case, not a shrinking commit's")
	}
	wantOpens(t, path, 400)
}
