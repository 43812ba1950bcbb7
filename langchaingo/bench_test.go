package langchaingo_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/langchaingo"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/schema"
)

const benchDim, benchN = 384, 10000

// hashEmbed embeds a text as a pseudo-random vector seeded by its hash,
// a stand-in for a model that costs almost nothing.
func hashEmbed(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	v := make([]float32, benchDim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func hashEmbeddings(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = hashEmbed(s)
	}
	return out, nil
}

// benchStore returns a DB whose collection "langchaingo" holds benchN
// documents, and a Store over it.
func benchStore(b *testing.B) (*cairn.DB, *langchaingo.Store) {
	b.Helper()
	ctx := context.Background()
	db := cairn.OpenMemory(&cairn.Options{Embedder: cairn.EmbedderFunc(hashEmbeddings)})
	b.Cleanup(func() { db.Close() })
	emb, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(hashEmbeddings))
	if err != nil {
		b.Fatal(err)
	}
	s, err := langchaingo.New(db, emb)
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]schema.Document, benchN)
	for i := range docs {
		docs[i] = schema.Document{PageContent: fmt.Sprintf("document %d about topic %d", i, i%97), Metadata: map[string]any{"topic": i % 97}}
	}
	if _, err := s.AddDocuments(ctx, docs); err != nil {
		b.Fatal(err)
	}
	return db, s
}

// BenchmarkSimilaritySearch is the per-call cost of the store beside the
// bare API on benchN documents of benchDim dimensions (k = 4, exact
// search), with the same in-process embedder: bare is
// Collection.QueryText, store is Store.SimilaritySearch (without and with
// a filter).
func BenchmarkSimilaritySearch(b *testing.B) {
	ctx := context.Background()
	db, s := benchStore(b)
	c, err := db.Collection(ctx, langchaingo.DefaultCollection)
	if err != nil {
		b.Fatal(err)
	}
	query := func(i int) string { return fmt.Sprintf("what is topic %d", i%97) }
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := c.QueryText(ctx, query(i), 4, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.SimilaritySearch(ctx, query(i), 4); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkAddDocuments is the per-call cost of adding one document:
// bare Collection.Add of a text, against Store.AddDocuments.
func BenchmarkAddDocuments(b *testing.B) {
	ctx := context.Background()
	db, s := benchStore(b)
	c, err := db.Collection(ctx, langchaingo.DefaultCollection)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint("bare", i), Text: fmt.Sprint("a new document ", i)}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.AddDocuments(ctx, []schema.Document{{PageContent: fmt.Sprint("a new document ", i)}}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
