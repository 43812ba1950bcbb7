package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestOpenReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.cairn")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "docs", 8, vector.Cosine)
	var items []Item
	for id := vector.ID(1); id <= 100; id++ {
		items = append(items, itemFor(id, 8))
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := c.SetSettings(ctx, []byte(`{"index":"hnsw"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(1); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	if err := c.Put(ctx, 1000, vecFor(1000, 8)); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}

	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 100 || c.Dim() != 8 || c.Metric() != vector.Cosine || string(c.Settings()) != `{"index":"hnsw"}` {
		t.Fatalf("reopened: len %d dim %d metric %v settings %s", c.Len(), c.Dim(), c.Metric(), c.Settings())
	}
	for id := vector.ID(1); id <= 100; id++ {
		it, err := c.GetItem(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkItem(it, 8); err != nil {
			t.Fatal(err)
		}
		want, _ := vector.Prepare(it.Vector, 8, vector.Cosine)
		got, err := c.Get(id)
		if err != nil || !equalVec(got, want) {
			t.Fatalf("Get(%d) = %v, %v; want the prepared vector", id, got, err)
		}
	}
	if _, err := db.Collection(ctx, "nope"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("missing collection: %v", err)
	}
}

func TestSecondOpenLocked(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	_ = db
	_, err := Open(ctx, path, nil)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
}

// TestForEachItemFullIDRange stores ids at both ends of the uint64 range
// (negative as SQLite integers) and walks them across several pages.
func TestForEachItemFullIDRange(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	c := mustCollection(t, db, "c", 4, vector.L2)
	var items []Item
	want := map[vector.ID]bool{}
	for i := range 3*forEachPage + 7 {
		id := vector.ID(i)
		if i%2 == 1 {
			id = ^vector.ID(0) - vector.ID(i)
		}
		items = append(items, itemFor(id, 4))
		want[id] = true
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	seen := 0
	err := c.ForEachItem(ctx, func(it Item) error {
		if !want[it.ID] {
			t.Errorf("unexpected or repeated id %d", it.ID)
		}
		delete(want, it.ID)
		seen++
		return checkItem(it, 4)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 0 {
		t.Fatalf("ForEachItem missed %d ids (saw %d)", len(want), seen)
	}
	n := 0
	err = c.ForEachPayload(ctx, func(it Item) error {
		n++
		want := itemFor(it.ID, 4)
		if it.Vector != nil || it.Key != want.Key || it.Text != want.Text || string(it.Metadata) != string(want.Metadata) {
			return fmt.Errorf("ForEachPayload item %d: %+v", it.ID, it)
		}
		return nil
	})
	if err != nil || n != seen {
		t.Fatalf("ForEachPayload: %d items, %v", n, err)
	}
	stop := errors.New("stop")
	if err := c.ForEachItem(ctx, func(Item) error { return stop }); err != stop {
		t.Fatalf("ForEachItem did not return fn's error: %v", err)
	}
}
