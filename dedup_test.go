package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// near returns a unit-length 3-d vector at angle a (radians) from the x
// axis, in the x-y plane: two of them have cosine cos(a1 − a2).
func near(a float64) []float32 {
	return []float32{float32(math.Cos(a)), float32(math.Sin(a)), 0}
}

var dedup95 = &cairn.Dedup{MinSimilarity: 0.95}

// TestUpsertDedup checks the merges of one call at a time: into a stored
// near-duplicate, not into an item too far, not across scopes, into an
// earlier item of the same call, and never for an id already stored.
func TestUpsertDedup(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c := mustCollection(t, db, "m", cairn.CollectionConfig{Dim: 3, Index: kind})
			if err := c.Add(ctx, cairn.Item{ID: "a", Text: "lives in Lisbon", Embedding: near(0), Metadata: map[string]any{"user": "ann"}}); err != nil {
				t.Fatal(err)
			}
			before := get(t, c, "a")
			time.Sleep(2 * time.Millisecond) // UpdatedAt moves

			// cos 0.1 = 0.995: a rephrasing of a.
			ms, err := c.UpsertDedup(ctx, dedup95, cairn.Item{ID: "b", Text: "lives in Lisbon, Portugal", Embedding: near(0.1), Metadata: map[string]any{"user": "ann", "v": 2}})
			if err != nil || len(ms) != 1 || ms[0].ID != "b" || ms[0].Into != "a" || ms[0].Similarity < 0.99 {
				t.Fatalf("merge into a: %+v, %v", ms, err)
			}
			a := get(t, c, "a")
			if a.Text != "lives in Lisbon, Portugal" || a.Metadata["v"] != 2.0 || !a.CreatedAt.Equal(before.CreatedAt) || !a.UpdatedAt.After(before.UpdatedAt) {
				t.Fatalf("a after the merge: %+v (before %+v)", a, before)
			}
			if _, err := c.Get(ctx, "b"); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("b was stored beside a: %v", err)
			}

			// cos 0.5 = 0.878: another fact. Another user: another scope.
			// No user: written as given.
			ms, err = c.UpsertDedup(ctx, &cairn.Dedup{MinSimilarity: 0.95, Scope: []string{"user"}},
				cairn.Item{ID: "c", Embedding: near(0.5), Metadata: map[string]any{"user": "ann"}},
				cairn.Item{ID: "d", Embedding: near(0.05), Metadata: map[string]any{"user": "bob"}},
				cairn.Item{ID: "e", Embedding: near(0.02)},
			)
			if err != nil || len(ms) != 0 {
				t.Fatalf("nothing to merge: %+v, %v", ms, err)
			}
			if n, _ := c.Count(ctx); n != 4 {
				t.Fatalf("count %d, want 4", n)
			}

			// Within one call: f and g are near each other and far from
			// every stored item; g updates f. h has a stored id: a plain
			// upsert, though it is near a.
			ms, err = c.UpsertDedup(ctx, &cairn.Dedup{MinSimilarity: 0.95, Scope: []string{"user"}},
				cairn.Item{ID: "f", Text: "f", Embedding: near(2), Metadata: map[string]any{"user": "ann"}},
				cairn.Item{ID: "g", Text: "g", Embedding: near(2.05), Metadata: map[string]any{"user": "ann"}},
				cairn.Item{ID: "c", Text: "c again", Embedding: near(0.01), Metadata: map[string]any{"user": "ann"}},
			)
			if err != nil || len(ms) != 1 || ms[0].ID != "g" || ms[0].Into != "f" {
				t.Fatalf("merge within the call: %+v, %v", ms, err)
			}
			if f := get(t, c, "f"); f.Text != "g" {
				t.Fatalf("f = %+v, want g's text", f)
			}
			if it := get(t, c, "c"); it.Text != "c again" {
				t.Fatalf("c = %+v, want upserted", it)
			}
			if n, _ := c.Count(ctx); n != 5 {
				t.Fatalf("count %d, want 5", n)
			}
		})
	}
}

// TestUpsertDedupMergeAndID checks a call in which one item merges into
// a stored item and another names that item: the call is written as if
// its items were written one after another, in either order, and an id
// the caller repeats is still refused.
func TestUpsertDedupMergeAndID(t *testing.T) {
	ctx := context.Background()
	for _, order := range []string{"merge first", "id first"} {
		t.Run(order, func(t *testing.T) {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c := mustCollection(t, db, "m", cairn.CollectionConfig{Dim: 3, Index: cairn.Flat})
			if err := c.Add(ctx, cairn.Item{ID: "x", Text: "stored", Embedding: near(0)}); err != nil {
				t.Fatal(err)
			}
			dup := cairn.Item{ID: "new", Text: "near-duplicate", Embedding: near(0.01)}
			named := cairn.Item{ID: "x", Text: "named", Embedding: near(0.02)}
			items, last := []cairn.Item{dup, named}, "named"
			if order == "id first" {
				items, last = []cairn.Item{named, dup}, "near-duplicate"
			}
			ms, err := c.UpsertDedup(ctx, dedup95, items...)
			if err != nil || len(ms) != 1 || ms[0].ID != "new" || ms[0].Into != "x" {
				t.Fatalf("merges %+v, %v; want new into x", ms, err)
			}
			if it := get(t, c, "x"); it.Text != last {
				t.Fatalf("x = %q, want %q, the later item's", it.Text, last)
			}
			if n, _ := c.Count(ctx); n != 1 {
				t.Fatalf("count %d, want 1", n)
			}
			_, err = c.UpsertDedup(ctx, dedup95, named, dup, named)
			if !errors.Is(err, vector.ErrDuplicateID) {
				t.Fatalf("x given twice: %v, want ErrDuplicateID", err)
			}
		})
	}
}

