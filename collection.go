package cairn

// This file holds the Collection: its state, loading, and the reads (Get,
// Find, Query).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/route"
	"github.com/cairndb/cairn/internal/versions"
	"github.com/cairndb/cairn/vector"
)

// Item is one thing remembered: the caller's id, its embedding, and
// optional text and metadata.
//
// Metadata values must be strings, booleans or numbers (any Go integer or
// float type). A number is returned as a float64 when a float64 holds it
// exactly, else (an integer beyond 2⁵³) as an int64, and compared by its
// exact value; an integer beyond int64 that no float64 holds exactly is
// refused. Other
// types, and NaN or infinite numbers, are rejected with an error wrapping
// [vector.ErrInvalidOptions].
//
// A write reads an Item during the call and keeps copies of its embedding
// and metadata, so they may be reused once it returns; the Items a read
// returns are the caller's own.
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
	// CreatedAt is when the item was first written and UpdatedAt when it
	// was last, both set by the store to the write's time: an Upsert keeps
	// CreatedAt and moves UpdatedAt. A write's time is the store's clock
	// when the write takes effect, never before the time of a write that
	// took effect before it, so an id's writes are timed in the order they
	// took effect. Items read back carry them (in UTC). A write normally
	// leaves them zero; a caller carrying items over from elsewhere (an
	// import) may set them, and a non-zero value is then kept to the
	// nanosecond, except the CreatedAt of an Upsert that replaces an item,
	// which stays the replaced item's (and an UpdatedAt before it is
	// raised to it). Only the zero time.Time means "not
	// given": the Unix epoch and earlier times are kept like any other,
	// from 1677-09-21 to 2262-04-11 (Unix nanoseconds in an int64; a time
	// outside is refused with [vector.ErrInvalidOptions]). UpdatedAt must
	// not be before CreatedAt.
	CreatedAt, UpdatedAt time.Time
	// ExpiresAt, if not zero, is when the item expires: from that instant
	// no read returns it, and it is removed in the background (see
	// [Collection.RemoveExpired]). On a write it must be in the future; if
	// it is zero, the collection's [CollectionConfig.TTL], if any, sets it.
	ExpiresAt time.Time
}

// Result is one hit of a query.
//
// It is the caller's own: its metadata and embedding are copies.
type Result struct {
	ID       string         // the item's id
	Text     string         // the item's text
	Metadata map[string]any // a copy of the item's metadata
	// Distance is the metric's distance from the query embedding (smaller
	// is closer): 1 − cos for Cosine, the negated inner product for Dot,
	// the squared Euclidean distance for L2. Zero in keyword mode.
	Distance float64
	// Similarity is larger for closer items: the cosine similarity, in
	// [−1, 1], for Cosine (whatever the lengths of the vectors given); the
	// raw inner product for Dot; 1 / (1 + ‖q − v‖), in (0, 1], for L2.
	// Zero in keyword mode; in hybrid mode, given for every result, even
	// one only the keyword list found.
	Similarity float64
	// Score is what the query ranked by: Similarity in vector mode,
	// KeywordScore in keyword mode, the fused score in hybrid mode.
	Score float64
	// KeywordScore is the item's BM25 score for the query's words (larger
	// is better; FTS5's bm25() negated), where the keyword list holds it.
	KeywordScore float64
	// VectorRank and KeywordRank are the item's rank (from 1) in the
	// vector and keyword lists of the query, 0 where a list does not hold
	// it: they say which lists a hybrid result came from.
	VectorRank, KeywordRank int
	// Embedding is the item's stored vector, if the query asked for it
	// (QueryOptions.WithEmbeddings).
	Embedding []float32
	// CreatedAt, UpdatedAt and ExpiresAt are the item's times (see
	// [Item]).
	CreatedAt, UpdatedAt, ExpiresAt time.Time
}

