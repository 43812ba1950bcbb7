// Package langchaingo is a vector store for langchaingo
// (github.com/tmc/langchaingo) kept in a cairn collection: documents are
// embedded with a langchaingo embedder and stored, with their text and
// metadata, in a cairn.DB (in memory or in one SQLite file).
//
//	db, _ := cairn.Open(ctx, "docs.db", nil)
//	store, _ := langchaingo.New(db, embedder)
//	ids, _ := store.AddDocuments(ctx, docs)
//	found, _ := store.SimilaritySearch(ctx, "what do cats eat?", 4, vectorstores.WithFilters(map[string]any{"lang": "en"}))
//
// It honours the options of package vectorstores as langchaingo's own
// stores do: WithNameSpace names the collection (created on first use,
// with the embedder's dimension), or with [WithTenants] a tenant of the
// store's collection (a user's or a session's documents, kept apart, as
// langchaingo's Pinecone and Weaviate stores keep a namespace inside one
// index: a file holds many more tenants than collections), WithEmbedder replaces the store's
// embedder for one call, WithDeduplicater skips documents on adding,
// WithScoreThreshold drops results less similar than a value in [0, 1]
// (the cosine similarity under cairn's default metric), and WithFilters
// takes a filter in the JSON language of cairn.ParseFilter, the one that
// `cairn query -filter` and the MCP memory_search tool take and Chroma's
// where clause resembles: a map[string]any as langchaingo's chroma and
// pgvector stores take ({"lang": "en"} is an equality,
// {"year": {"$gte": 2020}} a range, {"$or": [...]} a disjunction), the
// same as a JSON string or []byte, or a *cairn.Filter.
//
// Metadata values must be strings, numbers or booleans, as in cairn;
// integers are kept exactly to int64, in metadata and in filters.
package langchaingo

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"
)

// DefaultCollection is the collection a Store uses without
// [WithCollection] or vectorstores.WithNameSpace.
const DefaultCollection = "langchaingo"

// The errors of a Store, besides cairn's (which wrap the sentinels of
// package vector). Each wraps [vector.ErrInvalidOptions] but
// ErrWrongNumberOfVectors.
var (
	// ErrInvalidScoreThreshold is returned when a score threshold is
	// outside [0, 1].
	ErrInvalidScoreThreshold = fmt.Errorf("langchaingo: score threshold must be between 0 and 1: %w", vector.ErrInvalidOptions)
	// ErrInvalidFilters is returned for filters that are not a
	// map[string]any, a JSON string or []byte, or a *cairn.Filter. A
	// filter of the right type but wrong content gives an error from
	// cairn.ParseFilter, which also wraps vector.ErrInvalidOptions.
	ErrInvalidFilters = cairn.ErrFilterType
	// ErrUnsupportedOptions is returned by AddDocuments given a score
	// threshold or filters, which only searches use.
	ErrUnsupportedOptions = fmt.Errorf("langchaingo: unsupported options: %w", vector.ErrInvalidOptions)
	// ErrNoEmbedder is returned when neither the Store nor the call has an
	// embedder.
	ErrNoEmbedder = fmt.Errorf("langchaingo: no embedder: %w", vector.ErrInvalidOptions)
	// ErrWrongNumberOfVectors is returned when the embedder returns a
	// number of vectors other than the number of texts.
	ErrWrongNumberOfVectors = errors.New("langchaingo: the embedder returned a wrong number of vectors")
)

// Store is a langchaingo vectorstores.VectorStore over a cairn DB. It is
// safe for concurrent use by multiple goroutines.
type Store struct {
	db       *cairn.DB
	embedder embeddings.Embedder
	name     string
	config   cairn.CollectionConfig
	tenants  bool // WithNameSpace names a tenant of the collection name

	mu sync.Mutex // serialises the creation of collections
}

var _ vectorstores.VectorStore = (*Store)(nil)

// Option configures a Store.
//
// An Option may be applied to any number of stores.
type Option func(*Store)

// WithCollection sets the collection used when a call does not name one
// with vectorstores.WithNameSpace. Default [DefaultCollection].
func WithCollection(name string) Option { return func(s *Store) { s.name = name } }

// WithTenants makes vectorstores.WithNameSpace name a tenant of the
// Store's collection ([WithCollection]) instead of a collection: each
// namespace's documents are apart from every other's, and cost no memory
// while unused (see cairn.Tenant). A call without a namespace uses the
// collection's own documents.
func WithTenants() Option { return func(s *Store) { s.tenants = true } }

