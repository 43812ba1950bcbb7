package cairn

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cairndb/cairn/vector"
)

var errInjected = errors.New("injected failure")

// faultyBackend fails the writes it is told to, after doing nothing, as a
// store whose transaction is rolled back does.
type faultyBackend struct {
	backend
	failInsert, failUpsert, failRemove bool
}

func (b *faultyBackend) write(ctx context.Context, rows []row, drop []vector.ID, prior []prior) error {
	switch writeKind(rows, drop) {
	case "insert":
		if b.failInsert {
			return errInjected
		}
	case "upsert":
		if b.failUpsert {
			return errInjected
		}
	case "remove":
		if b.failRemove {
			return errInjected
		}
	}
	return b.backend.write(ctx, rows, drop, prior)
}

// writeKind names a backend write: "insert" (new versions only), "remove"
// (deletes only) or "upsert" (both).
func writeKind(rows []row, drop []vector.ID) string {
	switch {
	case len(drop) == 0:
		return "insert"
	case len(rows) == 0:
		return "remove"
	}
	return "upsert"
}

// TestFailedWritesChangeNothing checks that when the store refuses a
// write, the collection's maps and its index are as they were before.
func TestFailedWritesChangeNothing(t *testing.T) {
	for _, kind := range []IndexKind{Flat, HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			db := OpenMemory(nil)
			defer db.Close()
			cfg := CollectionConfig{Dim: 2, Index: kind}.withDefaults()
			mb, err := newMemBackend(cfg)
			if err != nil {
				t.Fatal(err)
			}
			fb := &faultyBackend{backend: mb}
			c, err := newCollection(ctx, db, "c", cfg, fb)
			if err != nil {
				t.Fatal(err)
			}
			db.colls["c"] = c
			for i := range 50 {
				err := c.Add(ctx, Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}, Metadata: map[string]any{"i": i}})
				if err != nil {
					t.Fatal(err)
				}
			}
			snapshot := func() []Result {
				res, err := c.Query(ctx, []float32{1, 10}, 50, nil)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			before := snapshot()
			same := func(step string) {
				t.Helper()
				settled(t, c, 50)
				if after := snapshot(); !reflect.DeepEqual(after, before) {
					t.Fatalf("%s: answers changed", step)
				}
			}

			fb.failInsert = true
			if err := c.Add(ctx, Item{ID: "new", Embedding: []float32{1, 10}}); !errors.Is(err, errInjected) {
				t.Fatalf("add: %v", err)
			}
			if _, err := c.Get(ctx, "new"); !errors.Is(err, vector.ErrNotFound) {
				t.Errorf("failed add left the item: %v", err)
			}
			same("failed add")
			fb.failInsert = false

			fb.failUpsert = true
			err = c.Upsert(ctx, Item{ID: "3", Embedding: []float32{1, 10}, Text: "moved"}, Item{ID: "new", Embedding: []float32{1, 9}})
			if !errors.Is(err, errInjected) {
				t.Fatalf("upsert: %v", err)
			}
			same("failed upsert")
			fb.failUpsert = false

			fb.failRemove = true
			if err := c.Delete(ctx, "1", "2"); !errors.Is(err, errInjected) {
				t.Fatalf("delete: %v", err)
			}
			if _, err := c.DeleteWhere(ctx, Lt("i", 10)); !errors.Is(err, errInjected) {
				t.Fatalf("delete where: %v", err)
			}
			same("failed delete")
			fb.failRemove = false

			// A cancelled context changes nothing either.
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := c.Add(cctx, Item{ID: "new", Embedding: []float32{1, 10}}); !errors.Is(err, context.Canceled) {
				t.Fatalf("add with a cancelled context: %v", err)
			}
			if err := c.Delete(cctx, "1"); !errors.Is(err, context.Canceled) {
				t.Fatalf("delete with a cancelled context: %v", err)
			}
			same("cancelled")

			// And the collection still works.
			if err := c.Upsert(ctx, Item{ID: "3", Embedding: []float32{1, 10}}); err != nil {
				t.Fatal(err)
			}
			if res, _ := c.Query(ctx, []float32{1, 10}, 2, nil); res[0].ID != "10" && res[0].ID != "3" {
				t.Errorf("after recovery: %v", res)
			}
		})
	}
}