// QueryOptions refine a query. A nil *QueryOptions means the zero value.
//
// A query only reads its options, so one value may serve many
// concurrent queries.
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
	// Mode says what the query ranks by: embeddings (VectorMode, the
	// default), words (KeywordMode) or both (HybridMode). The filter
	// applies inside each list.
	Mode QueryMode
	// Keywords are the words of the keyword list, for a query with an
	// embedding ([Collection.Query]) in hybrid or keyword mode, or to
	// match other words than those a [Collection.QueryText] embeds.
	// Plain text: quotes, '*', '-', NEAR and the like are words or
	// punctuation, never operators.
	Keywords string
	// Fusion tunes a hybrid query; nil means the defaults.
	Fusion *Fusion
	// MMR, if set, diversifies the results (vector and hybrid modes).
	MMR *MMR
	// Rerank, if set, hands the candidates to a function that reorders
	// them (not with MMR).
	Rerank *Rerank
	// Recency, if set, ranks a vector query by relevance, recency and
	// importance together (see [Recency]).
	Recency *Recency
	// WithEmbeddings asks for each result's stored vector.
	WithEmbeddings bool
}

// Collection is a named set of items of one dimension and metric, with its
// search index. Get one from [DB.CreateCollection] or [DB.Collection].
//
// A Collection is safe for concurrent use by multiple goroutines: queries,
// reads and writes all run in parallel, writes of different ids share
// commits, and writes of the same id run one after the other (see
// "Concurrency" in the package documentation).
type Collection struct {
	db   *DB
	name string
	cfg  CollectionConfig
	be   backend
	st   vector.Store
	// dedupMu runs calls of UpsertDedup one at a time (dedup.go).
	dedupMu sync.Mutex
	// historyFrom is when the history of a collection began, if the file
	// does not say (a read-only store, or a disk that refused to record
	// it: startHistory); zero if the file says. pastWrites counts the writes
	// recorded in the history since it was last trimmed (history.go).
	historyFrom, pastWrites atomic.Int64

	// wmu is held shared by every write for its whole length, and
	// exclusively by what must not overlap any write: the graph build of
	// an Auto switch and closeWith. idx changes only under both wmu and
	// mu, so a writer holding wmu may use it without mu.
	//
	// mu guards the fields below. Writers hold it exclusively only for
	// the short steps of write.go (number, reserve, publish), never
	// across the durable write, so queries run during commits.
	wmu   sync.RWMutex
	mu    sync.RWMutex
	idx   vector.Index
	kind  IndexKind // the index in use: Flat, HNSW or QFlat
	dirty bool      // the graph changed since it was loaded or saved
	// wrote is set once a write has changed the collection's items since
	// it was loaded. Reads never write to the file: what they teach the
	// collection (a graph rebuilt at load or by a measurement, a routing
	// verdict) is saved only if wrote is set, at Close, so that a session
	// that only read leaves every byte of the file as it found it (the
	// next open rebuilds or measures again). A sweep that removes expired
	// items is a write, and sets it; one that finds none is not.
	wrote bool
	life  indexLife // routing, measuring, rebuilds (indexlife.go)
	cat   *catalog  // the items apart from their vectors, and what readers see
	next  vector.ID // the id of the next version written
	err   error     // set once the collection is closed or deleted
	// stamped is the time of the latest write to claim its ids
	// (stamp): a write's time never precedes it.
	stamped int64

	wake chan struct{} // wakes the sweeper (expiry.go)
	// firstSwept is closed once the sweeper's first pass (the one at
	// load) has run, for the sweep of idle tenants (idlesweep.go).
	firstSwept chan struct{}
	stopSweep  context.CancelFunc // ends the sweeper, and bg
	// bg is the context of the collection's background work, which
	// closeWith ends.
	bg context.Context
}

var errDropped = fmt.Errorf("cairn: collection deleted: %w", vector.ErrNotFound)

// reservedID reports whether a version may not have id: 0 (no version)
// and the largest (the end of every range).
func reservedID(id vector.ID) bool { return id == 0 || id == ^vector.ID(0) }

