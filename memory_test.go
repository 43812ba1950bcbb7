package cairn_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/memorytest"
)

// The local store passes the memory-store conformance suite through the
// MemoryStore interface, in memory and in a file.
func TestLocalMemoryStore(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		memorytest.Run(t, func(t *testing.T, emb cairn.Embedder) cairn.MemoryStore {
			s := cairn.Local(cairn.OpenMemory(&cairn.Options{Embedder: emb}))
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("file", func(t *testing.T) {
		memorytest.Run(t, func(t *testing.T, emb cairn.Embedder) cairn.MemoryStore {
			db, err := cairn.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), &cairn.Options{Embedder: emb})
			if err != nil {
				t.Fatal(err)
			}
			s := cairn.Local(db)
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

// remember is application code: it sees only the MemoryStore interface, so
// it runs unchanged on a local DB and on a cluster (weaviate.Open).
func remember(ctx context.Context, store cairn.MemoryStore) ([]cairn.Result, error) {
	notes, err := store.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 3})
	if err != nil {
		return nil, err
	}
	err = notes.Add(ctx,
		cairn.Item{ID: "n1", Text: "the user prefers dark mode", Embedding: []float32{0.9, 0.1, 0}, Metadata: map[string]any{"kind": "preference"}},
		cairn.Item{ID: "n2", Text: "the cat is called Miso", Embedding: []float32{0.1, 0.9, 0.2}, Metadata: map[string]any{"kind": "fact"}},
	)
	if err != nil {
		return nil, err
	}
	return notes.Query(ctx, []float32{1, 0, 0.1}, 1, &cairn.QueryOptions{Filter: cairn.Eq("kind", "preference")})
}

// An application written against MemoryStore switches between the local
// store and a cluster by changing only how it opens the store.
func ExampleLocal() {
	ctx := context.Background()
	store := cairn.Local(cairn.OpenMemory(nil))
	// On a cluster instead:
	//	store, err := weaviate.Open(ctx, []string{"10.0.0.1:8080", "10.0.0.2:8080"}, nil)
	defer store.Close()
	hits, err := remember(ctx, store)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %.2f\n", hits[0].ID, hits[0].Similarity)
	// Output:
	// n1 0.99
}
