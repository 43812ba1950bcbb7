package cairngenkit_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"log"
	"strings"

	"github.com/cairndb/cairn"
	cairngenkit "github.com/cairndb/cairn/genkit"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// A Genkit retrieval flow over a cairn file: define a retriever, index
// documents, retrieve with K and a filter. Any Genkit embedder works
// (googlegenai's, ollama's); this one hashes words, so that the example
// runs offline.
func ExampleDefineRetriever() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	embedder := genkit.DefineEmbedder(g, "example/words", nil, func(_ context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		res := &ai.EmbedResponse{}
		for _, d := range req.Input {
			res.Embeddings = append(res.Embeddings, &ai.Embedding{Embedding: bagOfWords(d.Content[0].Text)})
		}
		return res, nil
	})
	db := cairn.OpenMemory(nil) // or cairn.Open(ctx, "docs.db", nil)
	defer db.Close()
	docStore, retriever, err := cairngenkit.DefineRetriever(g, "pets", cairngenkit.Config{DB: db, Embedder: embedder}, nil)
	if err != nil {
		log.Fatal(err)
	}
	err = cairngenkit.Index(ctx, []*ai.Document{
		ai.DocumentFromText("Cats sleep most of the day", map[string]any{"lang": "en", "year": 2024}),
		ai.DocumentFromText("Dogs need a walk every day", map[string]any{"lang": "en", "year": 2019}),
		ai.DocumentFromText("Les chats dorment beaucoup", map[string]any{"lang": "fr", "year": 2024}),
	}, docStore)
	if err != nil {
		log.Fatal(err)
	}
	res, err := genkit.Retrieve(ctx, g, ai.WithRetriever(retriever), ai.WithTextDocs("when do cats sleep"),
		ai.WithConfig(&cairngenkit.RetrieverOptions{K: 2, Filter: map[string]any{"year": map[string]any{"$gte": 2020}}}))
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range res.Documents {
		fmt.Printf("%.2f %s (%s)\n", d.Metadata[cairngenkit.ScoreKey], d.Content[0].Text, d.Metadata["lang"])
	}
	// Output:
	// 0.63 Cats sleep most of the day (en)
	// 0.50 Les chats dorment beaucoup (fr)
}

// bagOfWords embeds a text as its words hashed into 16 buckets, so that
// texts sharing words are similar; a text without words gets a basis
// vector.
func bagOfWords(text string) []float32 {
	v := make([]float32, 16)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,?!")))
		v[h.Sum32()%16]++
	}
	empty := true
	for _, x := range v {
		empty = empty && x == 0
	}
	if empty {
		v[0] = 1
	}
	return v
}
