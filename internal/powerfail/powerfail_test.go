package powerfail_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/internal/powerfail"
	"github.com/cairndb/cairn/internal/vfsname"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

func TestImageKeepsSyncedWrites(t *testing.T) {
	ops := []powerfail.Op{
		{Kind: 'W', File: powerfail.MainDB, Off: 0, Data: []byte("aaaa")},
		{Kind: 'S', File: powerfail.MainDB},
		{Kind: 'W', File: powerfail.MainDB, Off: 4, Data: []byte("bbbb")},
		{Kind: 'W', File: powerfail.WAL, Off: 0, Data: []byte("cc")},
		{Kind: 'S', File: powerfail.WAL},
		{Kind: 'T', File: powerfail.WAL, Off: 0},
	}
	r := rand.New(rand.NewPCG(1, 2))
	got := powerfail.Image([2][]byte{}, ops, powerfail.LoseAll, r)
	if string(got[0]) != "aaaa" || string(got[1]) != "cc" {
		t.Fatalf("lose-all image %q, %q; want the synced writes only", got[0], got[1])
	}
	for _, m := range []powerfail.Mode{powerfail.Prefix, powerfail.Scatter} {
		for range 20 {
			got := powerfail.Image([2][]byte{}, ops, m, r)
			if s := string(got[0]); s != "aaaa" && s != "aaaabbbb" {
				t.Fatalf("%v: database %q", m, s)
			}
			if s := string(got[1]); s != "cc" && s != "" {
				t.Fatalf("%v: log %q", m, s)
			}
		}
	}
}

// TestPowerCut writes through the recording VFS, then opens images of
// what a power cut could leave: under SyncFull every committed write is
// there in each of them; under SyncNormal losing the unsynced writes loses
// commits (which shows that the images do lose what no fsync covered).
func TestPowerCut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := powerfail.Register(filepath.Join(dir, "io.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vfsname.Name = "" })
	for _, sync := range []sqlitestore.Sync{sqlitestore.SyncFull, sqlitestore.SyncNormal} {
		t.Run(sync.String(), func(t *testing.T) {
			path := filepath.Join(dir, sync.String()+".cairn")
			db, err := sqlitestore.Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: 64, Metric: vector.L2}); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			base, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			logPath := filepath.Join(dir, sync.String()+".log")
			if err := powerfail.Register(logPath); err != nil {
				t.Fatal(err)
			}
			vfsname.Name = powerfail.VFSName
			db, err = sqlitestore.Open(ctx, path, &sqlitestore.Options{Sync: sync})
			vfsname.Name = ""
			if err != nil {
				t.Fatal(err)
			}
			c, err := db.Collection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			const batches, per = 60, 50 // about 1,300 pages: past an automatic checkpoint
			r := rand.New(rand.NewPCG(3, 4))
			for b := range batches {
				items := make([]sqlitestore.Item, per)
				for i := range items {
					v := make(vector.Vector, 64)
					for j := range v {
						v[j] = float32(r.NormFloat64())
					}
					id := vector.ID(b*per + i + 1)
					items[i] = sqlitestore.Item{ID: id, Key: fmt.Sprint(id), Vector: v, Text: string(make([]byte, 4096))}
				}
				if err := c.PutItems(ctx, items); err != nil {
					t.Fatal(err)
				}
			}
			ops, err := powerfail.ReadLog(logPath) // the power cut: now, with the DB open
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, m := range []powerfail.Mode{powerfail.LoseAll, powerfail.Prefix, powerfail.Scatter} {
				files := powerfail.Image([2][]byte{base, nil}, ops, m, r)
				img := filepath.Join(t.TempDir(), "image.cairn")
				os.WriteFile(img, files[0], 0o644)
				os.WriteFile(img+"-wal", files[1], 0o644)
				idb, err := sqlitestore.Open(ctx, img, nil)
				if err != nil {
					t.Fatalf("%v: the image does not open: %v", m, err)
				}
				if err := idb.IntegrityCheck(ctx); err != nil {
					t.Errorf("%v: %v", m, err)
				}
				ic, err := idb.Collection(ctx, "c")
				if err != nil {
					t.Fatal(err)
				}
				n := ic.Len()
				idb.Close()
				t.Logf("%v: %d of %d items", m, n, batches*per)
				switch {
				case n%per != 0:
					t.Errorf("%v: %d items, not a whole number of batches", m, n)
				case sync == sqlitestore.SyncFull && n != batches*per:
					t.Errorf("%v: %d items, want every committed one, %d", m, n, batches*per)
				case sync == sqlitestore.SyncNormal && m == powerfail.LoseAll && n == batches*per:
					t.Errorf("%v under SyncNormal kept every commit: the image lost nothing unsynced", m)
				}
			}
		})
	}
}

// TestFailedSyncLeavesNothing makes the fsync of a commit fail: the write
// is reported failed, and a copy of the files as the kernel holds them
// (what a crash right after would leave) must not hold it either.
func TestFailedSyncLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := powerfail.Register(filepath.Join(dir, "io.log")); err != nil {
		t.Fatal(err)
	}
	vfsname.Name = powerfail.VFSName
	path := filepath.Join(dir, "db.cairn")
	db, err := sqlitestore.Open(ctx, path, nil)
	vfsname.Name = ""
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: 4, Metric: vector.L2})
	if err != nil {
		t.Fatal(err)
	}
	item := func(id vector.ID) []sqlitestore.Item {
		return []sqlitestore.Item{{ID: id, Vector: vector.Vector{1, 2, 3, float32(id)}}}
	}
	if err := c.PutItems(ctx, item(1)); err != nil {
		t.Fatal(err)
	}
	powerfail.FailSyncs(1)
	err = c.PutItems(ctx, item(2))
	powerfail.FailSyncs(0)
	if err == nil {
		t.Fatal("the write succeeded although its fsync failed")
	}
	t.Logf("write with a failed fsync: %v", err)
	if _, err := c.GetItem(ctx, 2); err == nil {
		t.Fatal("the failed write is visible")
	}
	// A crash now: copy the files as they are.
	cp := filepath.Join(t.TempDir(), "copy.cairn")
	for _, suffix := range []string{"", "-wal"} {
		if b, err := os.ReadFile(path + suffix); err == nil {
			os.WriteFile(cp+suffix, b, 0o644)
		}
	}
	cdb, err := sqlitestore.Open(ctx, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cdb.Close()
	cc, err := cdb.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.GetItem(ctx, 1); err != nil {
		t.Fatalf("the committed write: %v", err)
	}
	if it, err := cc.GetItem(ctx, 2); err == nil {
		t.Fatalf("the write reported failed is in the file after a crash: %+v", it)
	}
	// The live DB goes on: a retry succeeds.
	if err := c.PutItems(ctx, item(2)); err != nil {
		t.Fatalf("retry: %v", err)
	}
}
