package cairn_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
)

// An agent remembers facts and recalls the ones closest to what it is
// thinking about. Embeddings normally come from a model (set
// Options.Embedder and add items by Text alone); here they are tiny
// hand-made vectors.
func Example() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil) // or cairn.Open(ctx, "agent.db", nil) to keep it
	defer db.Close()

	memories, err := db.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	err = memories.Add(ctx,
		cairn.Item{ID: "m1", Text: "The user prefers dark mode", Embedding: []float32{0.9, 0.1, 0.0},
			Metadata: map[string]any{"kind": "preference"}},
		cairn.Item{ID: "m2", Text: "The user's cat is called Miso", Embedding: []float32{0.1, 0.9, 0.2},
			Metadata: map[string]any{"kind": "fact"}},
		cairn.Item{ID: "m3", Text: "The user likes high-contrast themes", Embedding: []float32{0.7, 0.0, 0.4},
			Metadata: map[string]any{"kind": "preference"}},
	)
	if err != nil {
		log.Fatal(err)
	}

	// Recall the two memories nearest to a thought about the UI theme.
	hits, err := memories.Query(ctx, []float32{1, 0, 0.1}, 2, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s  %.2f  %s\n", h.ID, h.Similarity, h.Text)
	}
	// Output:
	// m1  0.99  The user prefers dark mode
	// m3  0.91  The user likes high-contrast themes
}

// Filters restrict a query to items whose metadata match; the filter is
// applied during the search, so k results come back whenever k items match.
func Example_filters() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	docs, _ := db.CreateCollection(ctx, "docs", cairn.CollectionConfig{Dim: 2})
	docs.Add(ctx,
		cairn.Item{ID: "go-2019", Embedding: []float32{1, 0.1}, Metadata: map[string]any{"lang": "go", "year": 2019}},
		cairn.Item{ID: "go-2023", Embedding: []float32{1, 0.2}, Metadata: map[string]any{"lang": "go", "year": 2023}},
		cairn.Item{ID: "rust-2023", Embedding: []float32{1, 0.0}, Metadata: map[string]any{"lang": "rust", "year": 2023}},
		cairn.Item{ID: "zig-2024", Embedding: []float32{0.9, 0.3}, Metadata: map[string]any{"lang": "zig", "year": 2024, "draft": true}},
	)
	q := []float32{1, 0}
	show := func(name string, f *cairn.Filter) {
		hits, err := docs.Query(ctx, q, 3, &cairn.QueryOptions{Filter: f})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-38s", name+":")
		for _, h := range hits {
			fmt.Print(" ", h.ID)
		}
		fmt.Println()
	}
	show("no filter", nil)
	show(`lang = "go"`, cairn.Eq("lang", "go"))
	show("year >= 2023, not a draft", cairn.And(cairn.Gte("year", 2023), cairn.Ne("draft", true)))
	show(`lang in (rust, zig) or year < 2020`, cairn.Or(cairn.In("lang", "rust", "zig"), cairn.Lt("year", 2020)))

	n, _ := docs.DeleteWhere(ctx, cairn.Eq("lang", "go"))
	left, _ := docs.Count(ctx)
	fmt.Println("deleted", n, "go docs; left", left)
	// Output:
	// no filter:                             rust-2023 go-2019 go-2023
	// lang = "go":                           go-2019 go-2023
	// year >= 2023, not a draft:             rust-2023 go-2023
	// lang in (rust, zig) or year < 2020:    rust-2023 go-2019 zig-2024
	// deleted 2 go docs; left 2
}

// A store opened with Open lives in one SQLite file: everything written is
// there after Close, when the file is opened again.
func Example_persistence() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cairn-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.db")

	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	notes, err := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 2, Index: cairn.HNSW})
	if err != nil {
		log.Fatal(err)
	}
	err = notes.Add(ctx,
		cairn.Item{ID: "a", Text: "first note", Embedding: []float32{1, 0}, Metadata: map[string]any{"day": 1}},
		cairn.Item{ID: "b", Text: "second note", Embedding: []float32{0, 1}, Metadata: map[string]any{"day": 2}},
	)
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil { // saves the HNSW graph too
		log.Fatal(err)
	}

	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	notes, err = db.Collection(ctx, "notes")
	if err != nil {
		log.Fatal(err)
	}
	hits, err := notes.Query(ctx, []float32{0.2, 1}, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	count, _ := notes.Count(ctx)
	fmt.Println(count, "notes; nearest:", hits[0].Text, hits[0].Metadata)
	// Output:
	// 2 notes; nearest: second note map[day:2]
}