// newCollection loads the rows of be and builds the index.
func newCollection(ctx context.Context, db *DB, name string, cfg CollectionConfig, be backend) (*Collection, error) {
	c := &Collection{
		db: db, name: name, cfg: cfg, be: be, st: be.store(),
		cat:     newCatalog(),
		next:    1,
		stamped: math.MinInt64,
	}
	var ids []vector.ID
	err := be.load(ctx, func(r row) error {
		if f := r.fault(); f != "" {
			return fmt.Errorf("%w: row %d (%q) %s", vector.ErrCorrupt, r.id, r.key, f)
		}
		if !c.cat.add(&record{id: r.id, key: r.key, text: r.text, md: r.md, created: r.created, updated: r.updated, expires: r.expires}) {
			return fmt.Errorf("%w: item %d (%q) has a repeated id or key", vector.ErrCorrupt, r.id, r.key)
		}
		c.next = max(c.next, r.id+1)
		ids = append(ids, r.id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	kind := cfg.initialKind(len(ids))
	if r := be.route(); kind == HNSW && cfg.routed() && r.holds(len(ids)) {
		// The last measurement stands: no graph to build for a scan that
		// won, and nothing to measure again.
		kind, c.life.route = r.Index, r
	}
	idx, err := newIndex(kind, c.indexConfig(), c.st)
	if err != nil {
		return nil, err
	}
	if g, ok := idx.(graph); ok && len(ids) > 0 {
		if err := be.loadGraph(ctx, g); err != nil {
			// No saved graph, or a stale or damaged one: rebuild from
			// the items, which are the source of truth.
			if idx, err = newIndex(kind, c.indexConfig(), c.st); err != nil {
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
	// A graph built here, or loaded without a calibration it can keep
	// (saved by an older build, or for another target), has none yet,
	// and would answer at the default beam width, not under its target,
	// until the one its load started ends. A graph loaded with its
	// calibration answers under the target at once: no wait.
	if err := calibrated(ctx, idx); err != nil {
		return nil, err
	}
	if kind == HNSW && cfg.routed() && c.life.route == nil {
		r, err := chooseRouteFunc(ctx, idx.(*hnsw.Index), c.st, ids, &cfg.QFlat, nil, false)
		if err != nil {
			return nil, err
		}
		c.life.route = routeOf(r, len(ids), 0)
		if r.Kind != route.HNSW {
			kind, idx, c.dirty = indexKind(r.Kind), r.Index, false
		}
		c.life.routeUnsaved = true // a load is a read: saved after a write
	}
	c.idx, c.kind = idx, kind
	if err := c.startHistory(ctx); err != nil {
		return nil, err
	}
	if err := c.stampAfterHistory(ctx); err != nil {
		return nil, err
	}
	c.startSweeper()
	return c, nil
}

// view returns what a reader at now sees (package versions). mu is held.
func (c *Collection) view(now int64) versions.View { return c.cat.ver.View(now) }

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

// Config returns the collection's configuration, defaults filled in. Name
// and Config describe the handle, and answer even once the collection is
// closed; every other method then returns an error.
func (c *Collection) Config() CollectionConfig { return c.cfg.clone() }

// Info describes the collection: its name, configuration, size and the
// index in use (Flat or HNSW; an Auto collection reports which). Once the
// collection is closed or deleted it returns the error every call does.
func (c *Collection) Info(ctx context.Context) (CollectionInfo, error) {
	if err := ctx.Err(); err != nil {
		return CollectionInfo{}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return CollectionInfo{}, c.err
	}
	info := CollectionInfo{Name: c.name, Config: c.cfg.clone(), Count: c.view(c.now()).Count(), Index: c.kind}
	if c.cfg.HNSW.TargetRecall == 0 {
		return info, nil
	}
	info.Recall = &IndexInfo{}
	if c.life.route != nil {
		r := c.life.route.Route
		info.Recall.Route = &r
	}
	if h, ok := c.idx.(*hnsw.Index); ok {
		if cal, ok := h.Calibration(); ok {
			st := h.TargetSearches()
			info.Recall.Calibration, info.Recall.Searches = &cal, &st
		}
	}
	return info, nil
}

// Count returns the number of items in the collection that a read would
// return now: expired items not yet removed are not counted (while there
// are any, Count looks at every item). Once the collection is closed it
// returns an error wrapping [vector.ErrClosed], once deleted one wrapping
// [vector.ErrNotFound], as every call does.
func (c *Collection) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return 0, c.err
	}
	return c.view(now).Count(), nil
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
		return nil, fmt.Errorf("embedding: %w: %d vectors for %d texts", ErrWrongNumberOfVectors, len(vs), len(texts))
	}
	return vs, nil
}

// closedErr returns the error every call returns once the collection is
// closed or deleted, or nil.
func (c *Collection) closedErr() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.err
}

// orClosed returns the collection's own error if it has closed (a deleted
// collection's rows and history go with it, and a read of them fails in
// the store's terms, ErrClosed), else err: the error of a read of the
// backend that failed.
func (c *Collection) orClosed(err error) error {
	if err == nil {
		return nil
	}
	if cerr := c.closedErr(); cerr != nil {
		return cerr
	}
	return err
}

// writeErr is closedErr for a write: a store opened read-only refuses
// every write, before it does anything.
func (c *Collection) writeErr() error {
	if c.db.readOnly {
		return errReadOnly
	}
	return c.closedErr()
}

// Get returns the items with the given ids, in order, or an error wrapping
// [vector.ErrNotFound] naming the first id not in the collection (an
// expired item is not).
func (c *Collection) Get(ctx context.Context, ids ...string) ([]Item, error) {
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	view := c.view(now)
	out := make([]Item, len(ids))
	for i, key := range ids {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("cairn: get: %w", err)
			}
		}
		r := c.cat.lookup(key)
		if r == nil || !view.Allow(r.id) { // no such key, one a write in flight creates, or expired
			return nil, fmt.Errorf("cairn: get %q: %w", key, vector.ErrNotFound)
		}
		v, err := c.st.Get(r.id)
		if err != nil {
			return nil, fmt.Errorf("cairn: get %q: %w", key, err)
		}
		out[i] = r.item(slices.Clone(v))
	}
	return out, nil
}

