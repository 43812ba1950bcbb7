// Package cairngenkit is a Genkit (github.com/firebase/genkit/go) vector
// store kept in a cairn collection: a retriever action, and an indexer
// that embeds documents with a Genkit embedder and stores them, with
// their text and metadata, in a cairn.DB (in memory or in one SQLite
// file). Its import path is github.com/cairndb/cairn/genkit; the package
// is named cairngenkit so as not to shadow Genkit's own package genkit.
//
// It follows Genkit's local vector store plugin, localvec: DefineRetriever
// registers the retriever (as "cairn/NAME") and returns the DocStore that
// [Index] fills; documents get the id localvec gives them (the MD5 of
// their JSON), so indexing a document twice stores it once.
//
//	g := genkit.Init(ctx)
//	ds, retriever, _ := cairngenkit.DefineRetriever(g, "docs", cairngenkit.Config{DB: db, Embedder: embedder}, nil)
//	_ = cairngenkit.Index(ctx, docs, ds)
//	res, _ := genkit.Retrieve(ctx, g, ai.WithRetriever(retriever), ai.WithTextDocs("what do cats eat?"),
//		ai.WithConfig(&cairngenkit.RetrieverOptions{K: 4, Filter: map[string]any{"lang": "en"}}))
//
// A retrieval takes [RetrieverOptions]: K, a Filter in the JSON language
// of cairn.ParseFilter (the one `cairn query -filter`, MCP and the
// langchaingo store take), and a ScoreThreshold on the cosine similarity.
// Each returned document carries its similarity in its metadata under
// [ScoreKey].
//
// Only text is stored: a document's text parts, joined, are its text. Its
// metadata values must be strings, numbers or booleans, as in cairn.
package cairngenkit

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
)

// Provider is the namespace of the retrievers this package defines: the
// retriever named NAME is registered as "cairn/NAME".
const Provider = "cairn"

// ScoreKey is the metadata key under which a retrieved document carries
// its similarity to the query (1 is identical under cosine).
const ScoreKey = "_score"

// DefaultK is the number of documents a retrieval returns without
// RetrieverOptions.K, as in localvec.
const DefaultK = 3

// The errors of this package, besides cairn's. Each wraps
// [vector.ErrInvalidOptions] but ErrWrongNumberOfVectors.
var (
	// ErrNoEmbedder is returned by DefineRetriever without an embedder.
	ErrNoEmbedder = fmt.Errorf("cairngenkit: no embedder: %w", vector.ErrInvalidOptions)
	// ErrInvalidOptions is returned for retriever options of a type other
	// than *RetrieverOptions, RetrieverOptions or a JSON object of them.
	ErrInvalidOptions = fmt.Errorf("cairngenkit: options must be a *RetrieverOptions: %w", vector.ErrInvalidOptions)
	// ErrInvalidFilter is returned for a filter that is not a
	// map[string]any, a JSON string or []byte, or a *cairn.Filter.
	ErrInvalidFilter = cairn.ErrFilterType
	// ErrNotText is returned for a document with a part that is not text.
	ErrNotText = fmt.Errorf("cairngenkit: only text documents can be indexed: %w", vector.ErrInvalidOptions)
	// ErrWrongNumberOfVectors is returned when the embedder returns a
	// number of embeddings other than the number of documents.
	ErrWrongNumberOfVectors = errors.New("cairngenkit: the embedder returned a wrong number of embeddings")
)

// Config configures a retriever and its DocStore.
//
// NewDocStore keeps a copy; EmbedderOptions is shared with it, so do not
// change what it refers to while the DocStore is in use.
type Config struct {
	// DB holds the documents; the DocStore does not own it. Required.
	DB *cairn.DB
	// Collection is the cairn collection of the documents, created on
	// first use. Default: the retriever's name.
	Collection string
	// CollectionConfig configures the collection when it is created; a
	// zero Dim takes the dimension of the first embedding.
	CollectionConfig cairn.CollectionConfig
	// Embedder embeds documents and queries. Required.
	Embedder ai.Embedder
	// EmbedderOptions are passed to the embedder with every request.
	EmbedderOptions any
}

