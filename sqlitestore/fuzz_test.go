package sqlitestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairndb/cairn/vector"
)

var (
	fuzzDBOnce sync.Once
	fuzzDB     []byte
)

// FuzzOpenDamagedHeader overwrites bytes of a valid database's first page
// and opens it: Open must succeed (and then the items must read back) or
// fail with a typed error, never panic or hang.
func FuzzOpenDamagedHeader(f *testing.F) {
	f.Add(uint16(0), []byte{0})
	f.Add(uint16(16), []byte{0x00, 0x01})  // page size
	f.Add(uint16(18), []byte{1, 1})        // rollback journal format
	f.Add(uint16(20), []byte{200})         // reserved bytes per page
	f.Add(uint16(28), []byte{0, 0, 0, 1})  // page count
	f.Add(uint16(40), []byte{9, 9, 9, 9})  // schema cookie
	f.Add(uint16(44), []byte{0, 0, 0, 9})  // schema format
	f.Add(uint16(56), []byte{0, 0, 0, 7})  // text encoding
	f.Add(uint16(100), []byte{0xff, 0xff}) // first b-tree page header
	f.Add(uint16(300), []byte("garbage in the schema table"))
	f.Fuzz(func(t *testing.T, off uint16, patch []byte) {
		fuzzDBOnce.Do(func() {
			dir, err := os.MkdirTemp("", "cairn-fuzz-")
			if err != nil {
				panic(err)
			}
			defer os.RemoveAll(dir)
			path := filepath.Join(dir, "f.cairn")
			db, err := Open(context.Background(), path, nil)
			if err != nil {
				panic(err)
			}
			c, _ := db.CreateCollection(context.Background(), "c", CollectionConfig{Dim: 4, Metric: vector.L2})
			c.PutItems(context.Background(), []Item{itemFor(1, 4), itemFor(2, 4)})
			db.Close()
			if fuzzDB, err = os.ReadFile(path); err != nil {
				panic(err)
			}
		})
		b := append([]byte(nil), fuzzDB...)
		if int(off) >= pageSize || len(patch) > 64 {
			return
		}
		copy(b[off:min(int(off)+len(patch), pageSize)], patch)
		path := filepath.Join(t.TempDir(), "f.cairn")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := Open(context.Background(), path, &Options{CheckIntegrity: true})
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) && !errors.Is(err, vector.ErrUnsupportedVersion) {
				t.Fatalf("Open of a damaged file: untyped error %v", err)
			}
			return
		}
		defer db.Close()
		c, err := db.Collection(context.Background(), "c")
		if err != nil {
			return // a damaged catalogue may lose the collection, but typed
		}
		c.ForEachItem(context.Background(), func(Item) error { return nil })
	})
}

// FuzzOpenDamagedPage overwrites bytes anywhere in a database of a few
// pages, opens it and reads every item: each step succeeds or fails with a
// typed error.
func FuzzOpenDamagedPage(f *testing.F) {
	f.Add(uint32(pageSize+8), []byte{0xff, 0xff, 0xff})
	f.Add(uint32(2*pageSize), []byte{13})
	f.Add(uint32(3*pageSize+100), []byte("xxxxxxxxxxxxxxxx"))
	f.Add(uint32(4*pageSize-4), []byte{0, 0, 0, 0})
	var once sync.Once
	var good []byte
	f.Fuzz(func(t *testing.T, off uint32, patch []byte) {
		once.Do(func() {
			dir, err := os.MkdirTemp("", "cairn-fuzz-")
			if err != nil {
				panic(err)
			}
			defer os.RemoveAll(dir)
			path := filepath.Join(dir, "f.cairn")
			db, err := Open(context.Background(), path, nil)
			if err != nil {
				panic(err)
			}
			c, _ := db.CreateCollection(context.Background(), "c", CollectionConfig{Dim: 64, Metric: vector.Cosine})
			var items []Item
			for id := range 200 {
				items = append(items, itemFor(vector.ID(id), 64))
			}
			c.PutItems(context.Background(), items)
			c.SaveIndex(context.Background(), "g", fakeIndex{seq: 1, size: 5000})
			db.Close()
			if good, err = os.ReadFile(path); err != nil {
				panic(err)
			}
		})
		if len(patch) > 64 || int(off) >= len(good) {
			return
		}
		b := append([]byte(nil), good...)
		copy(b[off:], patch)
		path := filepath.Join(t.TempDir(), "f.cairn")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		typed := func(what string, err error) {
			if err != nil && !errors.Is(err, vector.ErrCorrupt) && !errors.Is(err, vector.ErrUnsupportedVersion) && !errors.Is(err, vector.ErrNotFound) && !errors.Is(err, ErrStaleIndex) {
				t.Fatalf("%s: untyped error %v", what, err)
			}
		}
		ctx := context.Background()
		db, err := Open(ctx, path, nil)
		typed("Open", err)
		if err != nil {
			return
		}
		defer db.Close()
		c, err := db.Collection(ctx, "c")
		typed("Collection", err)
		if err != nil {
			return
		}
		typed("ForEachItem", c.ForEachItem(ctx, func(Item) error { return nil }))
		_, err = c.GetItem(ctx, 7)
		typed("GetItem", err)
		var l fakeLoader
		typed("LoadIndex", c.LoadIndex(ctx, "g", &l))
		typed("Put", c.Put(ctx, 1000, vecFor(1000, 64)))
		typed("Delete", c.Delete(ctx, 3))
		typed("IntegrityCheck", db.IntegrityCheck(ctx))
	})
}
