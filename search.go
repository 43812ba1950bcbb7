package cairn

// This file holds the query modes (vector, keyword, hybrid) and what a
// query does after ranking: fusion, maximal marginal relevance and the
// caller's reranker.

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/keyword"
	"github.com/cairndb/cairn/internal/rank"
	"github.com/cairndb/cairn/internal/versions"
	"github.com/cairndb/cairn/vector"
)

// QueryMode says which lists a query ranks items by.
//
// It is a plain value.
type QueryMode int

const (
	// VectorMode ranks by the distance of the items' embeddings from the
	// query's. It is the default.
	VectorMode QueryMode = iota
	// KeywordMode ranks the items whose Text holds any of the query's
	// words by BM25, as SQLite's FTS5 ranks them (bm25(), k1 = 1.2,
	// b = 0.75, its unicode61 tokenizer: case and diacritics ignored),
	// over the items with text the query can see (not those expired). It
	// needs no embedding.
	KeywordMode
	// HybridMode ranks by both lists, fused by reciprocal rank fusion
	// (see [Fusion]).
	HybridMode
)

// String returns "vector", "keyword" or "hybrid".
func (m QueryMode) String() string {
	switch m {
	case VectorMode:
		return "vector"
	case KeywordMode:
		return "keyword"
	case HybridMode:
		return "hybrid"
	}
	return fmt.Sprintf("QueryMode(%d)", int(m))
}

// Limits of the keyword part of a query: a longer query is refused with
// an error wrapping [vector.ErrInvalidOptions].
const (
	// MaxKeywordBytes is the longest keyword text a query may carry.
	MaxKeywordBytes = keyword.MaxQueryBytes
	// MaxKeywords is the most distinct words it may have.
	MaxKeywords = keyword.MaxQueryTerms
	// MaxCandidates bounds the candidates a query may ask for: a Fusion
	// Window, an MMR or Rerank Pool.
	MaxCandidates = 10000
)

// Fusion tunes a hybrid query: each list (vector and keyword) finds its
// Window best candidates, filtered; an item at rank r (from 1) of a list
// scores that list's weight / (K + r), and the sum over the lists ranks
// the results. A nil *Fusion means the zero value: K = 60, weights 1,
// Window max(k, 20). A query only reads its options (Fusion, MMR, Rerank):
// one value may serve many concurrent queries.
type Fusion struct {
	// K is reciprocal rank fusion's constant (0 means [DefaultRRFK]):
	// larger values flatten the difference between high and low ranks.
	K float64
	// VectorWeight and KeywordWeight scale each list's contribution; 0
	// means 1. They must not be negative.
	VectorWeight, KeywordWeight float64
	// Window is how many candidates each list contributes (0 means
	// max(k, 20), or the MMR or Rerank Pool if larger); at most
	// MaxCandidates.
	Window int
}

// DefaultRRFK is reciprocal rank fusion's K when [Fusion.K] is 0: the
// value of Cormack, Clarke and Büttcher (SIGIR 2009), which most systems
// keep.
const DefaultRRFK = rank.DefaultRRFK

// MMR asks a query to diversify its results by maximal marginal relevance:
// from the query's Pool best candidates it picks k, each time the one that
// maximises Lambda·sim(query) − (1 − Lambda)·max sim(one already picked),
// similarities as [Result.Similarity] defines them. It needs a query
// embedding (vector or hybrid mode).
//
// A query only reads it, so one value may serve many concurrent queries.
type MMR struct {
	// Lambda weighs relevance against diversity, in [0, 1]: 1 keeps the
	// query's order, 0 picks (after the first) the candidate least like
	// those already picked.
	Lambda float64
	// Pool is how many candidates to choose from (0 means max(4·k, 20));
	// at most MaxCandidates.
	Pool int
}