// RetrieverOptions may be passed as the Options of an
// [ai.RetrieverRequest] (with ai.WithConfig): nil, a *RetrieverOptions,
// or its JSON form (as the Genkit developer UI sends it).
//
// A retrieval reads a copy of it, so one value may serve concurrent
// retrievals.
type RetrieverOptions struct {
	// K is how many documents to return at most. Default [DefaultK].
	K int `json:"k,omitempty"`
	// Filter keeps only documents whose metadata it matches: a filter in
	// the JSON language of cairn.ParseFilter, as a map[string]any (such as
	// {"year": {"$gte": 2020}}), a JSON string or []byte, or a
	// *cairn.Filter. nil, {} and "" are no filter.
	Filter any `json:"filter,omitempty"`
	// ScoreThreshold drops documents less similar to the query than this
	// value in [0, 1] (cairn's similarity; the cosine under its default
	// metric). Zero keeps every document.
	ScoreThreshold float64 `json:"scoreThreshold,omitempty"`
}

// DocStore holds a retriever's documents in a cairn collection. It is
// safe for concurrent use by multiple goroutines.
type DocStore struct {
	db              *cairn.DB
	name            string
	config          cairn.CollectionConfig
	embedder        ai.Embedder
	embedderOptions any

	mu sync.Mutex // serialises the creation of the collection
}

// DefineRetriever defines a retriever named name over cfg.DB, registers
// it with g as "cairn/name", and returns it with the DocStore that
// [Index] fills. opts may be nil; its ConfigSchema defaults to that of
// [RetrieverOptions].
func DefineRetriever(g *genkit.Genkit, name string, cfg Config, opts *ai.RetrieverOptions) (*DocStore, ai.Retriever, error) {
	ds, err := NewDocStore(name, cfg)
	if err != nil {
		return nil, nil, err
	}
	var o ai.RetrieverOptions // the caller's opts are read, not changed
	if opts != nil {
		o = *opts
	}
	if o.ConfigSchema == nil {
		o.ConfigSchema = core.InferSchemaMap(RetrieverOptions{})
	}
	return ds, genkit.DefineRetriever(g, api.NewName(Provider, name), &o, ds.Retrieve), nil
}

// Retriever returns the retriever named name, nil if none is defined.
func Retriever(g *genkit.Genkit, name string) ai.Retriever {
	return genkit.LookupRetriever(g, api.NewName(Provider, name))
}

// IsDefinedRetriever reports whether the retriever named name is defined.
func IsDefinedRetriever(g *genkit.Genkit, name string) bool {
	return Retriever(g, name) != nil
}

// NewDocStore returns the DocStore of a retriever named name without
// registering the retriever (DefineRetriever does both); its Retrieve
// method is an [ai.RetrieverFunc].
func NewDocStore(name string, cfg Config) (*DocStore, error) {
	if cfg.DB == nil {
		return nil, fmt.Errorf("cairngenkit: nil DB: %w", vector.ErrInvalidOptions)
	}
	if cfg.Embedder == nil {
		return nil, ErrNoEmbedder
	}
	coll := cfg.Collection
	if coll == "" {
		coll = name
	}
	if coll == "" {
		return nil, fmt.Errorf("cairngenkit: empty name: %w", vector.ErrInvalidOptions)
	}
	return &DocStore{db: cfg.DB, name: coll, config: cfg.CollectionConfig,
		embedder: cfg.Embedder, embedderOptions: cfg.EmbedderOptions}, nil
}

// Index embeds docs and stores them in ds in one write, all or nothing.
// Each document's id is the MD5 of its JSON form, as in localvec, and a
// document already stored is skipped (not embedded again). ScoreKey is
// the retriever's, not the document's: it is left out of what is stored
// and of the id, so a retrieved document indexed again is the one stored. A document
// that another call stores meanwhile is written again, the same.
func Index(ctx context.Context, docs []*ai.Document, ds *DocStore) error {
	return ds.Index(ctx, docs)
}

