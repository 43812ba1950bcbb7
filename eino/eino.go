// Package eino gives Eino (github.com/cloudwego/eino) an indexer and a
// retriever over a cairn collection: an [Indexer] (indexer.Indexer) that
// embeds documents with an Eino embedder and stores them, with their
// content and metadata, in a cairn.DB (in memory or in one SQLite file),
// and a [Retriever] (retriever.Retriever) that finds them again. Both run
// Eino's callbacks themselves, as the stores of eino-ext do, and can be
// nodes of a compose graph or chain.
//
//	idx, _ := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: embedder})
//	ids, _ := idx.Store(ctx, docs)
//	ret, _ := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db, Embedding: embedder})
//	found, _ := ret.Retrieve(ctx, "what do cats eat?", retriever.WithTopK(4), eino.WithFilter(`{"lang": "en"}`))
//
// Eino's common options map onto cairn's: retriever.WithTopK is k,
// retriever.WithScoreThreshold the least similarity (cairn's, the cosine
// under its default metric), retriever.WithIndex and the configs'
// Collection name the cairn collection, and WithEmbedding replaces the
// embedder for one call. [WithFilter] takes a filter in the JSON language
// of cairn.ParseFilter, the one `cairn query -filter`, MCP and the
// langchaingo and Genkit stores take. Retrieved documents carry their
// similarity as their Score (schema.Document.Score).
//
// A document's ID is its cairn id (one is generated for a document
// without); Store replaces a document stored under the same id. Its
// metadata values must be strings, numbers or booleans, as in cairn;
// Eino's own keys that hold no such value (the score, dense and sparse
// vectors, sub-indexes, DSL) are not stored.
package eino

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/embedding"
)

// Type is what GetType returns for the Indexer and the Retriever, which
// Eino's callbacks report.
const Type = "Cairn"

// DefaultCollection is the collection used without a Collection in the
// config or retriever.WithIndex.
const DefaultCollection = "eino"

// The errors of this package, besides cairn's. Each wraps
// [vector.ErrInvalidOptions] but ErrWrongNumberOfVectors.
var (
	// ErrNoEmbedding is returned when neither the config nor the call
	// gives an embedder.
	ErrNoEmbedding = fmt.Errorf("eino: no embedding: %w", vector.ErrInvalidOptions)
	// ErrSubIndexes is returned by Store given sub-indexes: a cairn
	// collection has one index.
	ErrSubIndexes = fmt.Errorf("eino: sub-indexes are not supported: %w", vector.ErrInvalidOptions)
	// ErrInvalidFilter is returned for a filter that is not a
	// map[string]any, a JSON string or []byte, or a *cairn.Filter.
	ErrInvalidFilter = cairn.ErrFilterType
	// ErrWrongNumberOfVectors is returned when the embedder returns a
	// number of vectors other than the number of texts.
	ErrWrongNumberOfVectors = errors.New("eino: the embedder returned a wrong number of vectors")
)

// store is what the Indexer and the Retriever share: the DB and the
// collection's creation.
type store struct {
	db     *cairn.DB
	name   string
	config cairn.CollectionConfig

	mu sync.Mutex // serialises the creation of collections
}

func newStore(db *cairn.DB, name string, cfg cairn.CollectionConfig) (*store, error) {
	if db == nil {
		return nil, fmt.Errorf("eino: nil DB: %w", vector.ErrInvalidOptions)
	}
	if name == "" {
		name = DefaultCollection
	}
	return &store{db: db, name: name, config: cfg}, nil
}

// collection returns the collection name, or nil if it does not exist.
func (s *store) collection(ctx context.Context, name string) (*cairn.Collection, error) {
	c, err := s.db.Collection(ctx, name)
	if errors.Is(err, vector.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eino: %w", err)
	}
	return c, nil
}

// createCollection returns the collection name, creating it for items
// (of the dimension of the first's embedding) if each would be stored in
// it: a write it would refuse leaves no collection made for it.
func (s *store) createCollection(ctx context.Context, name string, items []cairn.Item) (*cairn.Collection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collection(ctx, name)
	if err != nil || c != nil {
		return c, err
	}
	cfg := s.config
	if cfg.Dim == 0 {
		cfg.Dim = len(items[0].Embedding)
	}
	for i, it := range items {
		if err := cfg.CheckItem(it); err != nil {
			return nil, fmt.Errorf("eino: document %d: %w", i, err)
		}
	}
	c, err = s.db.GetOrCreateCollection(ctx, name, cfg) // another Indexer may create it meanwhile
	if err != nil {
		return nil, fmt.Errorf("eino: %w", err)
	}
	return c, nil
}

// embed embeds texts, as float32s, running the embedder's callbacks.
func embed(ctx context.Context, emb embedding.Embedder, texts []string) ([][]float32, error) {
	if emb == nil {
		return nil, ErrNoEmbedding
	}
	vecs, err := emb.EmbedStrings(embeddingContext(ctx, emb), texts)
	if err != nil {
		return nil, fmt.Errorf("eino: embedding: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%w: %d for %d texts", ErrWrongNumberOfVectors, len(vecs), len(texts))
	}
	out := make([][]float32, len(vecs))
	for i, v := range vecs {
		out[i] = make([]float32, len(v))
		for j, x := range v {
			out[i][j] = float32(x)
		}
	}
	return out, nil
}

// embeddingContext gives the embedder's callbacks their own run info, as
// eino-ext's stores do when they call an embedder.
func embeddingContext(ctx context.Context, emb embedding.Embedder) context.Context {
	info := &callbacks.RunInfo{Component: components.ComponentOfEmbedding}
	if typ, ok := components.GetType(emb); ok {
		info.Type = typ
	}
	info.Name = info.Type + string(info.Component)
	return callbacks.ReuseHandlers(ctx, info)
}

// newID returns a random id of 32 hex digits.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