// Reranker reorders a query's candidates, for cross-encoders and other
// second-stage rankers. It is given the query's text (the QueryText text
// or the Keywords, empty for an embedding alone) and the candidates best
// first, and returns their ids in the new order; it may leave some out,
// which drops them. An id it was not given, or an id twice, makes the
// query fail with an error wrapping [ErrBadRerank]; an error it returns
// is returned wrapped. It is called without any lock held, and may take
// its time (ctx is the query's); concurrent queries may call it at once,
// so it must be safe for concurrent use.
type Reranker func(ctx context.Context, query string, candidates []Result) ([]string, error)

// Rerank asks a query to hand its candidates to a [Reranker].
//
// A query only reads it, so one value may serve many concurrent queries
// (its Func must then be safe for concurrent use: see [Reranker]).
type Rerank struct {
	// Func reorders the candidates. Required.
	Func Reranker
	// Pool is how many candidates it is given (0 means max(4·k, 20)); at
	// most MaxCandidates.
	Pool int
}

// ErrBadRerank is wrapped by the error of a query whose Reranker returned
// an id it was not given, or one id twice.
var ErrBadRerank = rank.ErrBadRerank

// plan is a query's options checked and resolved.
type plan struct {
	opts   QueryOptions
	k      int
	match  matcher
	terms  []string // the keyword list's words, or nil
	pool   int      // candidates ranked before MMR and the reranker cut to k
	window int      // candidates per list in hybrid mode
	weight [2]float64
	rrfK   float64
	// matched is what the filter matches, once computed (matchedSet).
	matched    matched
	matchedSet bool
	// view is what the query sees: the collection as of the store's
	// clock when the search began.
	view versions.View
	// scratch is the memory the filter's matches and allow-list are
	// built in, taken from scratchPool by the first that needs it and
	// put back when the query is done (release).
	scratch *queryScratch
}

// queryScratch is the memory a filtered query builds its matches (when
// they are not a posting list) and its allow-list bitmap in, and a
// recency query its walk, reused from query to query: a filter matching
// most of 2,000 items otherwise made 15 allocations of a query's 40.
// Nothing in it outlives the query.
type queryScratch struct {
	ids    []vector.ID
	lists  []map[vector.ID]struct{} // the posting lists a complement excludes
	bits   bitFilter
	allBut allBut
	codes  codeBound     // a recency query's bound from codes
	recs   []*record     // a recency query's window
	pages  []*recPage    // the pages of the window's records
	query  vector.Vector // a recency query's vector, prepared for its walk
	batch  walkBatch     // a recency walk's items to score
	pool   []scoredRec   // a recency query's best items
	sink   int64         // keeps hitRecords' reads
}

var scratchPool = sync.Pool{New: func() any { return new(queryScratch) }}

// scratchSpace returns p's scratch memory, taking it from the pool first.
func (p *plan) scratchSpace() *queryScratch {
	if p.scratch == nil {
		p.scratch = scratchPool.Get().(*queryScratch)
	}
	return p.scratch
}

// release gives p's scratch memory back, once nothing of the query reads
// it any more.
func (p *plan) release() {
	if p.scratch != nil {
		// Let the posting lists go.
		p.scratch.allBut = allBut{}
		clear(p.scratch.recs)
		clear(p.scratch.pool)
		b := &p.scratch.batch
		waiting, order, sure := b.waiting[:0], b.order[:0], b.sure.h[:0]
		clear(b.waiting) // read empties it: this is for a query cut short
		*b = walkBatch{waiting: waiting, order: order, sure: sureScores{h: sure}}
		clear(p.scratch.lists[:cap(p.scratch.lists)])
		scratchPool.Put(p.scratch)
		p.scratch = nil
	}
}