// TestUpsertDedupReplacedInCall checks that an item of a call is not
// merged into the stored version of an id that an earlier item of the
// same call replaces: written one after another, the later item meets
// the earlier one, not what it replaced, and the earlier one is kept.
func TestUpsertDedupReplacedInCall(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c := mustCollection(t, db, "m", cairn.CollectionConfig{Dim: 3, Index: kind})
			if err := c.Add(ctx,
				cairn.Item{ID: "x", Text: "stored", Embedding: near(0)},
				cairn.Item{ID: "y", Text: "other", Embedding: near(1.5)}); err != nil {
				t.Fatal(err)
			}
			// x moves far from where it was; then an item near where x was.
			ms, err := c.UpsertDedup(ctx, dedup95,
				cairn.Item{ID: "x", Text: "moved", Embedding: near(1)},
				cairn.Item{ID: "new", Text: "near the old x", Embedding: near(0.01)})
			if err != nil || len(ms) != 0 {
				t.Fatalf("merges %+v, %v; want none", ms, err)
			}
			if it := get(t, c, "x"); it.Text != "moved" {
				t.Fatalf("x = %q, want %q", it.Text, "moved")
			}
			if it := get(t, c, "new"); it.Text != "near the old x" {
				t.Fatalf("new = %q", it.Text)
			}
			// y is merged into, then an item near where y was: it merges
			// into y as the call left it only if near that.
			ms, err = c.UpsertDedup(ctx, dedup95,
				cairn.Item{ID: "z", Text: "near y", Embedding: near(1.51)},
				cairn.Item{ID: "y", Text: "y moved", Embedding: near(3)},
				cairn.Item{ID: "w", Text: "near the old y", Embedding: near(1.49)})
			if err != nil || len(ms) != 1 || ms[0].ID != "z" || ms[0].Into != "y" {
				t.Fatalf("merges %+v, %v; want z into y only", ms, err)
			}
			if it := get(t, c, "y"); it.Text != "y moved" {
				t.Fatalf("y = %q, want %q", it.Text, "y moved")
			}
			if it := get(t, c, "w"); it.Text != "near the old y" {
				t.Fatalf("w = %q", it.Text)
			}
		})
	}
}

// TestUpsertDedupErrors checks that a bad call stores nothing.
func TestUpsertDedupErrors(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c := mustCollection(t, db, "m", cairn.CollectionConfig{Dim: 3})
	ok := cairn.Item{ID: "ok", Embedding: near(1)}
	for _, tc := range []struct {
		d    *cairn.Dedup
		item cairn.Item
		want error
	}{
		{nil, ok, vector.ErrInvalidOptions},
		{&cairn.Dedup{MinSimilarity: math.NaN()}, ok, vector.ErrInvalidOptions},
		{&cairn.Dedup{}, ok, vector.ErrInvalidOptions},
		{&cairn.Dedup{MinSimilarity: -0.5}, ok, vector.ErrInvalidOptions},
		{&cairn.Dedup{MinSimilarity: 1.5}, ok, vector.ErrInvalidOptions},
		{&cairn.Dedup{MinSimilarity: math.Inf(1)}, ok, vector.ErrInvalidOptions},
		{dedup95, cairn.Item{Embedding: near(0)}, vector.ErrEmptyID},
		{dedup95, cairn.Item{ID: "x", Embedding: []float32{1, 0}}, vector.ErrDimensionMismatch},
		{&cairn.Dedup{MinSimilarity: 0.9, Scope: []string{"k"}}, cairn.Item{ID: "x", Embedding: near(0), Metadata: map[string]any{"k": []int{1}}}, vector.ErrInvalidOptions},
		{dedup95, cairn.Item{ID: "x", Text: "no embedder"}, cairn.ErrNoEmbedder},
	} {
		if _, err := c.UpsertDedup(ctx, tc.d, ok, tc.item); !errors.Is(err, tc.want) {
			t.Errorf("UpsertDedup(%+v, %+v) = %v, want %v", tc.d, tc.item, err, tc.want)
		}
	}
	if n, _ := c.Count(ctx); n != 0 {
		t.Fatalf("%d items stored by failed calls", n)
	}
}

// TestUpsertDedupConcurrent has many goroutines remember the same fact,
// each under its own id, at once, in a file (so that each write takes a
// commit's time): the calls run one at a time, so one item is stored and
// every other call merged into it.
func TestUpsertDedupConcurrent(t *testing.T) {
	ctx := context.Background()
	db, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "m.db"), &cairn.Options{Embedder: cairn.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		vs := make([][]float32, len(texts))
		for i, s := range texts {
			vs[i] = near(float64(len(s)) / 1000) // texts of about one length: near-duplicates
		}
		return vs, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "m", cairn.CollectionConfig{Dim: 3})
	const n = 32
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		merges int
	)
	for i := range n {
		wg.Go(func() {
			ms, err := c.UpsertDedup(ctx, dedup95, cairn.Item{ID: fmt.Sprint("m", i), Text: "the user likes tea" + strings.Repeat(".", i%3)})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			merges += len(ms)
			mu.Unlock()
		})
	}
	wg.Wait()
	if count, _ := c.Count(ctx); count != 1 || merges != n-1 {
		t.Fatalf("%d items stored and %d merges after %d calls, want 1 and %d", count, merges, n, n-1)
	}
}

func get(t *testing.T, c *cairn.Collection, id string) cairn.Item {
	t.Helper()
	its, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return its[0]
}