// Index is the package function [Index].
func (ds *DocStore) Index(ctx context.Context, docs []*ai.Document) error {
	// Ids first, dropping the documents already stored (or repeated).
	c, err := ds.collection(ctx)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(docs))
	var ids []string
	var todo []*ai.Document
	var texts []string
	for _, d := range docs {
		text, err := textOf(d)
		if err != nil {
			return err
		}
		d = unscored(d) // the caller's documents stay as they are
		id, err := DocID(d)
		if err != nil {
			return err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if c != nil {
			if _, err := c.Get(ctx, id); err == nil {
				continue
			} else if !errors.Is(err, vector.ErrNotFound) {
				return fmt.Errorf("cairngenkit: %w", err)
			}
		}
		ids, todo, texts = append(ids, id), append(todo, d), append(texts, text)
	}
	if len(todo) == 0 {
		return nil
	}
	vecs, err := ds.embed(ctx, todo, "documents")
	if err != nil {
		return err
	}
	items := make([]cairn.Item, len(todo))
	for i, d := range todo {
		items[i] = cairn.Item{ID: ids[i], Text: texts[i], Metadata: d.Metadata, Embedding: vecs[i]}
	}
	if c == nil {
		if c, err = ds.createCollection(ctx, items); err != nil {
			return err
		}
	}
	// Upsert: another call may have stored one of them since the check,
	// under the same id, so with the same content.
	if err := c.Upsert(ctx, items...); err != nil {
		return fmt.Errorf("cairngenkit: %w", err)
	}
	return nil
}

// Retrieve returns the documents nearest to req.Query, most similar first,
// each with its similarity under [ScoreKey]; it is the retriever's
// function. It honours [RetrieverOptions]. A collection that does not
// exist yet holds no documents.
func (ds *DocStore) Retrieve(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	o, err := retrieverOptions(req.Options)
	if err != nil {
		return nil, err
	}
	if o.K < 0 {
		return nil, fmt.Errorf("cairngenkit: %w: k = %d", vector.ErrInvalidK, o.K)
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if !(o.ScoreThreshold >= 0 && o.ScoreThreshold <= 1) { // NaN too
		return nil, fmt.Errorf("cairngenkit: score threshold %v is not in [0, 1]: %w", o.ScoreThreshold, vector.ErrInvalidOptions)
	}
	f, err := filterOf(o.Filter)
	if err != nil {
		return nil, err
	}
	qo := &cairn.QueryOptions{Filter: f}
	if o.ScoreThreshold > 0 {
		qo.MinSimilarity = new(o.ScoreThreshold)
	}
	if req.Query == nil {
		return nil, fmt.Errorf("cairngenkit: no query document: %w", vector.ErrInvalidOptions)
	}
	c, err := ds.collection(ctx)
	if err != nil || c == nil {
		return &ai.RetrieverResponse{Documents: []*ai.Document{}}, err
	}
	q, err := ds.embed(ctx, []*ai.Document{req.Query}, "query")
	if err != nil {
		return nil, err
	}
	found, err := c.Query(ctx, q[0], o.K, qo)
	if err != nil {
		return nil, fmt.Errorf("cairngenkit: %w", err)
	}
	docs := make([]*ai.Document, len(found))
	for i, r := range found {
		md := r.Metadata
		if md == nil {
			md = make(map[string]any, 1)
		}
		md[ScoreKey] = r.Similarity
		docs[i] = ai.DocumentFromText(r.Text, md)
	}
	return &ai.RetrieverResponse{Documents: docs}, nil
}

// Delete removes the documents with the given ids (see [DocID]), all or
// nothing: an unknown id is an error wrapping [vector.ErrNotFound].
func (ds *DocStore) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	c, err := ds.db.Collection(ctx, ds.name)
	if err == nil {
		err = c.Delete(ctx, ids...)
	}
	if err != nil {
		return fmt.Errorf("cairngenkit: delete: %w", err)
	}
	return nil
}

// DocID returns the id a document is stored under: the hex MD5 of its
// JSON form, as localvec (and Genkit's JavaScript dev store) computes it,
// without [ScoreKey] in its metadata. A document JSON cannot encode (NaN
// in its metadata, say) gives an error wrapping [vector.ErrInvalidOptions].
func DocID(d *ai.Document) (string, error) {
	b, err := json.Marshal(unscored(d))
	if err != nil { // a value JSON cannot hold: NaN, a channel
		return "", fmt.Errorf("cairngenkit: document: %w: %v", vector.ErrInvalidOptions, err)
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:]), nil
}

