package cairn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// Item is one thing remembered: the caller's id, its embedding, and
// optional text and metadata.
//
// Metadata values must be strings, booleans or numbers (any Go integer or
// float type; they are stored, compared and returned as float64, so
// integers beyond 2⁵³ lose precision). Other types, and NaN or infinite
// numbers, are rejected with an error wrapping [vector.ErrInvalidOptions].
type Item struct {
	// ID is the caller's identifier, unique in the collection. Required.
	ID string
	// Embedding is the item's vector. If it is empty and Text is not, the
	// store's Embedder computes it from Text. Items returned by
	// [Collection.Get] carry the stored form: unit length under Cosine.
	Embedding []float32
	// Text is the remembered text, returned with the item.
	Text string
	// Metadata holds attributes that queries can filter on.
	Metadata map[string]any
}

// Result is one hit of a query.
type Result struct {
	ID       string         // the item's id
	Text     string         // the item's text
	Metadata map[string]any // a copy of the item's metadata
	// Distance is the metric's distance from the query (smaller is
	// closer): 1 − cos for Cosine, the negated inner product for Dot, the
	// squared Euclidean distance for L2.
	Distance float64
	// Similarity is larger for closer items: the cosine similarity, in
	// [−1, 1], for Cosine (whatever the lengths of the vectors given); the
	// raw inner product for Dot; 1 / (1 + ‖q − v‖), in (0, 1], for L2.
	Similarity float64
}

// QueryOptions refine a query. A nil *QueryOptions means the zero value.
type QueryOptions struct {
	// Filter, if non-nil, restricts results to items whose metadata it
	// matches. It is applied during the search, so a query returns k
	// results whenever k items match.
	Filter *Filter
	// MinSimilarity, if non-nil, drops results whose Similarity is below
	// it (so fewer than k may come back). Set it with new(0.8).
	MinSimilarity *float64
	// Ef, if positive, is the HNSW beam width for this query (default
	// the collection's HNSW.EfSearch): larger is slower and finds more of
	// the true nearest. Exact search ignores it.
	Ef int
}

// Collection is a named set of items of one dimension and metric, with its
// search index. Get one from [DB.CreateCollection] or [DB.Collection].
//
// A Collection is safe for concurrent use by multiple goroutines: queries,
// reads and writes all run in parallel, writes of different ids share
// commits, and writes of the same id run one after the other (see
// "Concurrent writes" in the package documentation).
type Collection struct {
	db   *DB
	name string
	cfg  CollectionConfig
	be   backend
	st   vector.Store

	// wmu is held shared by every write for its whole length, and
	// exclusively by what must not overlap any write: the graph build of
	// an Auto switch and shut. idx changes only under both wmu and mu, so
	// a writer holding wmu may use it without mu.
	//
	// mu guards the fields below. Writers hold it exclusively only to
	// reserve their ids and to publish (or abandon) their changes, never
	// across the durable write, so queries run during commits.
	wmu   sync.RWMutex
	mu    sync.RWMutex
	idx   vector.Index
	kind  IndexKind // the index in use: Flat or HNSW
	dirty bool      // the graph changed since it was loaded or saved
	payloads
	inflight
	next vector.ID
	err  error // set once the collection is closed or deleted
}

var errDropped = fmt.Errorf("cairn: collection deleted: %w", vector.ErrNotFound)

