package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/openai"
)

// An Embedder gives a cairn store its vectors, so that items are added and
// queried by text. A real program points BaseURL at OpenAI (the default,
// with an APIKey) or at a local server such as Ollama
// (http://localhost:11434/v1); this one starts a stand-in that embeds a
// text as the counts of three words.
func ExampleEmbedder() {
	srv := httptest.NewServer(http.HandlerFunc(countWords))
	defer srv.Close()
	emb := &openai.Embedder{
		BaseURL: srv.URL, // or "http://localhost:11434/v1" for Ollama
		Model:   "nomic-embed-text",
		// APIKey: os.Getenv("OPENAI_API_KEY"),
	}

	ctx := context.Background()
	db := cairn.OpenMemory(&cairn.Options{Embedder: emb})
	defer db.Close()
	notes, err := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	err = notes.Add(ctx,
		cairn.Item{ID: "1", Text: "the cat sleeps; the cat purrs"},
		cairn.Item{ID: "2", Text: "green tea, then more tea"},
	)
	if err != nil {
		log.Fatal(err)
	}
	hits, err := notes.QueryText(ctx, "a cup of tea", 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hits[0].Text)
	// Output:
	// green tea, then more tea
}

// countWords answers like an /embeddings endpoint, embedding each text as
// the counts of "cat", "dog" and "tea" in it.
func countWords(w http.ResponseWriter, r *http.Request) {
	var req struct{ Input []string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	type datum struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var resp struct {
		Data []datum `json:"data"`
	}
	for i, text := range req.Input {
		v := make([]float32, 3)
		for j, word := range []string{"cat", "dog", "tea"} {
			v[j] = float32(strings.Count(text, word)) + 0.01
		}
		resp.Data = append(resp.Data, datum{i, v})
	}
	json.NewEncoder(w).Encode(resp)
}
