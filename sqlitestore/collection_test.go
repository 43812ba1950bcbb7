package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestWriteErrors(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 4, vector.Cosine)
	if err := c.PutItems(ctx, []Item{itemFor(1, 4), itemFor(2, 4)}); err != nil {
		t.Fatal(err)
	}
	good := func(id vector.ID) Item { return itemFor(id, 4) }
	withKey := func(it Item, k string) Item { it.Key = k; return it }
	withVec := func(it Item, v vector.Vector) Item { it.Vector = v; return it }
	withMeta := func(it Item, m string) Item { it.Metadata = []byte(m); return it }
	nan := float32(math.NaN())
	cases := []struct {
		name  string
		items []Item
		want  error
	}{
		{"existing id", []Item{good(10), good(1)}, vector.ErrDuplicateID},
		{"id repeated in batch", []Item{good(10), good(10)}, vector.ErrDuplicateID},
		{"existing key", []Item{good(10), withKey(good(11), "k1")}, vector.ErrDuplicateID},
		{"key repeated in batch", []Item{withKey(good(10), "x"), withKey(good(11), "x")}, vector.ErrDuplicateID},
		{"wrong dimension", []Item{good(10), withVec(good(11), vector.Vector{1, 2})}, vector.ErrDimensionMismatch},
		{"NaN", []Item{good(10), withVec(good(11), vector.Vector{1, nan, 0, 0})}, vector.ErrNonFinite},
		{"zero vector under cosine", []Item{withVec(good(10), vector.Vector{0, 0, 0, 0})}, vector.ErrZeroVector},
		{"metadata not JSON", []Item{good(10), withMeta(good(11), "{oops")}, vector.ErrInvalidOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.PutItems(ctx, tc.items); !errors.Is(err, tc.want) {
				t.Fatalf("PutItems: %v, want %v", err, tc.want)
			}
			if c.Len() != 2 {
				t.Fatalf("Len %d after a failed put, want 2", c.Len())
			}
			if _, err := c.GetItem(ctx, 10); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("item 10 of a failed batch: %v", err)
			}
		})
	}
	// Delete is all or nothing too.
	if err := c.DeleteItems(ctx, []vector.ID{1, 99}); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("DeleteItems with a missing id: %v", err)
	}
	if _, err := c.Get(1); err != nil {
		t.Fatalf("item 1 deleted by a failed DeleteItems: %v", err)
	}
	if err := c.Delete(ctx, 99); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Delete(99): %v", err)
	}
	if err := c.PutBatch(ctx, []vector.ID{1}, nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("PutBatch with mismatched lengths: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Put(cctx, 50, vecFor(50, 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a cancelled context: %v", err)
	}
	for _, cfg := range []CollectionConfig{{Dim: 0, Metric: vector.L2}, {Dim: 3, Metric: 0}, {Dim: 3, Metric: vector.L2, Settings: []byte("{")}} {
		if _, err := db.CreateCollection(ctx, "bad", cfg); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("CreateCollection(%+v): %v", cfg, err)
		}
	}
	if _, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 4, Metric: vector.L2}); !errors.Is(err, vector.ErrDuplicateID) {
		t.Errorf("CreateCollection of an existing name: %v", err)
	}
	if err := (&Options{Sync: 9, LockTimeout: -1}).Validate(); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Validate: %v", err)
	}
}

func TestUpsertAndKeys(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 4, vector.L2)
	if err := c.PutItems(ctx, []Item{itemFor(1, 4), itemFor(2, 4)}); err != nil {
		t.Fatal(err)
	}
	repl := Item{ID: 1, Key: "new", Vector: vector.Vector{9, 9, 9, 9}, Text: "replaced", Metadata: []byte(`{"v":2}`)}
	if err := c.UpsertItems(ctx, []Item{repl, itemFor(3, 4)}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetItem(ctx, 1)
	if err != nil || got.Key != "new" || got.Text != "replaced" || string(got.Metadata) != `{"v":2}` || !equalVec(got.Vector, repl.Vector) {
		t.Fatalf("after upsert: %+v, %v", got, err)
	}
	if v, _ := c.Get(1); !equalVec(v, repl.Vector) {
		t.Fatalf("arena after upsert: %v", v)
	}
	if c.Len() != 3 {
		t.Fatalf("Len %d, want 3", c.Len())
	}
	// The old key is free again; a key held by another id is not.
	if err := c.PutItems(ctx, []Item{withKeyItem(itemFor(4, 4), "k1")}); err != nil {
		t.Fatalf("reusing a replaced key: %v", err)
	}
	if err := c.UpsertItems(ctx, []Item{withKeyItem(itemFor(2, 4), "new")}); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("upsert taking another item's key: %v", err)
	}
	if it, _ := c.GetItem(ctx, 2); checkItem(it, 4) != nil {
		t.Fatal("failed upsert changed item 2")
	}
}