// newCollection loads the rows of be and builds the index.
func newCollection(ctx context.Context, db *DB, name string, cfg CollectionConfig, be backend) (*Collection, error) {
	c := &Collection{
		db: db, name: name, cfg: cfg, be: be, st: be.store(),
		payloads: newPayloads(),
		inflight: newInflight(),
		next:     1,
	}
	var ids []vector.ID
	err := be.load(ctx, func(r row) error {
		if r.key == "" || r.id == 0 || c.recs.get(r.id) != nil {
			return fmt.Errorf("%w: item %d (%q) has a missing key, id 0 or a repeated id", vector.ErrCorrupt, r.id, r.key)
		}
		if _, dup := c.keys.add(r.key, r.id, c); dup {
			return fmt.Errorf("%w: item %d has a repeated key %q", vector.ErrCorrupt, r.id, r.key)
		}
		c.put(&record{id: r.id, key: r.key, text: r.text, md: r.md})
		c.next = max(c.next, r.id+1)
		ids = append(ids, r.id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	kind := cfg.initialKind(len(ids))
	idx, err := newIndex(kind, cfg, c.st)
	if err != nil {
		return nil, err
	}
	if g, ok := idx.(graph); ok && len(ids) > 0 {
		if err := be.loadGraph(ctx, g); err != nil {
			// No saved graph, or a stale or damaged one: rebuild from
			// the items, which are the source of truth.
			if idx, err = newIndex(kind, cfg, c.st); err != nil {
				return nil, err
			}
			if err := track(ctx, idx, ids); err != nil {
				return nil, err
			}
			c.dirty = true
		}
	} else if err := track(ctx, idx, ids); err != nil {
		return nil, err
	}
	c.idx, c.kind = idx, kind
	return c, nil
}

// track tells idx about ids already in its store; an index without
// [vector.Tracker] (flat) searches the store directly and needs no telling.
func track(ctx context.Context, idx vector.Index, ids []vector.ID) error {
	if tr, ok := idx.(vector.Tracker); ok && len(ids) > 0 {
		return tr.Track(ctx, ids)
	}
	return nil
}

func untrack(ctx context.Context, idx vector.Index, ids []vector.ID) error {
	if tr, ok := idx.(vector.Tracker); ok && len(ids) > 0 {
		return tr.Untrack(ctx, ids)
	}
	return nil
}

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// Config returns the collection's configuration, defaults filled in.
func (c *Collection) Config() CollectionConfig { return c.cfg }

// Info describes the collection: its name, configuration, size and the
// index in use (Flat or HNSW; an Auto collection reports which).
func (c *Collection) Info() CollectionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return CollectionInfo{Name: c.name, Config: c.cfg, Count: c.len(), Index: c.kind}
}

// Count returns the number of items in the collection (0 once it is closed
// or deleted).
func (c *Collection) Count() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.len()
}

// Add stores items, all or nothing. It returns an error wrapping
// [vector.ErrDuplicateID] if an id is already in the collection or repeated
// in items, [vector.ErrEmptyID] for an empty id, the errors of
// [vector.Check] for a bad embedding ([vector.ErrDimensionMismatch],
// [vector.ErrNonFinite], [vector.ErrZeroVector]), [vector.ErrInvalidOptions]
// for bad metadata, and [ErrNoEmbedder] for an item given only as text
// when the store has no embedder. On error nothing is stored.
//
// Items without an embedding are embedded from their text, all in one call
// to the embedder, before the collection is locked. In a collection kept in
// memory, an Add of a few hundred items or more checks its ids and
// metadata on a second goroutine while the vectors are copied in, when
// GOMAXPROCS allows.
func (c *Collection) Add(ctx context.Context, items ...Item) error {
	return c.write(ctx, "add", items, false)
}

// Upsert stores items, replacing (embedding, text and metadata) those whose
// ids are already in the collection, all or nothing. It returns the errors
// of [Collection.Add] except [vector.ErrDuplicateID] for a stored id (an id
// repeated within items is still an error).
func (c *Collection) Upsert(ctx context.Context, items ...Item) error {
	return c.write(ctx, "upsert", items, true)
}

// prepare validates items and turns them into rows (ids not yet assigned),
// embedding the ones given only as text. Upserts check every vector here,
// before anything is taken out of the index; for Add the store's own
// all-or-nothing validation is enough.
//
// The rows' metadata is normalised here too, unless the Add takes the
// route of addAhead (see addsAhead): then the returned function does it.
func (c *Collection) prepare(ctx context.Context, op string, items []Item, check bool) ([]row, func() ([]metadata, error), error) {
	if err := c.usable(); err != nil {
		return nil, nil, err
	}
	rows := make([]row, len(items))
	var toEmbed []int
	for i, it := range items {
		if it.ID == "" {
			return nil, nil, fmt.Errorf("cairn: %s: item %d: %w", op, i, vector.ErrEmptyID)
		}
		rows[i] = row{key: it.ID, vec: it.Embedding, text: it.Text}
		if len(it.Embedding) == 0 && it.Text != "" {
			toEmbed = append(toEmbed, i)
		}
	}
	meta := func() ([]metadata, error) { return normalizeBatch(op, items) }
	if check || len(toEmbed) > 0 || !c.addsAhead(len(items)) {
		mds, err := meta()
		if err != nil {
			return nil, nil, err
		}
		setMetadata(rows, mds)
		meta = nil
	}
	if len(toEmbed) > 0 {
		// An id repeated in items is found when the write reserves its
		// ids; look for one now only to spare the embedder a batch that
		// will be refused.
		seen := make(map[string]struct{}, len(items))
		for _, it := range items {
			if _, dup := seen[it.ID]; dup {
				return nil, nil, fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", op, it.ID, vector.ErrDuplicateID)
			}
			seen[it.ID] = struct{}{}
		}
		texts := make([]string, len(toEmbed))
		for j, i := range toEmbed {
			texts[j] = items[i].Text
		}
		vs, err := c.embed(ctx, texts)
		if err != nil {
			return nil, nil, fmt.Errorf("cairn: %s %q: %w", op, items[toEmbed[0]].ID, err)
		}
		for j, i := range toEmbed {
			rows[i].vec = vs[j]
		}
	}
	if check {
		for _, r := range rows {
			if err := vector.Check(r.vec, c.cfg.Dim, c.cfg.Metric); err != nil {
				return nil, nil, fmt.Errorf("cairn: %s %q: %w", op, r.key, err)
			}
		}
	}
	return rows, meta, nil
}

// aheadMin is the batch size from which an Add to memory stores its
// vectors while another goroutine checks its ids and metadata (see
// addAhead).
const aheadMin = 256

// addsAhead reports whether an Add of n items takes the route of
// addAhead: the backend must not need the metadata to store the vectors
// (the in-memory one does not; a file stores it in the same transaction),
// the batch must be large enough to pay for a goroutine, and there must
// be a CPU to run it on.
func (c *Collection) addsAhead(n int) bool {
	_, mem := c.be.(*memBackend)
	return mem && n >= aheadMin && runtime.GOMAXPROCS(0) > 1
}

// normalizeBatch returns the metadata of items in its stored form, the
// whole batch's in one allocation.
func normalizeBatch(op string, items []Item) ([]metadata, error) {
	n := 0
	for _, it := range items {
		n += len(it.Metadata)
	}
	mds := make([]metadata, len(items))
	slab := make(metadata, 0, n)
	for i, it := range items {
		start := len(slab)
		var err error
		if slab, err = appendMetadata(slab, it.Metadata); err != nil {
			return nil, fmt.Errorf("cairn: %s %q: %w", op, it.ID, err)
		}
		if len(slab) > start {
			mds[i] = slab[start:len(slab):len(slab)]
		}
	}
	return mds, nil
}

// setMetadata gives each row its metadata.
func setMetadata(rows []row, mds []metadata) {
	for i := range rows {
		rows[i].md = mds[i]
	}
}

// explain turns a store's error about a batch into one that names the
// caller's id rather than the internal number.
func (c *Collection) explain(op string, rows []row, err error) error {
	for _, r := range rows {
		if cerr := vector.Check(r.vec, c.cfg.Dim, c.cfg.Metric); cerr != nil {
			return fmt.Errorf("cairn: %s %q: %w", op, r.key, cerr)
		}
	}
	return fmt.Errorf("cairn: %s: %w", op, err)
}

// embed calls the store's embedder and checks it returned one vector per
// text.
func (c *Collection) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.db.emb == nil {
		return nil, ErrNoEmbedder
	}
	vs, err := c.db.emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("embedding: embedder returned %d vectors for %d texts", len(vs), len(texts))
	}
	return vs, nil
}

