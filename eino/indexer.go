package eino

import (
	"context"
	"fmt"
	"maps"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/embedding"
	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/schema"
)

// IndexerConfig configures an Indexer.
//
// NewIndexer reads it once: changing it later changes no Indexer.
type IndexerConfig struct {
	// DB holds the documents; the Indexer does not own it. Required.
	DB *cairn.DB
	// Collection is the cairn collection the documents go to, created on
	// first use. Default [DefaultCollection].
	Collection string
	// CollectionConfig configures the collection when it is created; a
	// zero Dim takes the dimension of the first embedding.
	CollectionConfig cairn.CollectionConfig
	// Embedding embeds the documents' content; indexer.WithEmbedding
	// replaces it for one call. Required by then.
	Embedding embedding.Embedder
}

// Indexer is an Eino indexer.Indexer over a cairn collection. It is safe
// for concurrent use by multiple goroutines.
type Indexer struct {
	s   *store
	emb embedding.Embedder
}

var (
	_ indexer.Indexer    = (*Indexer)(nil)
	_ components.Typer   = (*Indexer)(nil)
	_ components.Checker = (*Indexer)(nil)
	_ components.Typer   = (*Retriever)(nil)
	_ components.Checker = (*Retriever)(nil)
)

// NewIndexer returns an Indexer configured by cfg.
func NewIndexer(_ context.Context, cfg *IndexerConfig) (*Indexer, error) {
	if cfg == nil {
		cfg = &IndexerConfig{}
	}
	s, err := newStore(cfg.DB, cfg.Collection, cfg.CollectionConfig)
	if err != nil {
		return nil, err
	}
	return &Indexer{s: s, emb: cfg.Embedding}, nil
}

// Store embeds docs' content and stores them in one write, all or
// nothing, under their IDs (a new random id for a document without one),
// which it returns in order; a document stored under the same id is
// replaced. It honours indexer.WithEmbedding; indexer.WithSubIndexes
// gives [ErrSubIndexes].
func (i *Indexer) Store(ctx context.Context, docs []*schema.Document, opts ...indexer.Option) (ids []string, err error) {
	o := indexer.GetCommonOptions(&indexer.Options{Embedding: i.emb}, opts...)
	ctx = callbacks.EnsureRunInfo(ctx, i.GetType(), components.ComponentOfIndexer)
	ctx = callbacks.OnStart(ctx, &indexer.CallbackInput{Docs: docs})
	defer func() {
		if err != nil {
			callbacks.OnError(ctx, err)
		}
	}()
	if len(o.SubIndexes) > 0 {
		return nil, ErrSubIndexes
	}
	ids = make([]string, len(docs))
	texts := make([]string, len(docs))
	for k, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("eino: document %d is nil: %w", k, vector.ErrInvalidOptions)
		}
		ids[k], texts[k] = d.ID, d.Content
		if ids[k] == "" {
			ids[k] = newID()
		}
	}
	if len(docs) > 0 {
		vecs, err := embed(ctx, o.Embedding, texts)
		if err != nil {
			return nil, err
		}
		items := make([]cairn.Item, len(docs))
		for k, d := range docs {
			items[k] = cairn.Item{ID: ids[k], Text: d.Content, Metadata: storedMetadata(d.MetaData), Embedding: vecs[k]}
		}
		c, err := i.s.createCollection(ctx, i.s.name, items)
		if err != nil {
			return nil, err
		}
		if err := c.Upsert(ctx, items...); err != nil {
			return nil, fmt.Errorf("eino: %w", err)
		}
	}
	callbacks.OnEnd(ctx, &indexer.CallbackOutput{IDs: ids})
	return ids, nil
}

// einoKeys are the metadata keys Eino's schema.Document keeps for itself
// whose values are no scalars (or, the score, are the retriever's).
var einoKeys = []string{"_score", "_dense_vector", "_sparse_vector", "_sub_indexes", "_dsl"}

// storedMetadata returns md without einoKeys.
func storedMetadata(md map[string]any) map[string]any {
	drop := false
	for _, k := range einoKeys {
		_, ok := md[k]
		drop = drop || ok
	}
	if !drop {
		return md
	}
	md = maps.Clone(md)
	for _, k := range einoKeys {
		delete(md, k)
	}
	return md
}

// GetType returns [Type].
func (i *Indexer) GetType() string { return Type }

// IsCallbacksEnabled reports true: Store runs Eino's callbacks itself.
func (i *Indexer) IsCallbacksEnabled() bool { return true }
