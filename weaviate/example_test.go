package weaviate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/weaviate"
)

// An application opens the cluster instead of a local DB and uses the same
// MemoryStore API. (Not run by go test: it needs a cluster; see
// cluster.sh and test-cluster.sh, whose tests run the same calls.)
func ExampleOpen() {
	ctx := context.Background()
	var store cairn.MemoryStore
	store, err := weaviate.Open(ctx, []string{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082"},
		&weaviate.Options{WriteConsistency: weaviate.Quorum, ReadConsistency: weaviate.Quorum,
			// Searches and batch writes go over gRPC; three nodes on one
			// host have a gRPC port each (default: each host at 50051).
			GRPCAddrs: []string{"127.0.0.1:50051", "127.0.0.1:50052", "127.0.0.1:50053"}})
	if err != nil {
		log.Fatal(err) // wraps weaviate.ErrUnavailable if no node answers in time
	}
	defer store.Close()
	notes, err := store.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	err = notes.Add(ctx, cairn.Item{ID: "n1", Text: "the user prefers dark mode", Embedding: []float32{0.9, 0.1, 0},
		Metadata: map[string]any{"kind": "preference"}})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := notes.Query(ctx, []float32{1, 0, 0.1}, 1, &cairn.QueryOptions{Filter: cairn.Eq("kind", "preference")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hits[0].ID)
}