// usable returns the error every call returns once the collection is
// closed or deleted.
func (c *Collection) usable() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.err
}

// Get returns the items with the given ids, in order, or an error wrapping
// [vector.ErrNotFound] naming the first id not in the collection.
func (c *Collection) Get(ctx context.Context, ids ...string) ([]Item, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	out := make([]Item, len(ids))
	for i, key := range ids {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("cairn: get: %w", err)
			}
		}
		id, _ := c.keys.get(key, c)
		r := c.recs.get(id)
		if r == nil { // no such key, or one a write in flight creates
			return nil, fmt.Errorf("cairn: get %q: %w", key, vector.ErrNotFound)
		}
		v, err := c.vectorOf(id)
		if err != nil {
			return nil, fmt.Errorf("cairn: get %q: %w", key, err)
		}
		out[i] = Item{ID: key, Embedding: slices.Clone(v), Text: r.text, Metadata: r.md.toMap()}
	}
	return out, nil
}

// Find returns the items that f matches, or every item if f is nil, in the
// order they were first added; at most limit of them if limit > 0. It is
// the way to list what a collection holds without a query vector. A
// malformed filter is an error wrapping [vector.ErrInvalidOptions].
func (c *Collection) Find(ctx context.Context, f *Filter, limit int) ([]Item, error) {
	var m matcher
	if f != nil {
		var err error
		if m, err = f.compile(); err != nil {
			return nil, fmt.Errorf("cairn: find: %w", err)
		}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	var ids []vector.ID
	if m != nil {
		ids = c.match(f, m)
	} else {
		ids = make([]vector.ID, len(c.rows))
		for i, r := range c.rows {
			ids[i] = r.id
		}
	}
	slices.Sort(ids)
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]Item, len(ids))
	for i, id := range ids {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("cairn: find: %w", err)
			}
		}
		v, err := c.vectorOf(id)
		if err != nil {
			return nil, fmt.Errorf("cairn: find: %w", err)
		}
		r := c.recs.get(id)
		out[i] = Item{ID: r.key, Embedding: slices.Clone(v), Text: r.text, Metadata: r.md.toMap()}
	}
	return out, nil
}