// init checks o for a query of k results with or without an embedding
// (hasVec) and with the given keyword text (used unless o.Keywords is set,
// in keyword and hybrid modes), and sets p to its plan. A plan lives on
// its query's stack.
func (p *plan) init(k int, o *QueryOptions, hasVec bool, words string) error {
	if k <= 0 {
		return fmt.Errorf("%w: %d", vector.ErrInvalidK, k)
	}
	*p = plan{k: k}
	if o != nil {
		p.opts = *o
	}
	opts := &p.opts
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{vector.ErrInvalidOptions}, args...)...)
	}
	if opts.Filter != nil {
		m, err := opts.Filter.compile()
		if err != nil {
			return err
		}
		p.match = m
	}
	if opts.Ef < 0 || opts.Ef > hnsw.MaxEf {
		return bad("Ef = %d, want 0..%d", opts.Ef, hnsw.MaxEf)
	}
	if opts.MinSimilarity != nil && math.IsNaN(*opts.MinSimilarity) {
		return bad("MinSimilarity is NaN")
	}
	switch opts.Mode {
	case VectorMode:
		if opts.Keywords != "" {
			return bad("Keywords given to a vector query; set Mode: HybridMode (or KeywordMode)")
		}
	case KeywordMode:
		if opts.MinSimilarity != nil {
			return bad("MinSimilarity in keyword mode, which has no similarity")
		}
		if opts.MMR != nil {
			return bad("MMR needs a query embedding: use vector or hybrid mode")
		}
	case HybridMode:
	default:
		return bad("unknown query mode %d", int(opts.Mode))
	}
	if opts.Mode != VectorMode {
		if opts.Keywords != "" {
			words = opts.Keywords
		}
		if !utf8.ValidString(words) {
			return bad("the keywords are not valid UTF-8")
		}
		terms, err := keyword.ParseQuery(words)
		if err != nil {
			return err // wraps ErrInvalidOptions
		}
		p.terms = terms
	}
	if hasVec != (opts.Mode != KeywordMode) {
		if hasVec {
			return bad("an embedding given to a keyword query")
		}
		return bad("a %v query needs an embedding", opts.Mode)
	}
	p.pool = k
	if opts.MMR != nil && opts.Rerank != nil {
		return bad("MMR and Rerank together: choose one")
	}
	if opts.Recency != nil {
		if err := checkRecency(opts.Recency, opts.Mode, bad); err != nil {
			return err
		}
	}
	pool := func(n int) (int, error) {
		switch {
		case n < 0 || n > MaxCandidates:
			return 0, fmt.Errorf("%w: Pool = %d, want 0..%d", vector.ErrInvalidOptions, n, MaxCandidates)
		case n == 0:
			return min(max(4*k, 20), MaxCandidates), nil
		}
		return n, nil
	}
	if m := opts.MMR; m != nil {
		if !(m.Lambda >= 0 && m.Lambda <= 1) {
			return bad("MMR Lambda = %v, want 0 ≤ Lambda ≤ 1", m.Lambda)
		}
		n, err := pool(m.Pool)
		if err != nil {
			return err
		}
		p.pool = max(k, n)
	}
	if r := opts.Rerank; r != nil {
		if r.Func == nil {
			return bad("Rerank without a Func")
		}
		n, err := pool(r.Pool)
		if err != nil {
			return err
		}
		p.pool = max(k, n)
	}
	p.window, p.weight, p.rrfK = p.pool, [2]float64{1, 1}, DefaultRRFK
	if opts.Mode == HybridMode {
		p.window = max(p.pool, 20)
		if f := opts.Fusion; f != nil {
			if f.K < 0 || math.IsNaN(f.K) || math.IsInf(f.K, 0) {
				return bad("Fusion K = %v, want a finite K ≥ 0", f.K)
			}
			if f.K > 0 {
				p.rrfK = f.K
			}
			for i, w := range []float64{f.VectorWeight, f.KeywordWeight} {
				if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
					return bad("Fusion weight %v, want a finite weight ≥ 0", w)
				}
				if w > 0 {
					p.weight[i] = w
				}
			}
			if f.Window < 0 || f.Window > MaxCandidates {
				return bad("Fusion Window = %d, want 0..%d", f.Window, MaxCandidates)
			}
			if f.Window > 0 {
				p.window = max(f.Window, p.pool)
			}
		}
	}
	return nil
}

// candidate is one result being ranked: its record, its scores and ranks
// (res, whose payload is filled in only for the results returned), and its
// stored vector when the query needs it (a view into the store: read it
// only under the lock).
type candidate struct {
	rec *record
	res Result
	vec vector.Vector
}

