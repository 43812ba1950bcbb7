package cairn_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cairndb/cairn"
)

// Items walks a collection in the order its items were added, a page at
// a time, so that even a large collection is listed in little memory.
func ExampleCollection_Items() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	notes, _ := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 2})
	notes.Add(ctx,
		cairn.Item{ID: "n1", Embedding: []float32{1, 0}, Text: "buy milk", Metadata: map[string]any{"done": true}},
		cairn.Item{ID: "n2", Embedding: []float32{0, 1}, Text: "call Ada", Metadata: map[string]any{"done": false}},
		cairn.Item{ID: "n3", Embedding: []float32{1, 1}, Text: "water plants", Metadata: map[string]any{"done": false}},
	)
	for it, err := range notes.Items(ctx, &cairn.ItemsOptions{Filter: cairn.Eq("done", false)}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(it.ID, it.Text)
	}
	// Output:
	// n2 call Ada
	// n3 water plants
}

// Inspect and Check look at a file without opening it as a DB, as the
// cairn command's info and check do.
func ExampleCheck() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cairn-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "memory.db")

	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	c, _ := db.CreateCollection(ctx, "facts", cairn.CollectionConfig{Dim: 2, Index: cairn.HNSW})
	c.Add(ctx, cairn.Item{ID: "f1", Embedding: []float32{1, 0}}, cairn.Item{ID: "f2", Embedding: []float32{0, 1}})
	db.Close() // saves the HNSW graph

	fi, err := cairn.Inspect(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range fi.Collections {
		fmt.Printf("%s: %d items, index %v, saved graph %v\n", c.Name, c.Count, c.Index, c.SavedGraph)
	}
	rep, err := cairn.Check(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d problems, %d items and %d graph checked\n", len(rep.Problems), rep.Items, rep.Graphs)
	// Output:
	// facts: 2 items, index hnsw, saved graph current
	// 0 problems, 2 items and 1 graph checked
}
