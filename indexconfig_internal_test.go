package cairn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// TestProcessOptionsNotStored checks that a graph's workers and progress
// come from the DB's Options in every process that opens the file, and
// never from a collection's stored configuration, which refuses them.
func TestProcessOptionsNotStored(t *testing.T) {
	ctx := context.Background()
	for _, h := range []hnsw.Options{{Workers: 2}, {Progress: func(int, int) {}}} {
		cfg := CollectionConfig{Dim: 2, Index: HNSW, HNSW: h}
		if err := cfg.Validate(); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Validate with HNSW %+v = %v, want ErrInvalidOptions", h, err)
		}
		if _, err := OpenMemory(nil).CreateCollection(ctx, "c", cfg); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("CreateCollection with HNSW %+v = %v, want ErrInvalidOptions", h, err)
		}
	}

	path := filepath.Join(t.TempDir(), "w.db")
	for round, workers := range []int{1, 3} {
		var (
			mu    sync.Mutex
			names = map[string]int{}
		)
		db, err := Open(ctx, path, &Options{IndexWorkers: workers, IndexProgress: func(coll string, done, total int) {
			mu.Lock()
			names[coll]++
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		var c *Collection
		if round == 0 {
			c, err = db.CreateCollection(ctx, "graph", CollectionConfig{Dim: 2, Index: HNSW})
		} else {
			c, err = db.Collection(ctx, "graph")
		}
		if err == nil {
			items := make([]Item, 300)
			for i := range items {
				items[i] = Item{ID: fmt.Sprint(round, "-", i), Embedding: []float32{1, float32(i)}}
			}
			err = c.Add(ctx, items...)
		}
		if err != nil {
			t.Fatal(err)
		}
		c.mu.RLock()
		got := c.idx.(*hnsw.Index).Options().Workers
		c.mu.RUnlock()
		if got != workers {
			t.Errorf("round %d: the graph inserts with %d workers, want Options.IndexWorkers %d", round, got, workers)
		}
		if c.Config().HNSW.Workers != 0 || c.Config().HNSW.Progress != nil {
			t.Errorf("round %d: the collection's configuration holds process options: %+v", round, c.Config().HNSW)
		}
		mu.Lock()
		if len(names) != 1 || names["graph"] == 0 {
			t.Errorf("round %d: progress reported for %v, want the collection graph", round, names)
		}
		mu.Unlock()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
