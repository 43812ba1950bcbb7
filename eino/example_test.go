package eino_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"log"
	"strings"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/eino"
	"github.com/cloudwego/eino/components/embedding"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

// An Eino retrieval flow over a cairn file: store documents with the
// Indexer, then run the Retriever as the node of a chain, with TopK and a
// filter. Any Eino embedder works (eino-ext's openai or ollama); this one
// hashes words, so that the example runs offline.
func ExampleRetriever() {
	ctx := context.Background()
	db := cairn.OpenMemory(nil) // or cairn.Open(ctx, "docs.db", nil)
	defer db.Close()
	idx, err := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: words{}})
	if err != nil {
		log.Fatal(err)
	}
	_, err = idx.Store(ctx, []*schema.Document{
		{ID: "1", Content: "Cats sleep most of the day", MetaData: map[string]any{"lang": "en", "year": 2024}},
		{ID: "2", Content: "Dogs need a walk every day", MetaData: map[string]any{"lang": "en", "year": 2019}},
		{ID: "3", Content: "Les chats dorment beaucoup", MetaData: map[string]any{"lang": "fr", "year": 2024}},
	})
	if err != nil {
		log.Fatal(err)
	}
	ret, err := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db, Embedding: words{}})
	if err != nil {
		log.Fatal(err)
	}
	chain, err := compose.NewChain[string, []*schema.Document]().AppendRetriever(ret).Compile(ctx)
	if err != nil {
		log.Fatal(err)
	}
	docs, err := chain.Invoke(ctx, "when do cats sleep", compose.WithRetrieverOption(
		retriever.WithTopK(2), eino.WithFilter(`{"year": {"$gte": 2020}}`)))
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range docs {
		fmt.Printf("%.2f %s %s (%s)\n", d.Score(), d.ID, d.Content, d.MetaData["lang"])
	}
	// Output:
	// 0.63 1 Cats sleep most of the day (en)
	// 0.50 3 Les chats dorment beaucoup (fr)
}

// words is a stand-in embedding.Embedder: a text's words hashed into 16
// buckets, so that texts sharing words are similar.
type words struct{}

func (words) EmbedStrings(_ context.Context, texts []string, _ ...embedding.Option) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = bagOfWords(t)
	}
	return out, nil
}

func bagOfWords(text string) []float64 {
	v := make([]float64, 16)
	empty := true
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,?!")))
		v[h.Sum32()%16]++
		empty = false
	}
	if empty {
		v[0] = 1
	}
	return v
}