// WithConfig sets the configuration of the collections the Store creates
// (metric, index); a zero Dim takes the dimension of the first embedding.
func WithConfig(cfg cairn.CollectionConfig) Option { return func(s *Store) { s.config = cfg } }

// New returns a Store keeping documents in db and embedding them with
// embedder (which may be nil if every call passes
// vectorstores.WithEmbedder). The Store does not own db: close it
// yourself.
func New(db *cairn.DB, embedder embeddings.Embedder, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("langchaingo: nil DB: %w", vector.ErrInvalidOptions)
	}
	s := &Store{db: db, embedder: embedder, name: DefaultCollection}
	for _, o := range opts {
		o(s)
	}
	if s.name == "" {
		return nil, fmt.Errorf("langchaingo: empty collection name: %w", vector.ErrInvalidOptions)
	}
	return s, nil
}

func options(opts []vectorstores.Option) vectorstores.Options {
	var o vectorstores.Options
	for _, f := range opts {
		f(&o)
	}
	return o
}

func (s *Store) collectionName(o vectorstores.Options) string {
	if o.NameSpace != "" {
		return o.NameSpace
	}
	return s.name
}

func (s *Store) embedderFor(o vectorstores.Options) (embeddings.Embedder, error) {
	if o.Embedder != nil {
		return o.Embedder, nil
	}
	if s.embedder == nil {
		return nil, ErrNoEmbedder
	}
	return s.embedder, nil
}

// collection returns the collection name, or nil if it does not exist.
func (s *Store) collection(ctx context.Context, name string) (*cairn.Collection, error) {
	c, err := s.db.Collection(ctx, name)
	if errors.Is(err, vector.ErrNotFound) {
		return nil, nil
	}
	return c, err
}

// docs is where a call's documents are: a collection or a tenant.
type docs interface {
	Add(ctx context.Context, items ...cairn.Item) error
	Query(ctx context.Context, embedding []float32, k int, o *cairn.QueryOptions) ([]cairn.Result, error)
	Delete(ctx context.Context, ids ...string) error
}

// docsFor returns where the documents of a call with options o are,
// creating them for items if items is not nil; nil, nil if they do not
// exist.
func (s *Store) docsFor(ctx context.Context, o vectorstores.Options, items []cairn.Item) (docs, error) {
	create := items != nil
	name, tenant := s.collectionName(o), ""
	if s.tenants {
		name, tenant = s.name, o.NameSpace
	}
	var (
		c   *cairn.Collection
		err error
	)
	if create {
		c, err = s.createCollection(ctx, name, items)
	} else {
		c, err = s.collection(ctx, name)
	}
	if err != nil || c == nil {
		return nil, err
	}
	if tenant == "" {
		return c, nil
	}
	t, err := c.Tenant(ctx, tenant)
	if create && errors.Is(err, vector.ErrNotFound) {
		// As for a collection: a write it would refuse makes no tenant.
		if err = check(c.Config(), items); err == nil {
			t, err = c.GetOrCreateTenant(ctx, tenant)
		}
	}
	if !create && errors.Is(err, vector.ErrNotFound) {
		return nil, nil
	}
	if err != nil { // for a write, ErrNotFound: the collection was deleted meanwhile
		return nil, err
	}
	return t, nil
}

// createCollection returns the collection name, creating it for items
// (of the dimension of the first's embedding) if each would be stored in
// it: a write it would refuse leaves no collection made for it.
func (s *Store) createCollection(ctx context.Context, name string, items []cairn.Item) (*cairn.Collection, error) {
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
	if err := check(cfg, items); err != nil {
		return nil, err
	}
	// Another Store on the DB may create it meanwhile.
	return s.db.GetOrCreateCollection(ctx, name, cfg)
}

// check returns the error a write of items under cfg would give for the
// first it refuses (its metadata, its embedding...), or nil.
func check(cfg cairn.CollectionConfig, items []cairn.Item) error {
	for i, it := range items {
		if err := cfg.CheckItem(it); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
	}
	return nil
}