// search runs a query planned by p with the query embedding q (nil in
// keyword mode) and the keyword text words (for the reranker).
func (c *Collection) search(ctx context.Context, p *plan, q []float32, words string) ([]Result, error) {
	out, err := c.rank(ctx, p, q)
	if err != nil {
		return nil, err
	}
	if r := p.opts.Rerank; r != nil {
		given := make([]string, len(out))
		for i := range out {
			given[i] = out[i].ID
		}
		answer, err := r.Func(ctx, words, slices.Clone(out))
		if err != nil {
			return nil, fmt.Errorf("cairn: query: reranker: %w", err)
		}
		order, err := rank.Order(given, answer)
		if err != nil {
			return nil, fmt.Errorf("cairn: query: %w", err)
		}
		re := make([]Result, len(order))
		for i, j := range order {
			re[i] = out[j]
		}
		out = re
	}
	if len(out) > p.k {
		out = out[:p.k]
	}
	return out, nil
}

// rank finds the results of a query, under the collection's read lock:
// the lists, their candidates, and MMR's choice. It returns the pool (more
// than k only for the reranker), each result the caller's own: its
// metadata a new map, its embedding a copy.
func (c *Collection) rank(ctx context.Context, p *plan, q []float32) ([]Result, error) {
	now := c.now()
	defer p.release() // after the lock: the index and the lists are done with it
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	p.view = c.view(now)
	var prepared vector.Vector // the query as the index sees it, for hybrid mode
	switch {
	case p.opts.Mode == HybridMode:
		var err error
		if prepared, err = vector.Prepare(q, c.cfg.Dim, c.cfg.Metric); err != nil {
			return nil, fmt.Errorf("cairn: query: %w", err)
		}
	case q != nil && !c.graphValidatesQuery(p):
		if err := vector.Check(q, c.cfg.Dim, c.cfg.Metric); err != nil {
			return nil, fmt.Errorf("cairn: query: %w", err)
		}
	}
	if c.cat.len() == 0 {
		return nil, nil
	}
	var (
		cands []candidate
		err   error
	)
	if p.opts.Recency != nil {
		cands, err = c.recentHits(ctx, p, q)
	} else {
		vecHits, kwHits, lerr := c.lists(ctx, p, q)
		if lerr != nil {
			return nil, fmt.Errorf("cairn: query: %w", lerr)
		}
		if p.opts.Mode == VectorMode && p.opts.MMR == nil {
			return c.vectorResults(p, vecHits)
		}
		cands, err = c.candidates(p, vecHits, kwHits, prepared)
	}
	if err != nil {
		return nil, err
	}
	if p.opts.MMR != nil || p.opts.WithEmbeddings {
		for i := range cands {
			if err := c.withVector(&cands[i]); err != nil {
				return nil, err
			}
		}
	}
	if cands, err = c.diversify(p, cands); err != nil {
		return nil, err
	}
	out := make([]Result, len(cands))
	for i := range cands {
		cd := &cands[i]
		out[i] = cd.res
		fill(&out[i], cd.rec)
		if p.opts.WithEmbeddings {
			out[i].Embedding = slices.Clone(cd.vec)
		}
	}
	return out, nil
}

