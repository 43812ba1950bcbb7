package cairn

import (
	"context"
	"runtime"
	"testing"
	"weak"
)

// TestRetiredVersionsReleased replaces an item again and again while
// another item of its first batch stays: the replaced versions must be
// freed. A retired record kept the write that replaced it, whose records
// kept theirs, and so on, so that one live item held every version of
// its batch-mates ever written (heap 7.5 MB to 50 MB for 5,000 live
// items after 50,000 upserts, growing without bound).
func TestRetiredVersionsReleased(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"memory", "file"} {
		t.Run(store, func(t *testing.T) {
			db := OpenMemory(nil)
			if path := storePath(t, store); path != "" {
				var err error
				if db, err = Open(ctx, path, nil); err != nil {
					t.Fatal(err)
				}
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: Flat})
			if err != nil {
				t.Fatal(err)
			}
			// b, kept, pins the batch it was added in.
			if err := c.Add(ctx, Item{ID: "a", Embedding: []float32{1, 0}, Text: "a"},
				Item{ID: "b", Embedding: []float32{0, 1}, Text: "b"}); err != nil {
				t.Fatal(err)
			}
			if err := c.Upsert(ctx, Item{ID: "a", Embedding: []float32{1, 1}, Text: "a2"}); err != nil {
				t.Fatal(err)
			}
			c.mu.RLock()
			second := weak.Make(c.cat.lookup("a"))
			c.mu.RUnlock()
			for range 20 {
				if err := c.Upsert(ctx, Item{ID: "a", Embedding: []float32{1, 2}, Text: "a3"}); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				runtime.GC()
			}
			if second.Value() != nil {
				t.Fatal("the second version of a, replaced 20 writes ago, is still reachable")
			}
		})
	}
}