// Find returns the items that f matches, or every item if f is nil (expired
// items never), in the order they were last written (an Upsert of an item
// moves it to the end); at most limit of them if limit > 0. It is the way
// to list what a collection holds without a query vector. A malformed
// filter is an error wrapping [vector.ErrInvalidOptions].
//
// The order is that in which the writes began. A write is timed when it
// takes effect, after any write of the same ids in flight, so while
// writes overlap the order may differ from that of the items' UpdatedAt.
func (c *Collection) Find(ctx context.Context, f *Filter, limit int) ([]Item, error) {
	var m matcher
	if f != nil {
		var err error
		if m, err = f.compile(); err != nil {
			return nil, fmt.Errorf("cairn: find: %w", err)
		}
	}
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	ids := c.cat.visible(f, m, c.view(now))
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
		v, err := c.st.Get(id)
		if err != nil {
			return nil, fmt.Errorf("cairn: find: %w", err)
		}
		r := c.cat.recs.get(id)
		out[i] = r.item(slices.Clone(v))
	}
	return out, nil
}

// Query returns up to k items nearest to embedding, closest first (ties in
// the order the items were last written). Fewer than k come back only if
// fewer than k items match the filter or pass MinSimilarity.
//
// With o.Mode set to [HybridMode] and o.Keywords to some words, it also
// ranks the items by those words and fuses the two lists (see [Fusion]);
// with [KeywordMode], embedding must be nil and only o.Keywords count (or
// use [Collection.QueryText]).
//
// It returns an error wrapping [vector.ErrInvalidK] for k ≤ 0,
// [vector.ErrInvalidOptions] for malformed options (a bad filter, MMR
// Lambda outside [0, 1], keywords that are empty, not valid UTF-8 or over
// [MaxKeywordBytes] or [MaxKeywords]), the errors of [vector.Check] for a
// bad embedding, and [ErrBadRerank] or the reranker's error if o.Rerank
// fails. Nothing stored changes.
func (c *Collection) Query(ctx context.Context, embedding []float32, k int, o *QueryOptions) ([]Result, error) {
	if o != nil && o.Mode == KeywordMode && len(embedding) == 0 {
		embedding = nil
	}
	var p plan
	if err := p.init(k, o, embedding != nil, ""); err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	return c.search(ctx, &p, embedding, p.opts.Keywords)
}

