package cairn

// This file tests the state between a sweep's marking and its deletes:
// marked versions are still published, and hidden by the shown set of package versions.

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMarkedHidden marks expired items without deleting them and checks
// that no read returns them, by the shown set alone (the heap holds no
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
			if more := c.cat.markExpired(c.now(), 1000); more || c.cat.ver.Marked() != 50 {
				t.Fatalf("MarkDue: more %v, %d marked", more, c.cat.ver.Marked())
			}
			if c.view(c.now()).Expiring() || c.view(c.now()).Filter() == nil {
				t.Fatal("after marking, readers should rely on the shown set")
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
			if c.cat.ver.Marked() != 0 || c.view(c.now()).Filter() != nil || len(c.cat.live) != 50 {
				t.Fatalf("after the sweep: %d marked, %d live", c.cat.ver.Marked(), len(c.cat.live))
			}
		})
	}
}