func withKeyItem(it Item, k string) Item { it.Key = k; return it }

// TestConcurrentReadersWriters runs readers (Get, ViewBlocks, ForEach,
// GetItem) alongside writers (put, upsert, delete) under -race, and checks
// that every acknowledged write is there at the end.
func TestConcurrentReadersWriters(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, &Options{Sync: SyncNormal})
	c := mustCollection(t, db, "c", 16, vector.Cosine)
	const writers, perWriter = 8, 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var reads atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.ViewBlocks(func(bs []vector.Block) error {
					for _, b := range bs {
						for i, live := range b.Live {
							if live && len(b.Data) < (i+1)*16 {
								t.Error("short block")
							}
						}
					}
					return nil
				})
				c.ForEach(func(id vector.ID, v vector.Vector) error {
					if len(v) != 16 {
						t.Errorf("ForEach: id %d has %d dims", id, len(v))
					}
					return nil
				})
				if _, err := c.Get(vector.ID(reads.Load() % 300)); err != nil && !errors.Is(err, vector.ErrNotFound) {
					t.Error(err)
				}
				if _, err := c.GetItem(ctx, 5); err != nil && !errors.Is(err, vector.ErrNotFound) {
					t.Error(err)
				}
				reads.Add(1)
			}
		}()
	}
	var wwg sync.WaitGroup
	for w := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := range perWriter {
				id := vector.ID(w*perWriter + i)
				if err := c.PutItems(ctx, []Item{itemFor(id, 16)}); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 0 {
					if err := c.UpsertItems(ctx, []Item{itemFor(id, 16)}); err != nil {
						t.Error(err)
					}
				}
				if i%4 == 3 {
					if err := c.Delete(ctx, id); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wwg.Wait()
	close(stop)
	wg.Wait()
	want := writers * perWriter * 3 / 4
	if c.Len() != want {
		t.Fatalf("Len %d, want %d", c.Len(), want)
	}
	n := 0
	if err := c.ForEachItem(ctx, func(it Item) error {
		n++
		if it.ID%4 == 3 {
			t.Errorf("deleted item %d present", it.ID)
		}
		return checkItem(it, 16)
	}); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("ForEachItem saw %d items, want %d", n, want)
	}
	t.Logf("%d read rounds alongside %d writes", reads.Load(), writers*perWriter)
}

// TestCloseFlushes closes the DB while writers are queued: each write either
// succeeded (and is in the file) or returned ErrClosed.
func TestCloseFlushes(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, &Options{Sync: SyncNormal})
	c := mustCollection(t, db, "c", 8, vector.L2)
	var wg sync.WaitGroup
	var okIDs sync.Map
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := vector.ID(w*1000 + i)
				err := c.Put(ctx, id, vecFor(id, 8))
				if errors.Is(err, vector.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				okIDs.Store(id, true)
			}
		}()
	}
	db.Close()
	wg.Wait()
	db2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c2, err := db2.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	okIDs.Range(func(k, _ any) bool {
		if _, err := c2.Get(k.(vector.ID)); err != nil {
			t.Errorf("acknowledged id %d lost at Close: %v", k, err)
		}
		return true
	})
}

func TestDropCollection(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	a := mustCollection(t, db, "a", 4, vector.L2)
	b := mustCollection(t, db, "b", 8, vector.Dot)
	if err := a.Put(ctx, 1, vecFor(1, 4)); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, 1, vecFor(1, 8)); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveIndex(ctx, "g", fakeIndex{seq: 1, size: 10}); err != nil {
		t.Fatal(err)
	}
	if err := db.DropCollection(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := db.DropCollection(ctx, "a"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("second drop: %v", err)
	}
	if err := a.Put(ctx, 2, vecFor(2, 4)); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Put on a dropped collection: %v", err)
	}
	if _, err := a.Get(1); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Get on a dropped collection: %v", err)
	}
	infos, err := db.Collections(ctx)
	if err != nil || len(infos) != 1 || infos[0].Name != "b" || infos[0].Len != 1 || infos[0].Dim != 8 {
		t.Fatalf("Collections: %+v, %v", infos, err)
	}
	// The name can be reused, with new settings, and survives a reopen.
	if _, err := db.CreateCollection(ctx, "a", CollectionConfig{Dim: 2, Metric: vector.Cosine}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	infos, _ = db2.Collections(ctx)
	if len(infos) != 2 || infos[0].Name != "a" || infos[0].Dim != 2 || infos[0].Len != 0 {
		t.Fatalf("after reopen: %+v", infos)
	}
}

