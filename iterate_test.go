package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// TestItems checks Items against Find: the same items in the same order,
// with and without a filter and embeddings, across pages, and that it
// stops early, skips what is deleted meanwhile and reports bad filters,
// cancelled contexts and closed collections.
func TestItems(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 4, Index: op.kind})
		r := rand.New(rand.NewPCG(1, 2))
		const n = 700 // several pages
		items := make([]cairn.Item, n)
		for i := range items {
			items[i] = cairn.Item{ID: fmt.Sprintf("k%03d", (i*37)%n), Embedding: randVec(r, 4), Text: fmt.Sprint("t", i), Metadata: map[string]any{"i": i, "even": i%2 == 0}}
		}
		for start := 0; start < n; start += 100 {
			if err := c.Add(ctx, items[start:start+100]...); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Delete(ctx, items[5].ID, items[300].ID); err != nil {
			t.Fatal(err)
		}
		written, stored := map[string][]float32{}, map[string][]float32{}
		for _, it := range items {
			written[it.ID] = it.Embedding
		}
		all, err := c.Find(ctx, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range all {
			stored[it.ID] = it.Embedding
		}
		collect := func(o *cairn.ItemsOptions) []cairn.Item {
			t.Helper()
			var out []cairn.Item
			for it, err := range c.Items(ctx, o) {
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, it)
			}
			return out
		}
		for _, f := range []*cairn.Filter{nil, cairn.Eq("even", true), cairn.Gte("i", 650)} {
			want, err := c.Find(ctx, f, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := collect(&cairn.ItemsOptions{Filter: f, Embeddings: true})
			if len(got) != len(want) {
				t.Fatalf("filter %v: %d items, want %d", f, len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				if op.name == "sqlite" {
					w.Embedding = written[w.ID] // a file gives the vectors as written
				}
				if g.ID != w.ID || g.Text != w.Text || !slices.Equal(g.Embedding, w.Embedding) || fmt.Sprint(g.Metadata) != fmt.Sprint(w.Metadata) {
					t.Fatalf("filter %v, item %d: %+v, want %+v", f, i, g, w)
				}
			}
			for _, it := range collect(&cairn.ItemsOptions{Filter: f}) {
				if it.Embedding != nil {
					t.Fatalf("item %q has an embedding without Embeddings", it.ID)
				}
			}
		}
		if got := collect(nil); len(got) != n-2 {
			t.Fatalf("nil options: %d items, want %d", len(got), n-2)
		}

		// Breaking out early stops; deleting ahead of the iteration skips;
		// an item replaced ahead of it is seen whole in its new version.
		seen, sawNew := 0, false
		newVec := []float32{3, 0, 0, 4}
		for it, err := range c.Items(ctx, &cairn.ItemsOptions{Embeddings: true}) {
			if err != nil {
				t.Fatal(err)
			}
			if seen == 0 {
				if err := c.Delete(ctx, items[600].ID); err != nil {
					t.Fatal(err)
				}
				if err := c.Upsert(ctx, cairn.Item{ID: items[650].ID, Embedding: newVec, Text: "new"}); err != nil {
					t.Fatal(err)
				}
				// In the page of the file already read: its row there is
				// stale, so the published vector is given.
				if err := c.Upsert(ctx, cairn.Item{ID: items[1].ID, Embedding: newVec, Text: "new"}); err != nil {
					t.Fatal(err)
				}
			}
			switch it.ID {
			case items[600].ID:
				t.Fatalf("saw %q, deleted before its page was read", it.ID)
			case items[650].ID:
				want := newVec
				if op.name == "memory" {
					want = []float32{0.6, 0, 0, 0.8}
				}
				if it.Text != "new" || !slices.Equal(it.Embedding, want) || it.Metadata != nil {
					t.Fatalf("replaced item seen as %+v", it)
				}
				sawNew = true
			case items[1].ID:
				// Its page was read before the replacement: in memory the
				// old version comes back, from a file the new one (the row
				// read is stale, so the published vector is given); never
				// a mix of the two.
				old := stored[it.ID]
				if op.name == "sqlite" {
					old = written[it.ID]
				}
				isOld := it.Text == "t1" && slices.Equal(it.Embedding, old)
				isNew := it.Text == "new" && slices.Equal(it.Embedding, []float32{0.6, 0, 0, 0.8})
				if !isOld && !isNew {
					t.Fatalf("item replaced within the page read seen as %+v", it)
				}
			}
			if seen++; seen == n-10 {
				break
			}
		}
		if !sawNew {
			t.Fatal("the replaced item was not seen")
		}

		// Each failure is one error, and the end.
		only := func(ctx context.Context, o *cairn.ItemsOptions, want error) {
			t.Helper()
			var errs []error
			for _, err := range c.Items(ctx, o) {
				errs = append(errs, err)
			}
			if len(errs) != 1 || !errors.Is(errs[0], want) {
				t.Fatalf("got %v, want one error wrapping %v", errs, want)
			}
		}
		only(ctx, &cairn.ItemsOptions{Filter: cairn.Eq("", 1)}, vector.ErrInvalidOptions)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		only(cctx, nil, context.Canceled)
		db.Close()
		only(ctx, nil, vector.ErrClosed)
	})
}
