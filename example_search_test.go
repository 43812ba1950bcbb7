package cairn_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cairndb/cairn"
)

// Hybrid search: the vector list finds what is near the query's meaning,
// the keyword list what holds its exact words (a name, an error code that
// embeddings blur), and reciprocal rank fusion ranks by both.
func ExampleCollection_Query_hybrid() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 2})
	c.Add(ctx,
		cairn.Item{ID: "db-down", Text: "the database is down", Embedding: []float32{1, 0.1}},
		cairn.Item{ID: "db-slow", Text: "the database is slow", Embedding: []float32{1, 0.2}},
		cairn.Item{ID: "e4711", Text: "deploy failed: error E4711", Embedding: []float32{0.2, 1}},
	)
	q := []float32{1, 0} // an embedding of "why did the database fail with E4711?"

	vec, _ := c.Query(ctx, q, 2, nil)
	fmt.Println("vector:")
	for _, r := range vec {
		fmt.Printf("  %-8s vector rank %d\n", r.ID, r.VectorRank)
	}

	hyb, _ := c.Query(ctx, q, 2, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "E4711", Fusion: &cairn.Fusion{Window: 2}})
	fmt.Println("hybrid:")
	for _, r := range hyb {
		fmt.Printf("  %-8s vector rank %d, keyword rank %d, score %.4f\n", r.ID, r.VectorRank, r.KeywordRank, r.Score)
	}

	// Case and diacritics do not matter; a word most items hold weighs
	// next to nothing (BM25's idf, floored at 1e-6 as FTS5 does).
	kw, _ := c.QueryText(ctx, "DATABASE slow", 3, &cairn.QueryOptions{Mode: cairn.KeywordMode})
	fmt.Println("keyword:")
	for _, r := range kw {
		fmt.Printf("  %-8s BM25 %.3f\n", r.ID, r.KeywordScore)
	}
	// Output:
	// vector:
	//   db-down  vector rank 1
	//   db-slow  vector rank 2
	// hybrid:
	//   db-down  vector rank 1, keyword rank 0, score 0.0164
	//   e4711    vector rank 0, keyword rank 1, score 0.0164
	// keyword:
	//   db-slow  BM25 0.511
	//   db-down  BM25 0.000
}

// MMR trades relevance for diversity: near copies of the best result make
// way for something different.
func ExampleMMR() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 2})
	c.Add(ctx,
		cairn.Item{ID: "a", Embedding: []float32{1, 0.01}},
		cairn.Item{ID: "a-copy", Embedding: []float32{1, 0.02}},
		cairn.Item{ID: "b", Embedding: []float32{0.6, 0.8}},
	)
	plain, _ := c.Query(ctx, []float32{1, 0}, 2, nil)
	diverse, _ := c.Query(ctx, []float32{1, 0}, 2, &cairn.QueryOptions{MMR: &cairn.MMR{Lambda: 0.3}})
	fmt.Println(ids(plain), ids(diverse))
	// Output: [a a-copy] [a b]
}

// Recency ranks an agent's memories as generative agents do: relevance ×
// recency × importance. The closest memory is a month old, so a newer one
// that matters comes first.
func ExampleRecency() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: 2})
	now := time.Now()
	c.Add(ctx,
		cairn.Item{ID: "old-plan", Text: "the user plans a trip to Lisbon", Embedding: []float32{1, 0},
			UpdatedAt: now.Add(-30 * 24 * time.Hour), CreatedAt: now.Add(-30 * 24 * time.Hour)},
		cairn.Item{ID: "new-plan", Text: "the trip moved to Porto", Embedding: []float32{1, 0.4},
			Metadata: map[string]any{"importance": 0.9}},
		cairn.Item{ID: "aside", Text: "the user likes green tea", Embedding: []float32{0.3, 1},
			Metadata: map[string]any{"importance": 0.05}},
	)
	q := []float32{1, 0.1} // "where is the user travelling?"

	plain, _ := c.Query(ctx, q, 2, nil)
	recent, _ := c.Query(ctx, q, 2, &cairn.QueryOptions{Recency: &cairn.Recency{HalfLife: 7 * 24 * time.Hour, Importance: "importance"}})
	fmt.Println("by similarity:", plain[0].ID, plain[1].ID)
	fmt.Println("by relevance × recency × importance:", recent[0].ID, recent[1].ID)
	// Output:
	// by similarity: old-plan new-plan
	// by relevance × recency × importance: new-plan old-plan
}
