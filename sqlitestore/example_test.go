package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "cairn-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "memory.cairn")
	ctx := context.Background()

	db, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		panic(err)
	}
	notes, err := db.CreateCollection(ctx, "notes", sqlitestore.CollectionConfig{Dim: 3, Metric: vector.Cosine})
	if err != nil {
		panic(err)
	}
	err = notes.PutItems(ctx, []sqlitestore.Item{
		{ID: 1, Key: "tea", Vector: vector.Vector{1, 0, 0}, Text: "likes green tea", Metadata: []byte(`{"topic":"food"}`)},
		{ID: 2, Key: "cat", Vector: vector.Vector{0, 1, 0}, Text: "has a cat named Miso"},
		{ID: 3, Key: "run", Vector: vector.Vector{0, 0, 1}, Text: "runs on Sundays"},
	})
	if err != nil {
		panic(err)
	}
	db.Close()

	// Reopen: the vectors are loaded into memory, and searches run there.
	db, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	notes, err = db.Collection(ctx, "notes")
	if err != nil {
		panic(err)
	}
	res, err := flat.New(notes).Search(ctx, vector.Vector{0.1, 0.9, 0}, 1, nil)
	if err != nil {
		panic(err)
	}
	item, err := notes.GetItem(ctx, res[0].ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(notes.Len(), item.Key, item.Text)
	// Output: 3 cat has a cat named Miso
}

func ExampleCollection_LoadIndex() {
	dir, _ := os.MkdirTemp("", "cairn-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlitestore.Open(ctx, filepath.Join(dir, "m.cairn"), nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", sqlitestore.CollectionConfig{Dim: 2, Metric: vector.L2})
	c.Put(ctx, 1, vector.Vector{1, 2})

	var graph blob
	err = c.LoadIndex(ctx, "graph", &graph)
	fmt.Println("first load:", errors.Is(err, vector.ErrNotFound))

	// Build (here: a stand-in), save, load.
	graph = blob("graph bytes")
	if err := c.SaveIndex(ctx, "graph", graph); err != nil {
		panic(err)
	}
	var loaded blob
	fmt.Println("after save:", c.LoadIndex(ctx, "graph", &loaded), string(loaded))

	// A write makes the saved graph stale: rebuild and save again.
	c.Put(ctx, 2, vector.Vector{3, 4})
	err = c.LoadIndex(ctx, "graph", &loaded)
	fmt.Println("after a write:", errors.Is(err, sqlitestore.ErrStaleIndex))
	// Output:
	// first load: true
	// after save: <nil> graph bytes
	// after a write: true
}

// blob is a stand-in index: its bytes are its state.
type blob []byte

func (b blob) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b)
	return int64(n), err
}

func (b *blob) ReadFrom(r io.Reader) (int64, error) {
	data, err := io.ReadAll(r)
	*b = data
	return int64(len(data)), err
}

// ExampleCollection_WriteItems replaces an item by a new version under a
// new id in one transaction; the old vector serves readers until it is
// evicted.
func ExampleCollection_WriteItems() {
	dir, err := os.MkdirTemp("", "cairn-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlitestore.Open(ctx, filepath.Join(dir, "memory.cairn"), nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	notes, err := db.CreateCollection(ctx, "notes", sqlitestore.CollectionConfig{Dim: 2, Metric: vector.L2})
	if err != nil {
		panic(err)
	}
	if err := notes.PutItems(ctx, []sqlitestore.Item{{ID: 1, Key: "n1", Vector: []float32{1, 0}, Text: "first"}}); err != nil {
		panic(err)
	}
	// Version 2 of n1: stored under id 2, and id 1 deleted, together.
	if err := notes.WriteItems(ctx, []sqlitestore.Item{{ID: 2, Key: "n1", Vector: []float32{0, 1}, Text: "second"}}, []vector.ID{1}); err != nil {
		panic(err)
	}
	_, err = notes.Get(1)
	fmt.Println("old vector in memory:", err == nil)
	if err := notes.Evict([]vector.ID{1}); err != nil {
		panic(err)
	}
	_, err = notes.Get(1)
	fmt.Println("after Evict:", errors.Is(err, vector.ErrNotFound))
	it, err := notes.GetItem(ctx, 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(it.Key, it.Text)
	// Output:
	// old vector in memory: true
	// after Evict: true
	// n1 second
}