// lists searches the lists of p's mode: the vector list of q, the keyword
// list of p's words, or both at once. mu is held.
func (c *Collection) lists(ctx context.Context, p *plan, q []float32) ([]vector.Result, []keyword.Hit, error) {
	n := c.cat.len()
	switch p.opts.Mode {
	case VectorMode:
		hits, err := c.vectorHits(ctx, p, q, min(p.pool, n))
		if err == nil && p.match == nil && c.keepsQueries() {
			c.keepQuery(q)
		}
		return hits, nil, err
	case KeywordMode:
		return nil, c.keywordHits(p, p.pool), nil
	}
	// Hybrid: the two lists are searched at once when there is a CPU for
	// each: both only read, under the read lock this goroutine holds
	// until both are done.
	if p.match != nil {
		c.matches(p) // once, before the lists share it
	}
	var kwDone chan []keyword.Hit
	if runtime.GOMAXPROCS(0) > 1 {
		// The keyword list gets its own copy of the plan (its matches
		// already computed) and hands its hits back on a channel:
		// nothing of a query's own escapes to the heap through the
		// goroutine, so the plan and the lists of every other query stay
		// on the stack.
		kp := new(plan)
		*kp = *p
		kwDone = make(chan []keyword.Hit, 1)
		go func() { kwDone <- c.keywordHits(kp, kp.window) }()
	}
	vecHits, err := c.vectorHits(ctx, p, q, min(p.window, n))
	var kwHits []keyword.Hit
	if kwDone != nil {
		kwHits = <-kwDone
	} else {
		kwHits = c.keywordHits(p, p.window)
	}
	return vecHits, kwHits, err
}

// candidates turns the lists into the candidates of p's mode, scored and
// ranked, cut where MinSimilarity stops them and at the pool: the vector
// list (with MMR), the keyword list, or their fusion, whose items only the
// keyword list found are scored against the prepared query. mu is held.
func (c *Collection) candidates(p *plan, vecHits []vector.Result, kwHits []keyword.Hit, prepared vector.Vector) ([]candidate, error) {
	switch p.opts.Mode {
	case VectorMode:
		cands := make([]candidate, 0, len(vecHits))
		for i, h := range vecHits {
			sim := similarity(c.cfg.Metric, h.Distance)
			if p.opts.MinSimilarity != nil && sim < *p.opts.MinSimilarity {
				break // similarity falls as distance grows
			}
			cd := c.candidate(h.ID)
			cd.res.Distance, cd.res.Similarity = float64(h.Distance), sim
			cd.res.Score, cd.res.VectorRank = sim, i+1
			cands = append(cands, cd)
		}
		return cands, nil
	case KeywordMode:
		cands := make([]candidate, len(kwHits))
		for i, h := range kwHits {
			cands[i] = c.candidate(h.ID)
			r := &cands[i].res
			r.Score, r.KeywordScore, r.KeywordRank = h.Score, h.Score, i+1
		}
		return cands, nil
	}
	vecIDs := make([]vector.ID, len(vecHits))
	for i, h := range vecHits {
		vecIDs[i] = h.ID
	}
	kwIDs := make([]vector.ID, len(kwHits))
	for i, h := range kwHits {
		kwIDs[i] = h.ID
	}
	fused, err := rank.Fuse([][]vector.ID{vecIDs, kwIDs}, p.weight[:], p.rrfK)
	if err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	cands := make([]candidate, 0, min(len(fused), p.pool))
	for _, f := range fused {
		cd := c.candidate(f.ID)
		r := &cd.res
		r.Score, r.VectorRank, r.KeywordRank = f.Score, f.Ranks[0], f.Ranks[1]
		if r.VectorRank > 0 {
			r.Distance = float64(vecHits[r.VectorRank-1].Distance)
		} else {
			if err := c.withVector(&cd); err != nil {
				return nil, err
			}
			r.Distance = float64(c.distance(prepared, cd.vec))
		}
		r.Similarity = similarity(c.cfg.Metric, float32(r.Distance))
		if r.KeywordRank > 0 {
			r.KeywordScore = kwHits[r.KeywordRank-1].Score
		}
		if p.opts.MinSimilarity != nil && r.Similarity < *p.opts.MinSimilarity {
			continue
		}
		if cands = append(cands, cd); len(cands) == p.pool {
			break
		}
	}
	return cands, nil
}

