package cairn

// This file tests the state between a sweep's marking and its deletes:
// marked versions are still published, and hidden by the visible set.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// TestMarkedHidden marks expired items without deleting them and checks
// that no read returns them, by the visible set alone (the heap holds no
// expired entry any more, so readers do not look at ExpiresAt), in flat
// and HNSW collections; then the sweep deletes them.
func TestMarkedHidden(t *testing.T) {
	for _, kind := range []IndexKind{Flat, HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			db := OpenMemory(nil)
			defer db.Close()
			db.clock = func() time.Time { return now }
			db.noSweeper = true
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: kind})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				it := Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}, Text: "word", Metadata: map[string]any{"all": true}}
				if i%2 == 0 {
					it.ExpiresAt = now.Add(time.Minute)
				}
				if err := c.Add(ctx, it); err != nil {
					t.Fatal(err)
				}
			}
			now = now.Add(time.Minute)
			c.mu.Lock()
			if more := c.cat.markDue(c.now(), 1000); more || len(c.cat.exp.marked) != 50 {
				t.Fatalf("markDue: more %v, %d marked", more, len(c.cat.exp.marked))
			}
			if c.cat.exp.due(c.now()) || !c.cat.exp.hiding() {
				t.Fatal("after marking, readers should rely on the visible set")
			}
			c.mu.Unlock()
			if n, _ := c.Count(ctx); n != 50 {
				t.Fatalf("Count %d, want 50", n)
			}
			for _, o := range []*QueryOptions{nil, {Filter: Eq("all", true)}, {Mode: KeywordMode, Keywords: "word"}, {Mode: HybridMode, Keywords: "word"}} {
				var q []float32
				if o == nil || o.Mode != KeywordMode {
					q = []float32{1, 0}
				}
				rs, err := c.Query(ctx, q, 60, o)
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) != 50 {
					t.Fatalf("%+v: %d results, want 50", o, len(rs))
				}
				for _, r := range rs {
					var i int
					fmt.Sscan(r.ID, &i)
					if i%2 == 0 {
						t.Fatalf("%+v returned marked %q", o, r.ID)
					}
				}
			}
			if n, err := c.RemoveExpired(ctx); err != nil || n != 50 {
				t.Fatalf("RemoveExpired: %d, %v", n, err)
			}
			if c.cat.exp.hiding() || len(c.cat.live) != 50 {
				t.Fatalf("after the sweep: hiding %v, %d live", c.cat.exp.hiding(), len(c.cat.live))
			}
		})
	}
}

// TestVisibleSet checks the visible set against a map, with ids dense
// from 1, far off, and far off ones the bitmap grows to reach.
func TestVisibleSet(t *testing.T) {
	var v visibleSet
	ref := map[vector.ID]bool{}
	n := 0
	add := func(id vector.ID) { v.set(id, n); ref[id] = true; n++ }
	for id := vector.ID(1); id < 5000; id++ {
		add(id)
	}
	add(1 << 50)
	add(1<<20 + 3) // far while the bitmap is small
	for id := vector.ID(5000); id < 80000; id++ {
		add(id) // grows the bitmap past 1<<20 + 3? not yet: 80000 < 1<<20
	}
	add(1 << 21) // within 64 words per version: the bitmap grows, and takes in 1<<20 + 3
	for _, id := range []vector.ID{7, 1 << 50, 1<<20 + 3} {
		v.clear(id)
		delete(ref, id)
	}
	for _, id := range []vector.ID{0, 1, 7, 8, 4999, 5000, 79999, 80000, 1<<20 + 2, 1<<20 + 3, 1 << 21, 1<<21 + 1, 1 << 50, 1<<50 + 1} {
		if got := v.Allow(id); got != ref[id] {
			t.Errorf("Allow(%d) = %v, want %v", id, got, ref[id])
		}
	}
	if len(v.words)*64 > 64*64*(n+1) {
		t.Errorf("bitmap of %d words for %d ids", len(v.words), n)
	}
}