// TestChurnReclaimsSpace deletes and re-adds half of the items ten times;
// the file must stay within 1.5× its size after the first round.
func TestChurnReclaimsSpace(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, &Options{Sync: SyncNormal})
	const n, dim = 1000, 128
	c := mustCollection(t, db, "c", dim, vector.L2)
	var items []Item
	for id := range n {
		items = append(items, itemFor(vector.ID(id), dim))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	next := vector.ID(n)
	live := make([]vector.ID, n)
	for i := range live {
		live[i] = vector.ID(i)
	}
	var first int64
	for round := range 10 {
		// delete every other live id, then add as many new ones
		var del, keep []vector.ID
		for i, id := range live {
			if i%2 == round%2 {
				del = append(del, id)
			} else {
				keep = append(keep, id)
			}
		}
		if err := c.DeleteItems(ctx, del); err != nil {
			t.Fatal(err)
		}
		var add []Item
		for range del {
			add = append(add, itemFor(next, dim))
			keep = append(keep, next)
			next++
		}
		if err := c.PutItems(ctx, add); err != nil {
			t.Fatal(err)
		}
		live = keep
		// Checkpoint so the main file reflects the round.
		db.withConn(func(*sql.Conn) error {
			_, err := db.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			return err
		})
		s := size()
		if round == 0 {
			first = s
		}
		t.Logf("round %d: %d bytes", round, s)
		if s > first*3/2 {
			t.Fatalf("round %d: file %d bytes, more than 1.5× the %d of round 1", round, s, first)
		}
	}
	if c.Len() != n {
		t.Fatalf("Len %d, want %d", c.Len(), n)
	}
	// Deleting most items gives the space back to the file system.
	if err := c.DeleteItems(ctx, live[:n*9/10]); err != nil {
		t.Fatal(err)
	}
	db.withConn(func(*sql.Conn) error {
		_, err := db.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	})
	if s := size(); s > first/2 {
		t.Fatalf("after deleting 90%% of the items the file is %d bytes, was %d", s, first)
	}
}

// TestGroupCommitIsolation sends many concurrent writes of which some must
// fail (duplicate ids and keys, missing deletes): sharing a transaction,
// each still gets its own answer and only the good ones are stored.
func TestGroupCommitIsolation(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, &Options{Sync: SyncNormal})
	c := mustCollection(t, db, "c", 8, vector.L2)
	if err := c.PutItems(ctx, []Item{itemFor(0, 8)}); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 32)
		for w := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := vector.ID(round*100 + w + 1)
				switch w % 4 {
				case 0, 1: // good
					errs[w] = c.PutItems(ctx, []Item{itemFor(id, 8)})
				case 2: // duplicate id 0
					errs[w] = c.PutItems(ctx, []Item{itemFor(id+50, 8), itemFor(0, 8)})
				case 3: // missing delete
					errs[w] = c.DeleteItems(ctx, []vector.ID{id + 1_000_000})
				}
			}()
		}
		wg.Wait()
		for w, err := range errs {
			id := vector.ID(round*100 + w + 1)
			switch w % 4 {
			case 0, 1:
				if err != nil {
					t.Fatalf("good write %d: %v", id, err)
				}
			case 2:
				if !errors.Is(err, vector.ErrDuplicateID) {
					t.Fatalf("duplicate write: %v", err)
				}
				if _, err := c.Get(id + 50); !errors.Is(err, vector.ErrNotFound) {
					t.Fatalf("item %d of a failed batch stored: %v", id+50, err)
				}
			case 3:
				if !errors.Is(err, vector.ErrNotFound) {
					t.Fatalf("missing delete: %v", err)
				}
			}
		}
	}
	if want := 1 + 20*16; c.Len() != want {
		t.Fatalf("Len %d, want %d", c.Len(), want)
	}
}

// TestGroupCommitShares checks that concurrent single-item writers share
// transactions: 64 writers of 8 items each need far fewer than 512 commits.
// (The rate itself is measured by BenchmarkGroupCommit.)
func TestGroupCommitShares(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil) // synchronous=FULL: each commit is an fsync
	c := mustCollection(t, db, "c", 8, vector.L2)
	before := db.groups.Load()
	var wg sync.WaitGroup
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				id := vector.ID(w*8 + i)
				if err := c.Put(ctx, id, vecFor(id, 8)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	groups := db.groups.Load() - before
	t.Logf("512 writes in %d commits", groups)
	if c.Len() != 512 {
		t.Fatalf("Len %d, want 512", c.Len())
	}
	if groups > 512/4 {
		t.Fatalf("512 concurrent writes took %d commits: writers are not sharing transactions", groups)
	}
}