// diversify returns the k of cands that MMR picks, in its order, if p asks
// for MMR; else cands. Their vectors are fetched. mu is held.
func (c *Collection) diversify(p *plan, cands []candidate) ([]candidate, error) {
	m := p.opts.MMR
	if m == nil || len(cands) == 0 {
		return cands, nil
	}
	rel := make([]float64, len(cands))
	for i := range cands {
		rel[i] = cands[i].res.Similarity
		if p.opts.Recency != nil {
			rel[i] = cands[i].res.Score // what the query ranks by
		}
	}
	sim := func(i, j int) float64 {
		return similarity(c.cfg.Metric, c.distance(cands[i].vec, cands[j].vec))
	}
	order, err := rank.MMR(rel, p.k, m.Lambda, sim)
	if err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	picked := make([]candidate, len(order))
	for i, j := range order {
		picked[i] = cands[j]
	}
	return picked, nil
}

// graphValidatesQuery reports whether a vector query planned by p goes to the
// HNSW graph whatever happens, which checks the query embedding as it
// prepares it (with the errors of [vector.Check]): a check here would be a
// second pass over it, some 5% of a query at 768 dimensions. A filter may
// match nothing, and an empty collection searches nothing: those are
// checked here. mu is held.
func (c *Collection) graphValidatesQuery(p *plan) bool {
	_, graph := c.idx.(*hnsw.Index)
	return graph && p.opts.Mode == VectorMode && p.match == nil && c.cat.len() > 0
}

// vectorResults returns the results of a vector query without MMR from the
// index's hits, nearest first, cut where MinSimilarity stops them: one
// slice, each result filled in place. mu is held.
func (c *Collection) vectorResults(p *plan, hits []vector.Result) ([]Result, error) {
	out := make([]Result, 0, len(hits))
	for i, h := range hits {
		sim := similarity(c.cfg.Metric, h.Distance)
		if p.opts.MinSimilarity != nil && sim < *p.opts.MinSimilarity {
			break // similarity falls as distance grows
		}
		r := c.cat.recs.get(h.ID)
		out = out[:i+1]
		res := &out[i]
		res.Distance, res.Similarity, res.Score, res.VectorRank = float64(h.Distance), sim, sim, i+1
		fill(res, r)
		if p.opts.WithEmbeddings {
			v, err := c.st.Get(r.id)
			if err != nil { // a published version's vector is in the store
				return nil, fmt.Errorf("cairn: query: %w: item %q has no vector: %v", vector.ErrCorrupt, r.key, err)
			}
			res.Embedding = slices.Clone(v)
		}
	}
	return out, nil
}

// fill sets res's payload from the record r: its id, text, a copy of its
// metadata and its times. mu is held.
func fill(res *Result, r *record) {
	res.ID, res.Text, res.Metadata = r.key, r.text, r.md.toMap()
	res.CreatedAt, res.UpdatedAt, res.ExpiresAt = timeOf(r.created), timeOf(r.updated), timeOf(r.expires)
}

// candidate returns the candidate for the published version id, its
// payload still to fill (and its vector fetched by withVector, if
// needed). mu is held.
func (c *Collection) candidate(id vector.ID) candidate {
	return candidate{rec: c.cat.recs.get(id)}
}

// withVector fetches cd's stored vector. mu is held.
func (c *Collection) withVector(cd *candidate) error {
	if cd.vec != nil {
		return nil
	}
	v, err := c.st.Get(cd.rec.id)
	if err != nil { // a published version's vector is in the store
		return fmt.Errorf("cairn: query: %w: item %q has no vector: %v", vector.ErrCorrupt, cd.rec.key, err)
	}
	cd.vec = v
	return nil
}

// distance returns the metric's distance between a prepared query or
// stored vector a and a stored vector b, as the index computes it.
func (c *Collection) distance(a, b vector.Vector) float32 {
	switch c.cfg.Metric {
	case vector.Cosine:
		return 1 - vector.InnerProduct(a, b)
	case vector.Dot:
		return -vector.InnerProduct(a, b)
	}
	return vector.SquaredL2(a, b)
}

// distances writes the distance from a to each row of rows (vectors of
// the collection's dimension) into out, as distance does, in one gather.
func (c *Collection) distances(a vector.Vector, rows []*float32, out []float32) {
	if c.cfg.Metric == vector.L2 {
		vector.SquaredL2Gather(a, rows, out)
		return
	}
	vector.InnerProductGather(a, rows, out)
	for i, ip := range out[:len(rows)] {
		if c.cfg.Metric == vector.Cosine {
			out[i] = 1 - ip
		} else {
			out[i] = -ip
		}
	}
}

