package sqlitestore

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestWriteItems checks WriteItems and Evict: a new version takes the key
// of the item it replaces in one transaction; the replaced vector stays
// in memory until evicted, and is gone from the file at once; a failed
// write stores and deletes nothing.
func TestWriteItems(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "c", 2, vector.L2)
	if err := c.PutItems(ctx, []Item{{ID: 1, Key: "a", Vector: []float32{1, 0}}, {ID: 2, Key: "b", Vector: []float32{2, 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteItems(ctx, []Item{{ID: 3, Key: "a", Vector: []float32{3, 0}, Text: "a, again"}}, []vector.ID{1}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(1); err != nil || v[0] != 1 {
		t.Fatalf("replaced vector before Evict: %v, %v", v, err)
	}
	if c.Len() != 3 {
		t.Fatalf("Len = %d before Evict, want 3", c.Len())
	}
	if _, err := c.GetItem(ctx, 1); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("replaced item in the file: %v", err)
	}
	if it, err := c.GetItem(ctx, 3); err != nil || it.Key != "a" || it.Text != "a, again" {
		t.Fatalf("new version = %+v, %v", it, err)
	}
	if err := c.Evict([]vector.ID{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(1); !errors.Is(err, vector.ErrNotFound) || c.Len() != 2 {
		t.Fatalf("after Evict: %v, Len %d", err, c.Len())
	}
	if err := c.Evict([]vector.ID{1}); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Evict of an evicted id: %v", err)
	}

	for _, tc := range []struct {
		name  string
		items []Item
		drop  []vector.ID
		want  error
	}{
		{"drop unknown", []Item{{ID: 4, Key: "d", Vector: []float32{4, 0}}}, []vector.ID{9}, vector.ErrNotFound},
		{"key of a kept item", []Item{{ID: 4, Key: "b", Vector: []float32{4, 0}}}, []vector.ID{3}, vector.ErrDuplicateID},
		{"id written and dropped", []Item{{ID: 3, Key: "a", Vector: []float32{4, 0}}}, []vector.ID{3}, vector.ErrInvalidOptions},
		{"bad vector", []Item{{ID: 4, Key: "d", Vector: []float32{float32(math.Inf(1)), 0}}}, []vector.ID{3}, vector.ErrNonFinite},
	} {
		if err := c.WriteItems(ctx, tc.items, tc.drop); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if _, err := c.GetItem(ctx, 3); err != nil {
			t.Fatalf("%s: the item it would have dropped: %v", tc.name, err)
		}
		if _, err := c.GetItem(ctx, 4); !errors.Is(err, vector.ErrNotFound) || c.Len() != 2 {
			t.Fatalf("%s: stored the new item (%v), Len %d", tc.name, err, c.Len())
		}
	}

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c2, err := db2.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c2.Len() != 2 {
		t.Fatalf("Len after reopening = %d, want 2", c2.Len())
	}
	if v, err := c2.Get(3); err != nil || v[0] != 3 {
		t.Fatalf("new version after reopening: %v, %v", v, err)
	}
}
