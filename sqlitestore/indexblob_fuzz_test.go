package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// FuzzLoadIndexHeader damages the row that describes a saved index (its
// size, checksum and number of chunks) and the chunks' sequence numbers,
// then loads it: LoadIndex must succeed only on the saved bytes, fail
// otherwise with ErrCorrupt, and never allocate for a size the chunks do
// not hold.
func FuzzLoadIndexHeader(f *testing.F) {
	const saved = 3*indexChunk/2 + 77 // two chunks
	f.Add(int64(0), int64(0), int64(0), int64(0))
	f.Add(int64(1<<30-saved), int64(0), int64(1022), int64(0)) // a size of 1 GiB, chunks to match
	f.Add(int64(1<<40-saved), int64(0), int64(0), int64(0))
	f.Add(int64(-saved-1), int64(0), int64(0), int64(0))
	f.Add(int64(0), int64(1), int64(0), int64(0))
	f.Add(int64(0), int64(0), int64(-1), int64(0))
	f.Add(int64(0), int64(0), int64(0), int64(1))
	f.Add(int64(-indexChunk), int64(0), int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, dSize, dSum, dChunks, dSeq int64) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "idx.cairn")
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		c := mustCollection(t, db, "c", 4, vector.L2)
		if err := c.PutItems(ctx, []Item{itemFor(1, 4)}); err != nil {
			t.Fatal(err)
		}
		if err := c.SaveIndex(ctx, "g", fakeIndex{seq: 5, size: saved - 16}); err != nil {
			t.Fatal(err)
		}
		err = db.withConn(func(conn *sql.Conn) error {
			if _, err := conn.ExecContext(ctx, "UPDATE index_blobs SET size = size + ?, crc = crc + ?, chunks = chunks + ?", dSize, dSum, dChunks); err != nil {
				return err
			}
			_, err := conn.ExecContext(ctx, "UPDATE index_chunks SET seq = seq + ? WHERE seq = 1", dSeq)
			return err
		})
		if err != nil {
			return // an overflow SQLite refuses: nothing damaged
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var l fakeLoader
		err = c.LoadIndex(ctx, "g", &l)
		runtime.ReadMemStats(&after)
		damaged := dSize != 0 || uint32(dSum) != 0 || dChunks != 0 || dSeq != 0
		switch {
		case err == nil && damaged:
			t.Fatalf("LoadIndex took a damaged index (size %+d, crc %+d, chunks %+d, seq %+d)", dSize, dSum, dChunks, dSeq)
		case err == nil && l.seq != 5:
			t.Fatalf("LoadIndex read seq %d, want 5", l.seq)
		case err != nil && !damaged:
			t.Fatalf("LoadIndex of an intact index: %v", err)
		case err != nil && !errors.Is(err, vector.ErrCorrupt):
			t.Fatalf("LoadIndex of a damaged index: %v, want ErrCorrupt", err)
		}
		// The saved bytes, a copy for the loader, and slack.
		if got := after.TotalAlloc - before.TotalAlloc; got > 4*saved+(8<<20) {
			t.Fatalf("LoadIndex allocated %d bytes for an index of %d (size %+d)", got, saved, dSize)
		}
	})
}