// AddDocuments embeds docs and stores them in one write, all or nothing,
// under new random ids, which it returns in order. Documents the
// vectorstores.WithDeduplicater function reports as duplicates are
// skipped (and have no id in the result). It honours WithNameSpace and
// WithEmbedder; a score threshold or filters give [ErrUnsupportedOptions].
func (s *Store) AddDocuments(ctx context.Context, docs []schema.Document, opts ...vectorstores.Option) ([]string, error) {
	o := options(opts)
	if o.ScoreThreshold != 0 || o.Filters != nil {
		return nil, ErrUnsupportedOptions
	}
	if o.Deduplicater != nil {
		docs = slices.DeleteFunc(slices.Clone(docs), func(d schema.Document) bool { return o.Deduplicater(ctx, d) })
	}
	if len(docs) == 0 {
		return []string{}, nil
	}
	emb, err := s.embedderFor(o)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.PageContent
	}
	vecs, err := emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: embedding: %w", err)
	}
	if len(vecs) != len(docs) {
		return nil, fmt.Errorf("%w: %d for %d documents", ErrWrongNumberOfVectors, len(vecs), len(docs))
	}
	ids := make([]string, len(docs))
	items := make([]cairn.Item, len(docs))
	for i, d := range docs {
		ids[i] = newID()
		items[i] = cairn.Item{ID: ids[i], Embedding: vecs[i], Text: d.PageContent, Metadata: d.Metadata}
	}
	c, err := s.docsFor(ctx, o, items)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	if err := c.Add(ctx, items...); err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	return ids, nil
}

// SimilaritySearch returns up to numDocuments documents nearest to query,
// most similar first, each with its Score (the cairn similarity). It
// honours WithNameSpace, WithEmbedder, WithScoreThreshold (in [0, 1], else
// [ErrInvalidScoreThreshold]) and WithFilters (see the package doc; else
// [ErrInvalidFilters]; nil, an empty map and {} are no filter). A
// collection that does not exist yet holds no documents. numDocuments 0
// returns no documents, as langchaingo's pgvector store does (its LIMIT
// 0), after checking the options; a negative numDocuments is an error
// wrapping [vector.ErrInvalidK].
func (s *Store) SimilaritySearch(ctx context.Context, query string, numDocuments int, opts ...vectorstores.Option) ([]schema.Document, error) {
	o := options(opts)
	if !(o.ScoreThreshold >= 0 && o.ScoreThreshold <= 1) { // NaN too
		return nil, ErrInvalidScoreThreshold
	}
	f, err := filterOf(o.Filters)
	if err != nil {
		return nil, err
	}
	qo := &cairn.QueryOptions{Filter: f}
	if o.ScoreThreshold > 0 {
		qo.MinSimilarity = new(float64(o.ScoreThreshold))
	}
	if numDocuments < 0 {
		return nil, fmt.Errorf("langchaingo: %w: numDocuments = %d", vector.ErrInvalidK, numDocuments)
	}
	if numDocuments == 0 {
		return []schema.Document{}, nil
	}
	emb, err := s.embedderFor(o)
	if err != nil {
		return nil, err
	}
	c, err := s.docsFor(ctx, o, nil)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	if c == nil {
		return []schema.Document{}, nil
	}
	q, err := emb.EmbedQuery(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: embedding: %w", err)
	}
	res, err := c.Query(ctx, q, numDocuments, qo)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	docs := make([]schema.Document, len(res))
	for i, r := range res {
		docs[i] = schema.Document{PageContent: r.Text, Metadata: r.Metadata, Score: float32(r.Similarity)}
	}
	return docs, nil
}

// Delete removes the documents with the given ids (as AddDocuments
// returned them), all or nothing: an unknown id is an error wrapping
// [vector.ErrNotFound] and deletes nothing. It honours WithNameSpace.
func (s *Store) Delete(ctx context.Context, ids []string, opts ...vectorstores.Option) error {
	if len(ids) == 0 {
		return nil
	}
	o := options(opts)
	c, err := s.docsFor(ctx, o, nil)
	if err == nil && c == nil {
		err = fmt.Errorf("%q: %w", cmp.Or(o.NameSpace, s.name), vector.ErrNotFound)
	}
	if err == nil {
		err = c.Delete(ctx, ids...)
	}
	if err != nil {
		return fmt.Errorf("langchaingo: delete: %w", err)
	}
	return nil
}

// filterOf turns the value of vectorstores.WithFilters into a cairn
// filter with cairn.FilterOf, the reader of every door.
func filterOf(f any) (*cairn.Filter, error) {
	cf, err := cairn.FilterOf(f)
	if err != nil {
		return nil, fmt.Errorf("langchaingo: filters: %w", err)
	}
	return cf, nil
}

// newID returns a random id of 32 hex digits.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