// Query returns up to k items nearest to embedding, closest first (ties by
// insertion order). Fewer than k come back only if fewer than k items match
// the filter or pass MinSimilarity. It returns an error wrapping
// [vector.ErrInvalidK] for k ≤ 0, [vector.ErrInvalidOptions] for a
// malformed filter, and the errors of [vector.Check] for a bad embedding.
func (c *Collection) Query(ctx context.Context, embedding []float32, k int, o *QueryOptions) ([]Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("cairn: query: %w: %d", vector.ErrInvalidK, k)
	}
	var opts QueryOptions
	if o != nil {
		opts = *o
	}
	var match matcher
	if opts.Filter != nil {
		m, err := opts.Filter.compile()
		if err != nil {
			return nil, fmt.Errorf("cairn: query: %w", err)
		}
		match = m
	}
	if opts.Ef < 0 || opts.Ef > hnsw.MaxEf {
		return nil, fmt.Errorf("cairn: query: %w: Ef = %d, want 0..%d", vector.ErrInvalidOptions, opts.Ef, hnsw.MaxEf)
	}
	if opts.MinSimilarity != nil && math.IsNaN(*opts.MinSimilarity) {
		return nil, fmt.Errorf("cairn: query: %w: MinSimilarity is NaN", vector.ErrInvalidOptions)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	// Ids in flight (see write.go) may come back from the index in a
	// state readers must not see. Exact search asks for as many more
	// results as there are ids in flight (cheap: a larger heap); graph
	// search, or exact search past maxInflate ids in flight, filters them
	// out. settle then drops any that slip through and adds the published
	// versions of the items in flight.
	npend := len(c.pendIDs) + c.freshInFlight()
	exclude := npend > 0 && (c.kind == HNSW || npend > maxInflate)
	kk := k
	if npend > 0 && !exclude {
		kk = k + npend
	}
	var so *vector.SearchOptions
	if match != nil {
		ids := c.matchSet(opts.Filter, match)
		switch {
		case ids.len() == 0:
			if err := vector.Check(embedding, c.cfg.Dim, c.cfg.Metric); err != nil {
				return nil, fmt.Errorf("cairn: query: %w", err)
			}
			return []Result{}, nil
		case ids.len() == c.len():
			// Everything matches: search unfiltered.
		default:
			if exclude {
				ids = c.withoutInFlight(ids)
			}
			so = &vector.SearchOptions{Filter: c.allowList(ids, kk, opts.Ef)}
		}
	}
	if exclude && so == nil {
		so = &vector.SearchOptions{Filter: vector.FilterFunc(c.notInFlight)}
	}
	var (
		hits []vector.Result
		err  error
	)
	if h, ok := c.idx.(*hnsw.Index); ok && opts.Ef != 0 {
		ho := &hnsw.SearchOptions{Ef: opts.Ef}
		if so != nil {
			ho.SearchOptions = *so
		}
		hits, err = h.SearchWith(ctx, embedding, kk, ho)
	} else {
		hits, err = c.idx.Search(ctx, embedding, kk, so)
	}
	if err == nil && npend > 0 {
		hits, err = c.settle(embedding, hits, k, match)
	}
	if err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		sim := similarity(c.cfg.Metric, h.Distance)
		if opts.MinSimilarity != nil && sim < *opts.MinSimilarity {
			break // similarity falls as distance grows
		}
		r := c.recs.get(h.ID)
		out = append(out, Result{ID: r.key, Text: r.text, Metadata: r.md.toMap(), Distance: float64(h.Distance), Similarity: sim})
	}
	return out, nil
}

