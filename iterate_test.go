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
		// IDs: those held, once each, in Find's order; with a filter,
		// those it matches too. An empty list is no item.
		some := []string{items[9].ID, "missing", items[5].ID, items[2].ID, items[9].ID, items[400].ID}
		for _, f := range []*cairn.Filter{nil, cairn.Eq("even", true)} {
			want, err := c.Find(ctx, f, 0)
			if err != nil {
				t.Fatal(err)
			}
			want = slices.DeleteFunc(want, func(it cairn.Item) bool { return !slices.Contains(some, it.ID) })
			got := collect(&cairn.ItemsOptions{IDs: some, Filter: f, Embeddings: true})
			if len(got) != len(want) {
				t.Fatalf("IDs %q, filter %v: %d items, want %d", some, f, len(got), len(want))
			}
			for i := range got {
				w := want[i].Embedding
				if op.name == "sqlite" {
					w = written[want[i].ID]
				}
				if got[i].ID != want[i].ID || !slices.Equal(got[i].Embedding, w) {
					t.Fatalf("IDs %q, filter %v, item %d: %q %v, want %q %v", some, f, i, got[i].ID, got[i].Embedding, want[i].ID, w)
				}
			}
		}
		if got := collect(&cairn.ItemsOptions{IDs: []string{}}); len(got) != 0 {
			t.Fatalf("IDs empty: %d items", len(got))
		}

		// Breaking out early stops; an item deleted or replaced before its
		// page is read is left out (the new version was written after the
		// start); one whose page was read comes back whole, in the version
		// of that moment, never a mix.
		seen := 0
		newVec := []float32{3, 0, 0, 4}
		for it, err := range c.Items(ctx, &cairn.ItemsOptions{Embeddings: true}) {
			if err != nil {
				t.Fatal(err)
			}
			if seen == 0 {
				if err := c.Delete(ctx, items[600].ID); err != nil {
					t.Fatal(err)
				}
				for _, i := range []int{1, 650} {
					if err := c.Upsert(ctx, cairn.Item{ID: items[i].ID, Embedding: newVec, Text: "new"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			switch it.ID {
			case items[600].ID, items[650].ID:
				t.Fatalf("saw %+v, deleted or replaced before its page was read", it)
			case items[1].ID:
				// In the page already read: in memory, the old version
				// was copied with the page; from a file its row is read
				// with the page, but by the time it is given its version
				// is no longer published, so it is left out.
				old := stored[it.ID]
				if op.name == "sqlite" {
					t.Fatalf("saw %+v, replaced before it was given", it)
				}
				if it.Text != "t1" || !slices.Equal(it.Embedding, old) {
					t.Fatalf("item replaced within the page read seen as %+v", it)
				}
			}
			if seen++; seen == n-10 {
				break
			}
		}
		if err := c.Upsert(ctx, cairn.Item{ID: "fresh", Embedding: newVec}); err != nil {
			t.Fatal(err)
		}
		if got := collect(nil); got[len(got)-1].ID != "fresh" || got[len(got)-2].ID != items[650].ID {
			t.Fatalf("the last items are %q, %q; want the replaced and the new one last", got[len(got)-2].ID, got[len(got)-1].ID)
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