// QueryText is [Collection.Query] for a text. In vector mode (the default)
// the text is embedded with the store's Embedder (without one it returns
// [ErrNoEmbedder]); in [KeywordMode] its words are matched, and no
// embedder is needed; in [HybridMode] it is both embedded and matched (or,
// if o.Keywords is set, the keyword list matches those words instead).
func (c *Collection) QueryText(ctx context.Context, text string, k int, o *QueryOptions) ([]Result, error) {
	mode := VectorMode
	if o != nil {
		mode = o.Mode
	}
	var p plan
	if err := p.init(k, o, mode != KeywordMode, text); err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	if err := c.closedErr(); err != nil {
		return nil, err
	}
	var q []float32
	if mode != KeywordMode {
		vs, err := c.embed(ctx, []string{text})
		if err != nil {
			return nil, fmt.Errorf("cairn: query: %w", err)
		}
		q = vs[0]
	}
	words := text
	if p.opts.Keywords != "" {
		words = p.opts.Keywords
	}
	return c.search(ctx, &p, q, words)
}

// allowList returns the filter that hands ids to the index. An allow-list
// small enough for the index to score its ids one by one goes as a
// [vector.IDSet], which tells the index its size; a larger one, which the
// index only tests ids against while it walks its graph or scans, goes as
// a bitmap, far cheaper to build than a map of many thousand ids (at
// 50,000 items, 0.1 ms instead of several), unless the ids are too sparse
// for one.
//
// A single posting list is handed over as it is, without a copy: the
// caller holds the collection's lock for the whole search, and posting
// lists change only under its exclusive lock. The complement of posting
// lists goes as a filter that looks ids up in them, and asks view (which
// ids already passed, published) of the versions the index holds besides.
// A bitmap, a complement's filter and a complement made explicit are
// built in sc, whose memory the caller keeps from query to query.
func (c *Collection) allowList(ids matched, k, ef int, view versions.View, sc *queryScratch) vector.Filter {
	// Both of cairn's indexes answer this with the rule they search by.
	if ix, ok := c.idx.(interface{ ScoresSetExactly(s, k, ef int) bool }); !ok || ix.ScoresSetExactly(ids.len(), k, ef) {
		if ids.except != nil {
			sc.ids = ids.appendIDs(sc.ids[:0])
			ids = matched{ids: sc.ids}
		}
		return idSet(ids)
	}
	if ids.except != nil {
		sc.allBut = allBut{except: ids.except, vis: view.Filter()}
		return &sc.allBut
	}
	if sc.bits.fill(c.next, ids) {
		return &sc.bits
	}
	return idSet(ids)
}

func idSet(ids matched) *vector.IDSet {
	if ids.set != nil {
		return vector.IDSetOf(ids.set)
	}
	return vector.NewIDSet(ids.ids...)
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

// closeWith closes the collection with err as the error of every later
// call, first saving its graph if save is set and it changed.
func (c *Collection) closeWith(err error, save bool) error {
	c.stopSweep() // before wmu: a sweep waiting in the write path gives up
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil
	}
	var first error
	// A graph that a rebuild left expired items out of is not saved: the
	// file still holds them, and the next open builds the graph anew.
	// Only a collection written to since its load is saved (see wrote).
	if g, ok := c.idx.(graph); ok && save && c.wrote && c.dirty && !c.leftOut() {
		if serr := c.be.saveGraph(context.Background(), g); serr != nil {
			first = fmt.Errorf("cairn: saving index of %q: %w", c.name, serr)
		}
	}
	if save && c.wrote && c.life.routeUnsaved {
		// A hint: if it is lost, the next open measures again.
		_ = c.be.saveRoute(context.Background(), c.life.route)
	}
	if cerr := c.shut(err); cerr != nil && first == nil {
		first = cerr
	}
	return first
}

// dropWith deletes the collection: drop deletes it from the file, if it
// has one. It first waits for the writes in flight and holds off every
// other call (wmu and mu held exclusively), so that no write or read
// meets a store deleted under it; once drop succeeds, the collection
// closes with errDropped, the error of every later call. If drop fails,
// the collection is left as it was, open, and its error is returned.
func (c *Collection) dropWith(drop func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := drop(); err != nil {
		return err
	}
	c.stopSweep()
	c.shut(errDropped) // even if the index refused a write: it is gone
	return nil
}

// shut releases what the collection holds and sets err as the error of
// every later call. wmu and mu are held.
func (c *Collection) shut(err error) error {
	var first error
	if cerr := c.be.close(); cerr != nil && !errors.Is(cerr, vector.ErrClosed) {
		first = fmt.Errorf("cairn: closing %q: %w", c.name, cerr)
	}
	c.err = err
	c.cat, c.idx = newCatalog(), nil
	return first
}