// QueryText is [Collection.Query] for a text, embedded with the store's
// Embedder; without one it returns [ErrNoEmbedder].
func (c *Collection) QueryText(ctx context.Context, text string, k int, o *QueryOptions) ([]Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("cairn: query: %w: %d", vector.ErrInvalidK, k)
	}
	if err := c.usable(); err != nil {
		return nil, err
	}
	vs, err := c.embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	return c.Query(ctx, vs[0], k, o)
}

// allowList returns the filter that hands ids to the index. An allow-list
// small enough for the index to score its ids one by one goes as a
// [vector.IDSet], which tells the index its size; a larger one, which the
// index only tests ids against while it walks its graph or scans, goes as
// a bitmap, far cheaper to build than a map of many thousand ids (at
// 50,000 items, 0.1 ms instead of several).
//
// A single posting list is handed over as it is, without a copy: the
// caller holds the collection's lock for the whole search, and posting
// lists change only under its exclusive lock.
func (c *Collection) allowList(ids matched, k, ef int) vector.Filter {
	// Both of cairn's indexes answer this with the rule they search by.
	if ix, ok := c.idx.(interface{ ScoresSetExactly(s, k, ef int) bool }); !ok || ix.ScoresSetExactly(ids.len(), k, ef) {
		if ids.set != nil {
			return vector.IDSetOf(ids.set)
		}
		return vector.NewIDSet(ids.ids...)
	}
	return newBitFilter(c.next, ids)
}

// similarity converts a distance under m into the documented similarity.
func similarity(m vector.Metric, d float32) float64 {
	switch m {
	case vector.Cosine:
		return min(max(1-float64(d), -1), 1)
	case vector.Dot:
		return -float64(d)
	}
	return 1 / (1 + math.Sqrt(max(float64(d), 0)))
}

// shut closes the collection with err as the error of every later call,
// first saving its graph if save is set and it changed.
func (c *Collection) shut(err error, save bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil
	}
	var first error
	if g, ok := c.idx.(graph); ok && save && c.dirty {
		if serr := c.be.saveGraph(context.Background(), g); serr != nil {
			first = fmt.Errorf("cairn: saving index of %q: %w", c.name, serr)
		}
	}
	if cerr := c.be.close(); cerr != nil && first == nil && !errors.Is(cerr, vector.ErrClosed) {
		first = fmt.Errorf("cairn: closing %q: %w", c.name, cerr)
	}
	c.err = err
	c.payloads, c.idx = newPayloads(), nil
	return first
}