// keywordHits returns the n best versions the query sees that hold any of
// p's words and match its filter, ranked by BM25 over the versions it
// sees: the keyword index holds the versions shown, of which those
// expired by the query's instant and not yet marked count in no
// statistic. mu is held.
func (c *Collection) keywordHits(p *plan, n int) []keyword.Hit {
	unseen := p.view.AppendDue(nil)
	if p.match == nil {
		return c.cat.words.Search(p.terms, n, p.view.OfPublished(), unseen)
	}
	ids := c.matches(p)
	if ids.len() == 0 {
		return nil
	}
	var allow func(vector.ID) bool
	if ids.len() < c.cat.len() {
		var f vector.Filter
		if ids.except != nil {
			// The keyword index holds only published versions.
			f = &allBut{except: ids.except}
		} else if b, ok := newBitFilter(c.next, ids); ok {
			f = b
		} else {
			f = idSet(ids)
		}
		allow = f.Allow
	}
	return c.cat.words.Search(p.terms, n, allow, unseen)
}

// matches returns the versions the query sees that p's filter matches,
// computed once per query (hybrid mode asks twice). mu is held.
func (c *Collection) matches(p *plan) matched {
	if !p.matchedSet {
		sc := p.scratchSpace()
		p.matched, p.matchedSet = c.cat.matchSetInto(p.opts.Filter, p.match, sc.ids, sc.lists), true
		switch {
		case p.matched.except != nil:
			sc.lists = p.matched.except[:0]
		case p.matched.set == nil:
			sc.ids = p.matched.ids[:0] // keep what it grew to
		}
		switch allow := p.view.OfPublished(); {
		case allow == nil:
		case p.matched.except != nil:
			// One pass over the published records, skipping the
			// excluded and those the query does not see.
			ids := sc.ids[:0]
			for _, r := range c.cat.live {
				if !excluded(p.matched.except, r.id) && allow(r.id) {
					ids = append(ids, r.id)
				}
			}
			sc.ids = ids[:0]
			p.matched = matched{ids: ids}
		default:
			p.matched = matched{ids: p.view.Keep(p.matched.slice())}
		}
	}
	return p.matched
}

// vectorHits returns the n nearest versions to q that the query sees and
// p's filter matches. mu is held.
func (c *Collection) vectorHits(ctx context.Context, p *plan, q []float32, n int) ([]vector.Result, error) {
	return c.nearest(ctx, p, q, n, false)
}

// nearest is vectorHits; with walked, a graph's results keep the distances
// its walk gave them (hnsw.SearchOptions.WalkDistances), for a caller that
// scores again those it reports.
func (c *Collection) nearest(ctx context.Context, p *plan, q []float32, n int, walked bool) ([]vector.Result, error) {
	var filter vector.Filter
	if p.match != nil {
		ids := c.matches(p)
		switch {
		case ids.len() == 0:
			return nil, nil
		case ids.len() == c.cat.len():
			// Everything matches: search unfiltered.
		default:
			// Only versions the query sees match.
			filter = c.allowList(ids, n, p.opts.Ef, p.view, p.scratchSpace())
		}
	}
	if filter == nil {
		// The index may hold versions the query does not see: being
		// written, retired, expired.
		filter = p.view.Filter()
	}
	// The graph is called directly, its options on the stack: through
	// the interface they would be allocated for every query.
	if h, ok := c.idx.(*hnsw.Index); ok {
		return h.SearchWith(ctx, q, n, &hnsw.SearchOptions{Ef: p.opts.Ef, WalkDistances: walked, SearchOptions: vector.SearchOptions{Filter: filter}})
	}
	if filter == nil {
		return c.idx.Search(ctx, q, n, nil)
	}
	return c.idx.Search(ctx, q, n, &vector.SearchOptions{Filter: filter})
}