// unscored returns d without ScoreKey in its metadata: d itself if it
// has none, else a copy.
func unscored(d *ai.Document) *ai.Document {
	if d == nil {
		return nil
	}
	if _, ok := d.Metadata[ScoreKey]; !ok {
		return d
	}
	c := *d
	c.Metadata = maps.Clone(d.Metadata)
	delete(c.Metadata, ScoreKey)
	return &c
}

// textOf returns the text of d, its text parts joined.
func textOf(d *ai.Document) (string, error) {
	if d == nil {
		return "", fmt.Errorf("cairngenkit: nil document: %w", vector.ErrInvalidOptions)
	}
	var b strings.Builder
	for _, p := range d.Content {
		if !p.IsText() {
			return "", ErrNotText
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// collection returns the collection, or nil if it does not exist.
func (ds *DocStore) collection(ctx context.Context) (*cairn.Collection, error) {
	c, err := ds.db.Collection(ctx, ds.name)
	if errors.Is(err, vector.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cairngenkit: %w", err)
	}
	return c, nil
}

// embed returns the embeddings of docs (what, in errors), one each.
func (ds *DocStore) embed(ctx context.Context, docs []*ai.Document, what string) ([][]float32, error) {
	res, err := ds.embedder.Embed(ctx, &ai.EmbedRequest{Input: docs, Options: ds.embedderOptions})
	if err != nil {
		return nil, fmt.Errorf("cairngenkit: embedding: %w", err)
	}
	if res == nil || len(res.Embeddings) != len(docs) {
		n := 0
		if res != nil {
			n = len(res.Embeddings)
		}
		return nil, fmt.Errorf("%w: %d for %d %s", ErrWrongNumberOfVectors, n, len(docs), what)
	}
	vecs := make([][]float32, len(docs))
	for i, e := range res.Embeddings {
		if e == nil {
			return nil, fmt.Errorf("%w: none for %s %d", ErrWrongNumberOfVectors, what, i)
		}
		vecs[i] = e.Embedding
	}
	return vecs, nil
}

// createCollection returns the collection, creating it for items (of
// the dimension of the first's embedding) if each would be stored in it:
// a write it would refuse leaves no collection made for it.
func (ds *DocStore) createCollection(ctx context.Context, items []cairn.Item) (*cairn.Collection, error) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	c, err := ds.collection(ctx)
	if err != nil || c != nil {
		return c, err
	}
	cfg := ds.config
	if cfg.Dim == 0 {
		cfg.Dim = len(items[0].Embedding)
	}
	for i, it := range items {
		if err := cfg.CheckItem(it); err != nil {
			return nil, fmt.Errorf("cairngenkit: document %d: %w", i, err)
		}
	}
	c, err = ds.db.GetOrCreateCollection(ctx, ds.name, cfg) // another DocStore may create it meanwhile
	if err != nil {
		return nil, fmt.Errorf("cairngenkit: %w", err)
	}
	return c, nil
}

// retrieverOptions reads the Options of a request.
func retrieverOptions(v any) (RetrieverOptions, error) {
	switch o := v.(type) {
	case nil:
		return RetrieverOptions{}, nil
	case *RetrieverOptions:
		if o == nil {
			return RetrieverOptions{}, nil
		}
		return *o, nil
	case RetrieverOptions:
		return o, nil
	case map[string]any:
		// The JSON form, as the developer UI sends it. Numbers are read
		// as written, so that a filter keeps its integers exact.
		b, err := json.Marshal(o)
		if err != nil {
			return RetrieverOptions{}, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
		}
		var raw struct {
			K              int             `json:"k"`
			Filter         json.RawMessage `json:"filter"`
			ScoreThreshold float64         `json:"scoreThreshold"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return RetrieverOptions{}, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
		}
		ro := RetrieverOptions{K: raw.K, ScoreThreshold: raw.ScoreThreshold}
		if len(raw.Filter) > 0 {
			var s string
			if json.Unmarshal(raw.Filter, &s) == nil {
				ro.Filter = s // a filter given as a JSON string
			} else {
				ro.Filter = []byte(raw.Filter)
			}
		}
		return ro, nil
	}
	return RetrieverOptions{}, fmt.Errorf("%w (got %T)", ErrInvalidOptions, v)
}
