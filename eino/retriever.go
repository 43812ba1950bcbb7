package eino

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/embedding"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"
)

// DefaultTopK is the number of documents a retrieval returns without
// RetrieverConfig.TopK or retriever.WithTopK.
const DefaultTopK = 5

// RetrieverConfig configures a Retriever.
//
// NewRetriever keeps a copy; ScoreThreshold and Filter are shared with
// it, so do not change what they refer to while the Retriever is in use.
type RetrieverConfig struct {
	// DB holds the documents; the Retriever does not own it. Required.
	DB *cairn.DB
	// Collection is the cairn collection searched; retriever.WithIndex
	// names another for one call. Default [DefaultCollection].
	Collection string
	// TopK is how many documents to return at most; retriever.WithTopK
	// overrides it. Default [DefaultTopK].
	TopK int
	// ScoreThreshold, if set, drops documents less similar to the query
	// than it (a value in [0, 1]); retriever.WithScoreThreshold
	// overrides it.
	ScoreThreshold *float64
	// Filter, if set, keeps only documents whose metadata it matches (see
	// [WithFilter], which overrides it).
	Filter any
	// Embedding embeds the query; retriever.WithEmbedding replaces it for
	// one call. Required by then.
	Embedding embedding.Embedder
}

// Retriever is an Eino retriever.Retriever over a cairn collection. It is
// safe for concurrent use by multiple goroutines.
type Retriever struct {
	s   *store
	cfg RetrieverConfig
}

var _ retriever.Retriever = (*Retriever)(nil)

// NewRetriever returns a Retriever configured by cfg.
func NewRetriever(_ context.Context, cfg *RetrieverConfig) (*Retriever, error) {
	if cfg == nil {
		cfg = &RetrieverConfig{}
	}
	s, err := newStore(cfg.DB, cfg.Collection, cairn.CollectionConfig{})
	if err != nil {
		return nil, err
	}
	if cfg.TopK < 0 {
		return nil, fmt.Errorf("eino: %w: TopK = %d", vector.ErrInvalidK, cfg.TopK)
	}
	if _, err := filterOf(cfg.Filter); err != nil {
		return nil, err
	}
	return &Retriever{s: s, cfg: *cfg}, nil
}

// options are the Retriever's own call options.
type options struct {
	filter any
	set    bool
}

// WithFilter keeps only documents whose metadata filter matches: a filter
// in the JSON language of cairn.ParseFilter, as a map[string]any (such as
// {"year": {"$gte": 2020}}), a JSON string or []byte, or a *cairn.Filter.
// nil, {} and "" are no filter (and override the config's).
func WithFilter(filter any) retriever.Option {
	return retriever.WrapImplSpecificOptFn(func(o *options) { o.filter, o.set = filter, true })
}

// Retrieve returns the documents nearest to query, most similar first,
// each with its similarity as its Score. It honours retriever.WithTopK,
// WithScoreThreshold (in [0, 1]), WithIndex (the collection; "" for the
// configured one, as in the config),
// WithEmbedding and [WithFilter]; the sub-index and DSL options are
// ignored. A TopK below 1 is an error wrapping [vector.ErrInvalidK]. A
// collection that does not exist yet holds no documents.
func (r *Retriever) Retrieve(ctx context.Context, query string, opts ...retriever.Option) (docs []*schema.Document, err error) {
	topK := r.cfg.TopK
	if topK == 0 {
		topK = DefaultTopK
	}
	name := r.s.name
	o := retriever.GetCommonOptions(&retriever.Options{
		Index: &name, TopK: &topK, ScoreThreshold: r.cfg.ScoreThreshold, Embedding: r.cfg.Embedding,
	}, opts...)
	io := retriever.GetImplSpecificOptions(&options{filter: r.cfg.Filter}, opts...)

	ctx = callbacks.EnsureRunInfo(ctx, r.GetType(), components.ComponentOfRetriever)
	in := &retriever.CallbackInput{Query: query, TopK: *o.TopK, ScoreThreshold: o.ScoreThreshold}
	if s, ok := filterString(io.filter); ok {
		in.Filter = s
	}
	ctx = callbacks.OnStart(ctx, in)
	defer func() {
		if err != nil {
			callbacks.OnError(ctx, err)
		}
	}()

	if *o.TopK <= 0 {
		return nil, fmt.Errorf("eino: %w: TopK = %d", vector.ErrInvalidK, *o.TopK)
	}
	qo := &cairn.QueryOptions{}
	if t := o.ScoreThreshold; t != nil {
		if !(*t >= 0 && *t <= 1) { // NaN too
			return nil, fmt.Errorf("eino: score threshold %v is not in [0, 1]: %w", *t, vector.ErrInvalidOptions)
		}
		if *t > 0 {
			qo.MinSimilarity = new(*t)
		}
	}
	if qo.Filter, err = filterOf(io.filter); err != nil {
		return nil, err
	}
	if o.Embedding == nil {
		return nil, ErrNoEmbedding
	}
	docs = []*schema.Document{}
	index := *o.Index
	if index == "" {
		index = r.s.name
	}
	c, err := r.s.collection(ctx, index)
	if err != nil {
		return nil, err
	}
	if c != nil {
		vecs, err := embed(ctx, o.Embedding, []string{query})
		if err != nil {
			return nil, err
		}
		res, err := c.Query(ctx, vecs[0], *o.TopK, qo)
		if err != nil {
			return nil, fmt.Errorf("eino: %w", err)
		}
		for _, x := range res {
			d := &schema.Document{ID: x.ID, Content: x.Text, MetaData: x.Metadata}
			docs = append(docs, d.WithScore(x.Similarity))
		}
	}
	callbacks.OnEnd(ctx, &retriever.CallbackOutput{Docs: docs})
	return docs, nil
}

// GetType returns [Type].
func (r *Retriever) GetType() string { return Type }

// IsCallbacksEnabled reports true: Retrieve runs Eino's callbacks itself.
func (r *Retriever) IsCallbacksEnabled() bool { return true }

// filterString returns the JSON form of a filter, for the callbacks.
func filterString(f any) (string, bool) {
	switch f := f.(type) {
	case string:
		return f, f != ""
	case []byte:
		return string(f), len(f) > 0
	case json.RawMessage:
		return string(f), len(f) > 0
	case nil:
		return "", false
	}
	b, err := json.Marshal(f)
	return string(b), err == nil
}

// filterOf turns a filter given to WithFilter into a cairn filter,
// filter with cairn.FilterOf, the reader of every door.
func filterOf(f any) (*cairn.Filter, error) {
	cf, err := cairn.FilterOf(f)
	if err != nil {
		return nil, fmt.Errorf("eino: filter: %w", err)
	}
	return cf, nil
}
