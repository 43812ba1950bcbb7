package langchaingo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/langchaingo"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"
)

// A langchaingo vector store in a cairn file. Any langchaingo embedder
// works (openai.New(), ollama.New(...) wrapped by embeddings.NewEmbedder);
// this one hashes words, so that the example runs offline.
func ExampleStore() {
	ctx := context.Background()
	embedder, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = bagOfWords(t)
		}
		return out, nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	db := cairn.OpenMemory(nil) // or cairn.Open(ctx, "docs.db", nil)
	defer db.Close()
	store, err := langchaingo.New(db, embedder)
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.AddDocuments(ctx, []schema.Document{
		{PageContent: "Cats sleep most of the day", Metadata: map[string]any{"lang": "en"}},
		{PageContent: "Dogs need a walk every day", Metadata: map[string]any{"lang": "en"}},
		{PageContent: "Les chats dorment beaucoup", Metadata: map[string]any{"lang": "fr"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	found, err := store.SimilaritySearch(ctx, "when do cats sleep", 1,
		vectorstores.WithFilters(map[string]any{"lang": "en"}))
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range found {
		fmt.Printf("%.2f %s\n", d.Score, d.PageContent)
	}
	// Output:
	// 0.63 Cats sleep most of the day
}