// Each collection chooses its index: Flat searches exactly, HNSW
// approximately and fast on large collections, and Auto (the default) is
// exact until the collection reaches AutoThreshold items, then HNSW.
func Example_chooseIndex() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()

	exact, _ := db.CreateCollection(ctx, "exact", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	graph, _ := db.CreateCollection(ctx, "graph", cairn.CollectionConfig{
		Dim:   2,
		Index: cairn.HNSW,
		HNSW:  hnsw.Options{M: 32, EfConstruction: 400, EfSearch: 128}, // zero fields: defaults
	})
	auto, _ := db.CreateCollection(ctx, "auto", cairn.CollectionConfig{Dim: 2, AutoThreshold: 3})

	for i := range 3 {
		item := cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}}
		for _, c := range []*cairn.Collection{exact, graph, auto} {
			if err := c.Add(ctx, item); err != nil {
				log.Fatal(err)
			}
		}
		info, _ := auto.Info(ctx)
		fmt.Printf("%d items: auto uses %v\n", i+1, info.Index)
	}
	// A wider beam for one query of an HNSW collection:
	hits, _ := graph.Query(ctx, []float32{1, 2}, 1, &cairn.QueryOptions{Ef: 256})
	fmt.Println("nearest to (1, 2):", hits[0].ID)
	infos, _ := db.Collections(ctx)
	for _, info := range infos {
		fmt.Printf("%s: %v, in use %v\n", info.Name, info.Config.Index, info.Index)
	}
	// Output:
	// 1 items: auto uses flat
	// 2 items: auto uses flat
	// 3 items: auto uses hnsw
	// nearest to (1, 2): 2
	// auto: auto, in use hnsw
	// exact: flat, in use flat
	// graph: hnsw, in use hnsw
}

// With an Embedder, items are added and queried by text. This toy embedder
// counts a few words; a real program uses a model, through
// github.com/cairndb/cairn/openai for instance.
func ExampleEmbedderFunc() {
	words := []string{"cat", "dog", "tea"}
	toy := cairn.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			v := make([]float32, len(words))
			for j, w := range words {
				v[j] = float32(strings.Count(t, w)) + 0.01
			}
			out[i] = v
		}
		return out, nil
	})
	ctx := context.Background()
	db := cairn.OpenMemory(&cairn.Options{Embedder: toy})
	defer db.Close()
	notes, _ := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: len(words)})
	notes.Add(ctx,
		cairn.Item{ID: "1", Text: "the cat sleeps; the cat purrs"},
		cairn.Item{ID: "2", Text: "green tea, then more tea"},
		cairn.Item{ID: "3", Text: "walk the dog"},
	)
	hits, _ := notes.QueryText(ctx, "what does the cat do?", 1, nil)
	fmt.Println(hits[0].Text)
	// Output:
	// the cat sleeps; the cat purrs
}

// MinSimilarity keeps only results that are similar enough, so a query may
// return fewer than k. Similarity is the cosine similarity under Cosine
// (whatever the lengths of the vectors), the inner product under Dot and
// 1/(1+‖q−v‖) under L2.
func ExampleCollection_Query() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 2})
	c.Add(ctx,
		cairn.Item{ID: "same direction", Embedding: []float32{10, 0}},
		cairn.Item{ID: "45 degrees", Embedding: []float32{1, 1}},
		cairn.Item{ID: "orthogonal", Embedding: []float32{0, 3}},
	)
	hits, _ := c.Query(ctx, []float32{1, 0}, 3, &cairn.QueryOptions{MinSimilarity: new(0.5)})
	for _, h := range hits {
		fmt.Printf("%-15s similarity %.3f  distance %.3f\n", h.ID, h.Similarity, h.Distance)
	}
	// Output:
	// same direction  similarity 1.000  distance 0.000
	// 45 degrees      similarity 0.707  distance 0.293
}

// An agent that remembers the same fact twice keeps one memory: the
// second write updates the first.
func ExampleCollection_UpsertDedup() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: 2})
	c.Add(ctx, cairn.Item{ID: "m1", Text: "prefers tea", Embedding: []float32{1, 0.05}, Metadata: map[string]any{"user": "ann"}})

	d := &cairn.Dedup{MinSimilarity: 0.95, Scope: []string{"user"}}
	merged, _ := c.UpsertDedup(ctx, d,
		cairn.Item{ID: "m2", Text: "prefers green tea", Embedding: []float32{1, 0.1}, Metadata: map[string]any{"user": "ann"}},
		cairn.Item{ID: "m3", Text: "prefers tea", Embedding: []float32{1, 0.05}, Metadata: map[string]any{"user": "bob"}},
	)
	for _, m := range merged {
		fmt.Printf("%s merged into %s\n", m.ID, m.Into)
	}
	its, _ := c.Get(ctx, "m1")
	n, _ := c.Count(ctx)
	fmt.Println(its[0].Text, n)
	// Output:
	// m2 merged into m1
	// prefers green tea 2
}
