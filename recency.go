package cairn

// This file holds recency and importance in ranking: a vector query that
// scores each item by relevance × recency × importance, exactly over the
// ranking the index gives.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/versions"
	"github.com/cairndb/cairn/vector"
)

// Recency asks a vector query to rank items by how relevant, how recent
// and how important they are together, the retrieval score of generative
// agents (Park et al., 2023) as a product:
//
//	score = relevance × 0.5^(age / HalfLife) × importance
//
// where relevance is the item's similarity clipped to [0, 1] — the cosine
// for Cosine (an item no closer than orthogonal is not relevant), the
// inner product for Dot (meant for unit vectors), 1 / (1 + ‖q − v‖) for
// L2 —, age is the time
// since the item's UpdatedAt (0 for a time in the future), and importance
// is the number the item's metadata holds under Importance, clipped to
// [0, 1] (1 where it is missing or not a number, or if Importance is
// empty). [Result.Score] is that score, and the results come best first.
//
// The top k is exact over the index's ranking (exact with Flat; as good
// as the graph's recall at the window's size with HNSW). The query walks
// two lists at once: the index's nearest items, in a window that widens,
// and the items newest first. An item on neither list scores at most
// the least relevance in the window times the recency of the last item
// walked by time (importance is at most 1), so once the k-th best score
// reaches that bound, no other item can beat it. Each round advances the
// list whose factor of the bound is the larger. Once walks go past
// 256 items, the collection keeps int8 codes of the newest items
// they reach (package quant: Dim+4 bytes each, for at most a quarter of
// the items, in memory only), and a walk reads an item's vector only
// where its code, with a strict bound on its error either way, cannot
// rule it out, given the least scores the codes of the others allow.
// A query whose best items all score low walks far: most of the
// collection, when relevance says little (unrelated items alike) and
// recency little more (a half-life much longer than the items' spread
// in time). With MMR, the score stands in for the similarity to the
// query; a reranker is given the best by score. Keyword and hybrid
// queries refuse it.
//
// A query only reads it, so one value may serve many concurrent queries.
type Recency struct {
	// HalfLife is the age at which recency halves. Zero means recency
	// plays no part (only importance does); it must not be negative.
	HalfLife time.Duration
	// Importance is the metadata key of each item's importance, a
	// number from 0 to 1; empty for none.
	Importance string
}

// recencyWindow is the least first window of a recency query, which is
// also at least its pool and the graph's beam. A wider first window of a
// scan lowers the bound the walk must beat, but keeping its results costs
// more than the walk saves (measured in BENCHMARKS.md).
const recencyWindow = 10

// checkRecency checks r for a query in mode.
func checkRecency(r *Recency, mode QueryMode, bad func(string, ...any) error) error {
	if mode != VectorMode {
		return bad("Recency in %v mode: it ranks the vector list only", mode)
	}
	if r.HalfLife < 0 {
		return bad("Recency HalfLife %v is negative", r.HalfLife)
	}
	return nil
}

// relevance is a similarity brought into [0, 1], as Recency defines it.
func relevance(sim float64) float64 { return min(max(sim, 0), 1) }

// recencyScore returns the score of record rec at relevance rel, at now
// (Unix nanoseconds).
func recencyScore(r *Recency, rec *record, rel float64, now int64) float64 {
	return rel * r.decay(rec, now) * r.importance(rec)
}

// decay is the recency factor of rec at now: 1 without a half-life, and
// for an UpdatedAt not before now, or none.
func (r *Recency) decay(rec *record, now int64) float64 {
	if r.HalfLife > 0 && rec.updated != noTime {
		return math.Exp2(-ageAt(now, rec.updated) / float64(r.HalfLife))
	}
	return 1
}

// ageAt returns how long before now (Unix nanoseconds) time t is, 0 if
// it is not before: in float64, with no overflow for any two times.
func ageAt(now, t int64) float64 {
	if t >= now {
		return 0
	}
	return float64(uint64(now) - uint64(t)) // the difference fits in a uint64
}

// importance is the importance factor of rec: 1 without an Importance key
// or where rec holds no number under it.
func (r *Recency) importance(rec *record) float64 {
	if r.Importance != "" {
		if v, ok := rec.md.get(r.Importance); ok && v.kind == kindNumber {
			return min(max(v.num, 0), 1)
		}
	}
	return 1
}

// recentHits returns the candidates of a vector query with Recency, the
// pool best by its score, best first (ties by distance). It walks two
// lists, as Fagin's threshold algorithm does: the index's nearest items,
// in a window that widens, and, when recency plays a part, the items
// newest first (catalog.times), each scored exactly. An item on neither
// list scores at most the least relevance in the window times the
// recency of the newest item not walked, so once the pool's last score
// reaches that bound, no other item can beat it. Each round searches the
// window, then walks as far as the bound needs (the items newer than the
// recency it needs are counted in the time order), stopping early when
// the pool's last score rises enough, but no further than four items for
// each distance that widening the window four times would cost
// (widenCost: most walked items are skipped without a distance); then, if
// the bound is not reached, it widens the window. The first window is at
// least the graph's beam, which a search fills whatever it is asked for;
// the walk starts once that window is in the pool, whose last score lets
// it skip most items. mu is held.
func (c *Collection) recentHits(ctx context.Context, p *plan, q []float32) ([]candidate, error) {
	r := p.opts.Recency
	now := p.view.Now()
	n := c.cat.len()
	byTime := recentWalk{c: c, r: r, view: p.view, match: p.match, minSim: p.opts.MinSimilarity, now: now, recent: 1}
	sc := p.scratchSpace()
	sc.query = slices.Grow(sc.query[:0], c.cfg.Dim)[:c.cfg.Dim]
	if err := vector.PrepareInto(sc.query, q, c.cfg.Dim, c.cfg.Metric); err != nil {
		return nil, fmt.Errorf("cairn: query: %w", err)
	}
	byTime.q, byTime.batch = sc.query, &sc.batch
	if r.HalfLife > 0 {
		byTime.list, byTime.imps, byTime.codes = c.cat.times.ordered(ctx, r, c.st)
		byTime.next = len(byTime.list.recs) - 1
		if byTime.codes.qz != nil {
			byTime.cb = &sc.codes
			if err := byTime.cb.prepare(&byTime.codes, q); err != nil {
				return nil, fmt.Errorf("cairn: query: %w", err)
			}
		}
	}
	step := max(recencyWindow, p.pool, c.beamWidth(p))
	// A graph's window keeps the distances its walk gave (the pool's
	// are scored again at the end: scoreWalked).
	_, walked := c.idx.(*hnsw.Index)
	var (
		best  = scoredPool{k: p.pool, h: sc.pool[:0]}
		last  = 1.0 // the least relevance in the window
		whole bool  // the window holds every item that can pass
		w     = 0
	)
	// reached reports whether no item outside the lists can beat the
	// pool's last.
	reached := func() bool {
		return whole || byTime.done() || best.full() && best.floor() >= last*byTime.recent
	}
	for {
		if !whole {
			w = min(max(step, 4*w), n)
			hits, err := c.nearest(ctx, p, q, w, walked)
			if err != nil {
				return nil, fmt.Errorf("cairn: query: %w", err)
			}
			last = 0
			stopped := false // MinSimilarity stopped the list: nothing beyond can pass it
			recs := hitRecords(&c.cat.recs, hits, sc)
			for i, h := range hits {
				sim := similarity(c.cfg.Metric, h.Distance)
				if p.opts.MinSimilarity != nil && sim < *p.opts.MinSimilarity {
					stopped = true // similarity falls as distance grows
					break
				}
				last = relevance(sim)
				rec := recs[i]
				d := r.decay(rec, now)
				if best.full() && last*d < best.floor() {
					continue // its importance is at most 1: it cannot make the pool
				}
				wt := d * byTime.importance(rec)
				best.push(scoredRec{rec: rec, dist: h.Distance, sim: sim, rank: i + 1,
					score: last * wt, weight: wt, walked: walked})
			}
			whole = stopped || len(hits) < w || w == n
		}
		if reached() {
			break
		}
		if byTime.walking() {
			// Walk as far as the bound needs (the items whose recency,
			// times the window's last relevance, is above the pool's last
			// score), stopping early if the pool rises, but not much
			// further than widening the window would cost.
			to := -1
			if best.full() {
				to = byTime.cut(best.floor() / last)
			}
			if !whole {
				to = max(to, byTime.next-4*c.widenCost(4*w))
			}
			if err := byTime.walk(max(to, -1), &best, last); err != nil {
				return nil, err
			}
			if reached() {
				break
			}
		}
	}
	if byTime.walking() {
		c.cat.times.noteWalk(len(byTime.list.keys) - 1 - byTime.next)
	}
	pool, err := byTime.scoreWalked(best.h)
	if err != nil {
		return nil, err
	}
	sc.pool = pool
	cands := make([]candidate, len(pool))
	for i := range cands {
		s := &pool[i]
		cands[i].rec = s.rec
		cands[i].res.Distance, cands[i].res.Similarity, cands[i].res.Score, cands[i].res.VectorRank = float64(s.dist), s.sim, s.score, s.rank
	}
	return cands, nil
}

// hitRecords returns the record of each hit, in sc's memory, having read
// each one's time. It reads in three passes of independent loads — the
// hits' pages of the record table, their slots, then the records — so
// that the cache misses of each pass overlap, rather than come one after
// another for each hit.
func hitRecords(t *recTable, hits []vector.Result, sc *queryScratch) []*record {
	pages := sc.pages[:0]
	for _, h := range hits {
		pages = append(pages, t.page(h.ID))
	}
	recs := sc.recs[:0]
	for i, h := range hits {
		recs = append(recs, pages[i].recs[h.ID&(1<<recPageBits-1)])
	}
	var sum int64
	for _, r := range recs {
		sum += r.updated
	}
	clear(pages)
	sc.pages, sc.recs, sc.sink = pages, recs, sum
	return recs
}

// scoreWalked returns the pool's items best first, having scored again,
// from their vectors, those whose distance a graph's walk gave: a walk
// scores a node four at a time or alone, as its path went, and the two
// can differ in the last bits, so each distance reported comes from the
// one kernel the walk by time uses, whatever path found the item. The
// pool's order was decided on the walk's distances, as the window's own
// was: a difference in the last bits is far below what the graph's recall
// leaves out. An item that MinSimilarity then refuses is dropped.
func (b *recentWalk) scoreWalked(pool []scoredRec) ([]scoredRec, error) {
	t := b.batch
	for from := 0; from < len(pool); {
		g := 0
		var at [walkBatchLen]int
		for ; from < len(pool) && g < walkBatchLen; from++ {
			if !pool[from].walked {
				continue
			}
			v, err := b.c.st.Get(pool[from].rec.id)
			if err != nil { // a published version's vector is in the store
				return nil, fmt.Errorf("cairn: query: %w: item %q has no vector: %v", vector.ErrCorrupt, pool[from].rec.key, err)
			}
			t.rows[g], at[g] = &v[0], from
			g++
		}
		b.c.distances(b.q, t.rows[:g], t.dists[:g])
		for h, i := range at[:g] {
			s := &pool[i]
			s.dist, s.sim, s.walked = t.dists[h], similarity(b.c.cfg.Metric, t.dists[h]), false
			s.score = relevance(s.sim) * s.weight
		}
	}
	if b.minSim != nil {
		pool = slices.DeleteFunc(pool, func(s scoredRec) bool { return s.sim < *b.minSim })
	}
	slices.SortFunc(pool, cmpScored)
	return pool, nil
}

// widenCost is about what a search for the w nearest costs, in
// distances: a scan computes one per item, a graph search a few per item
// it returns.
func (c *Collection) widenCost(w int) int {
	if c.kind == HNSW {
		return 4 * w
	}
	return c.cat.len()
}

// beamWidth is how many nearest items a graph search of the query
// finds whatever it is asked for (its beam, Ef); 0 for a scan.
func (c *Collection) beamWidth(p *plan) int {
	h, ok := c.idx.(*hnsw.Index)
	if !ok {
		return 0
	}
	if p.opts.Ef > 0 {
		return p.opts.Ef
	}
	return h.Options().EfSearch
}

// scoredRec is an item a recency query has scored.
type scoredRec struct {
	rec    *record
	dist   float32
	rank   int // in the window, from 1; 0 if walked by time
	sim    float64
	score  float64
	weight float64 // recency × importance
	// walked says dist is the one a graph's walk gave, which is scored
	// again before it is reported (recentWalk.scoreWalked).
	walked bool
}

// cmpScored orders by score, best first, then by distance, nearest
// first, then by id.
func cmpScored(a, b scoredRec) int {
	if c := cmpFloat(b.score, a.score); c != 0 {
		return c
	}
	if c := cmpFloat(float64(a.dist), float64(b.dist)); c != 0 {
		return c
	}
	return cmp.Compare(a.rec.id, b.rec.id)
}

// scoredPool keeps the k best items pushed (by cmpScored), each once: a
// heap with the worst at its root. The items that leave it are worse than
// every one it keeps, so its last score only rises.
type scoredPool struct {
	k int
	h []scoredRec
}

func (p *scoredPool) full() bool { return len(p.h) >= p.k }

// floor is the pool's last score; the pool is full.
func (p *scoredPool) floor() float64 { return p.h[0].score }

// has reports whether rec is in the pool.
func (p *scoredPool) has(rec *record) bool {
	for i := range p.h {
		if p.h[i].rec == rec {
			return true
		}
	}
	return false
}

// worse reports whether h[i] ranks after h[j].
func (p *scoredPool) worse(i, j int) bool { return cmpScored(p.h[i], p.h[j]) > 0 }

// push adds s if the pool is not full or s beats its worst, and s's item
// is not in the pool already (both lists may find an item: then the
// window's rank is kept).
func (p *scoredPool) push(s scoredRec) {
	if p.full() && cmpScored(s, p.h[0]) > 0 {
		return
	}
	for i := range p.h {
		if p.h[i].rec == s.rec {
			p.h[i].rank = max(p.h[i].rank, s.rank)
			return
		}
	}
	if !p.full() {
		p.h = append(p.h, s)
		for i := len(p.h) - 1; i > 0 && p.worse(i, (i-1)/2); i = (i - 1) / 2 {
			p.h[i], p.h[(i-1)/2] = p.h[(i-1)/2], p.h[i]
		}
		return
	}
	p.h[0] = s
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(p.h) && p.worse(l, m) {
			m = l
		}
		if r < len(p.h) && p.worse(r, m) {
			m = r
		}
		if m == i {
			return
		}
		p.h[i], p.h[m] = p.h[m], p.h[i]
		i = m
	}
}

// recentWalk is the walk of a recency query through the items newest
// first.
type recentWalk struct {
	c *Collection
	// The query's: not its plan, which would then leave the stack of
	// every query.
	r      *Recency
	view   versions.View
	match  matcher
	minSim *float64
	now    int64
	q      vector.Vector // the query, prepared
	list   timeList      // oldest first; empty when recency plays no part
	imps   []float64     // the importance of each item of list; nil for none
	next   int           // the index in list of the next item to walk
	recent float64       // the recency of the newest item not walked: the most any not walked has
	batch  *walkBatch    // the items waiting to be scored, empty between walks
	codes  recentCodes   // codes of the newest items of list
	cb     *codeBound    // the query prepared for codes; nil without
}

// walk scores the items of the list above index to (the newer ones)
// that the query sees, pushing them to best, and sets recent to the
// recency of the newest item left. It skips those that cannot beat the
// k-th best score known (not in the window, their relevance is at most
// last), and it stops early once no item left can.
func (b *recentWalk) walk(to int, best *scoredPool, last float64) error {
	keys := b.list.keys
	b.batch.sure.reset(best)
	// Most items are passed over, by tests that read only the keys and
	// importances, in sequence: an item whose time is not after stop, or
	// whose importance is below pass, scores below the k-th best score
	// known (floor). The others wait in a batch, sifted together so that
	// the reads of their codes and records overlap. floor rises only when
	// a batch is sifted, and with it stop and pass; an item may then be
	// sifted that a walk one at a time would have passed over, never the
	// other way.
	floor, stop := -1.0, int64(math.MinInt64)
	// high is the recency of an item walked, at least that of every older
	// one: pass uses it for the items older by less than HalfLife/decayRun
	// (those not before highEnd).
	high, highEnd := 1.0, int64(math.MaxInt64)
	pass := math.Inf(-1)
	t := b.batch
	for b.next > to {
		if f := t.sure.floor(); f > floor {
			floor, stop = f, b.stopTime(f, last)
			pass = passBelow(floor, last*high)
		}
		if k := keys[b.next]; k <= stop {
			break // this item and every older one score at most floor
		} else if k < highEnd {
			high, highEnd = b.decay(k), math.MinInt64
			if run := int64(b.r.HalfLife / decayRun); k > math.MinInt64+run {
				highEnd = k - run
			}
			pass = passBelow(floor, last*high)
		}
		// The items down to the next change of floor, stop or high.
		for ; b.next > to; b.next-- {
			i := b.next
			if k := keys[i]; k <= stop || k < highEnd {
				break
			}
			imp := 1.0
			if b.imps != nil {
				imp = b.imps[i]
			}
			if imp < pass {
				continue
			}
			t.idx[t.n], t.imps[t.n], t.weights[t.n] = i, imp, high*imp
			t.n++
			if t.n == walkBatchLen {
				b.next--
				if err := b.sift(best, last); err != nil {
					return err
				}
				break
			}
		}
	}
	if err := b.sift(best, last); err != nil {
		return err
	}
	if err := b.read(best); err != nil {
		return err
	}
	b.recent = 0
	if b.next >= 0 {
		b.recent = b.decay(keys[b.next])
	}
	return nil
}

// importance is rec's importance (Recency.importance): read from the
// list's importances where rec's place in the list is known, which is
// cheaper than a lookup in its metadata.
func (b *recentWalk) importance(rec *record) float64 {
	if b.imps != nil {
		if i := rec.tpos.Load(); i < int64(len(b.list.recs)) && b.list.recs[i] == rec {
			return b.imps[i]
		}
	}
	return b.r.importance(rec)
}

// passBelow returns the importance below which an item of relevance ×
// recency at most lr scores below floor: a little lower than
// floor / lr, so that rounding never passes over an item that can
// reach floor; -Inf when none scores below it.
func passBelow(floor, lr float64) float64 {
	switch {
	case floor <= 0:
		return math.Inf(-1)
	case lr <= 0:
		return math.Inf(1)
	}
	return floor / lr * (1 - 1e-9)
}

// sift empties the batch: the items the query sees (published, visible,
// passing its filter) that may beat the k-th best score known join the
// waiting list, each with the most it can score. Items whose codes bound
// their score below that score are passed over first, before their
// records are read. A code also bounds its item's score from below, and
// that least score counts among the known ones (sure): the floor rises
// before any vector is read, and with it the walk's stop and pass. The
// waiting items are read once the walk ends, or once many wait (read).
// On 100,000 memories (bench/agentmem) a query read 16 items' vectors
// instead of the 41 it read when each batch was read as it was sifted.
func (b *recentWalk) sift(best *scoredPool, last float64) error {
	t := b.batch
	for j := range t.n {
		// An item not in the window is at most last relevant.
		t.highRel[j], t.lowRel[j], t.hasCode[j] = last, 0, false
	}
	if b.cb != nil {
		b.passOver(t.sure.floor())
	}
	for j := range t.n {
		if t.weights[j] < 0 {
			continue // passed over
		}
		// A coded item's recency × importance is at most weights[j],
		// and at least runLow of it: its own is computed if it is read.
		// An item without a code is read with this batch (below).
		w := -1.0
		bound := t.highRel[j] * t.weights[j]
		if !t.hasCode[j] {
			w = b.decay(b.list.keys[t.idx[j]]) * t.imps[j]
			bound = t.highRel[j] * w
		}
		if bound < t.sure.floor() {
			continue
		}
		rec := b.list.recs[t.idx[j]]
		wr := waitingRec{rec: rec, idx: t.idx[j], imp: t.imps[j], weight: w, bound: bound}
		low := t.lowRel[j] * t.weights[j] * runLow
		if low <= 0 || low <= t.sure.floor() {
			// Its record is read only if it is still in the running
			// when the waiting items are read.
			t.waiting = append(t.waiting, wr)
			if !t.hasCode[j] {
				t.uncoded++
			}
			continue
		}
		if !b.sees(rec) {
			continue
		}
		wr.seen = true
		t.waiting = append(t.waiting, wr)
		if !best.has(rec) {
			t.sure.add(low)
		}
	}
	t.n = 0
	if len(t.waiting) >= maxWaiting || t.uncoded > 0 {
		return b.read(best)
	}
	return nil
}

// sees reports whether the query sees rec: published, visible, passing
// its filter.
func (b *recentWalk) sees(rec *record) bool {
	return rec.published() && b.view.Allow(rec.id) && (b.match == nil || b.match(rec))
}

// maxWaiting is how many items may wait for their vectors before the
// walk reads them. Items without a code raise no floor while they wait,
// so a batch that leaves any waiting is read at once: the floor from
// their distances is then the only one that rises.
const maxWaiting = 256

// read scores the waiting items from their vectors and pushes them to
// best, best bound first, a few at a time (their reads overlapping); once
// the k-th best score known passes the bound of the next, that one and
// every one after it are passed over: their bound is the most they can
// score. It empties the list, and the known scores are the pool's again.
func (b *recentWalk) read(best *scoredPool) error {
	t, c := b.batch, b.c
	wait := t.waiting
	// Most items that joined early wait below the scores known since.
	floor := t.sure.floor()
	t.order = t.order[:0]
	for i := range wait {
		if wait[i].bound >= floor {
			t.order = append(t.order, int32(i))
		}
	}
	slices.SortFunc(t.order, func(x, y int32) int { return cmpFloat(wait[y].bound, wait[x].bound) })
	for ord := t.order; len(ord) > 0; {
		cut := t.sure.floor()
		if best.full() {
			cut = max(cut, best.floor())
		}
		g := 0
		for ; len(ord) > 0 && g < scoreGroup && wait[ord[0]].bound >= cut; ord = ord[1:] {
			w := &wait[ord[0]]
			if !w.seen && !b.sees(w.rec) {
				continue
			}
			v, err := c.st.Get(w.rec.id)
			if err != nil { // a published version's vector is in the store
				clear(t.waiting)
				t.waiting = t.waiting[:0]
				return fmt.Errorf("cairn: query: %w: item %q has no vector: %v", vector.ErrCorrupt, w.rec.key, err)
			}
			t.rows[g], t.group[g] = &v[0], w
			g++
		}
		if g == 0 {
			break // the bounds left are below the k-th best score, and fall
		}
		c.distances(b.q, t.rows[:g], t.dists[:g])
		for h, w := range t.group[:g] {
			d := t.dists[h]
			sim := similarity(c.cfg.Metric, d)
			if b.minSim != nil && sim < *b.minSim {
				continue
			}
			wt := w.weight
			if wt < 0 {
				wt = b.decay(b.list.keys[w.idx]) * w.imp
			}
			best.push(scoredRec{rec: w.rec, dist: d, sim: sim, score: relevance(sim) * wt})
		}
	}
	clear(t.waiting)
	t.waiting, t.uncoded = t.waiting[:0], 0
	t.sure.reset(best)
	return nil
}

// scoreGroup is how many waiting items read scores together.
const scoreGroup = 4

// passOver marks (with a weight of -1) the batch's items whose codes
// bound their score below floor, or their similarity below
// MinSimilarity, and sets the bounds of the others' relevance from their
// codes: at most highRel, at least lowRel (0 where MinSimilarity may
// drop the item).
func (b *recentWalk) passOver(floor float64) {
	t, rc := b.batch, &b.codes
	m := 0
	for j := range t.n {
		if rc.has(t.idx[j]) {
			t.codes[m], t.coded[m] = rc.code(t.idx[j]), j
			m++
		}
	}
	b.cb.q.GatherDistances(t.codes[:m], t.dists[:m])
	for h, j := range t.coded[:m] {
		t.hasCode[j] = true
		resid := rc.resid[t.idx[j]-rc.from]
		sim := similarity(b.c.cfg.Metric, b.cb.lowest(t.dists[h], resid))
		if relevance(sim)*t.weights[j] < floor || b.minSim != nil && sim < *b.minSim {
			t.weights[j] = -1
			continue
		}
		t.highRel[j] = relevance(sim)
		if low := similarity(b.c.cfg.Metric, b.cb.highest(t.dists[h], resid)); b.minSim == nil || low >= *b.minSim {
			t.lowRel[j] = relevance(low)
		}
	}
}

// walkBatch is the items a walk has yet to sift: their indexes in the
// list, their importances and a bound on their recency × importance,
// then, while sift runs, their codes and the bounds of their relevance;
// and the items waiting for their vectors, with the scores known.
type walkBatch struct {
	n       int
	idx     [walkBatchLen]int
	imps    [walkBatchLen]float64
	weights [walkBatchLen]float64
	highRel [walkBatchLen]float64
	lowRel  [walkBatchLen]float64
	hasCode [walkBatchLen]bool
	codes   [walkBatchLen]*byte
	coded   [walkBatchLen]int // the batch index of each of codes
	dists   [walkBatchLen]float32
	rows    [walkBatchLen]*float32

	waiting []waitingRec
	uncoded int                     // how many of waiting have no code
	order   []int32                 // read's order of the waiting items, best bound first
	group   [scoreGroup]*waitingRec // the waiting items read scores together
	sure    sureScores
}

// walkBatchLen is how many items a walk sifts together.
const walkBatchLen = 32

// waitingRec is a walked item waiting for its vector.
type waitingRec struct {
	rec    *record
	idx    int     // its index in the list
	imp    float64 // its importance
	weight float64 // its recency × importance; -1 until computed
	bound  float64 // the most it can score
	seen   bool    // the query is known to see it (recentWalk.sees)
}

// sureScores is the k best of scores that distinct items are known to
// reach: the pool's, and the least that the codes of items waiting for
// their vectors allow (none of them in the pool). No item scoring below
// the k-th of them can make the pool. A heap with the least at its root.
type sureScores struct {
	k int
	h []float64
}

// reset makes the scores those of the pool.
func (s *sureScores) reset(best *scoredPool) {
	s.k, s.h = best.k, s.h[:0]
	for _, r := range best.h {
		s.add(r.score)
	}
}

// floor returns the k-th best score, or -1 if fewer than k are known.
func (s *sureScores) floor() float64 {
	if len(s.h) < s.k {
		return -1
	}
	return s.h[0]
}

// add counts a score of an item not counted yet.
func (s *sureScores) add(x float64) {
	if len(s.h) < s.k {
		s.h = append(s.h, x)
		for i := len(s.h) - 1; i > 0 && s.h[i] < s.h[(i-1)/2]; i = (i - 1) / 2 {
			s.h[i], s.h[(i-1)/2] = s.h[(i-1)/2], s.h[i]
		}
		return
	}
	if x <= s.h[0] {
		return
	}
	s.h[0] = x
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(s.h) && s.h[l] < s.h[m] {
			m = l
		}
		if r < len(s.h) && s.h[r] < s.h[m] {
			m = r
		}
		if m == i {
			return
		}
		s.h[i], s.h[m] = s.h[m], s.h[i]
		i = m
	}
}

// A walk tests the items up to HalfLife/decayRun older than one it
// computed the recency of against that recency, over 0.5% more than
// theirs at most; each item it reads gets its own.
const decayRun = 128

// runLow is the least recency of an item of such a run, relative to the
// recency the walk computed: 2^(-1/decayRun), a little less so that
// rounding never makes it more.
var runLow = math.Exp2(-1.0/decayRun) * (1 - 1e-9)

// decay is the recency of an item of time key k (Recency.decay).
func (b *recentWalk) decay(k int64) float64 {
	return math.Exp2(-ageAt(b.now, k) / float64(b.r.HalfLife))
}

// stopTime returns the latest time key of an item that, with a relevance
// of at most last, scores at most floor (whose recency is at most
// floor/last): every item whose key is not after it does too.
func (b *recentWalk) stopTime(floor, last float64) int64 {
	switch {
	case floor >= last:
		return math.MaxInt64 // recency is at most 1
	case floor <= 0 || b.r.HalfLife <= 0:
		return math.MinInt64
	}
	// recency = 2^(-(now-t)/HalfLife) <= x  <=>  t <= now + HalfLife·log2(x);
	// a nanosecond less keeps the rounding of the logarithm on the safe side.
	back := -math.Log2(floor/last) * float64(b.r.HalfLife)
	if back >= float64(b.now)-float64(math.MinInt64) {
		return math.MinInt64
	}
	return b.now - int64(math.Ceil(back)) - 1
}

// cut returns the index in the list of the newest item whose recency is
// at most x: the walk must go down to it for the recency of the items
// left to be at most x.
func (b *recentWalk) cut(x float64) int {
	if x >= 1 {
		return b.next
	}
	// The first (oldest first) index whose key is after the latest
	// whose recency is at most x, less one.
	i, _ := slices.BinarySearch(b.list.keys, b.stopTime(x, 1)+1)
	return min(i-1, b.next)
}

// walking reports whether the query walks the items by time: whether
// recency plays a part.
func (b *recentWalk) walking() bool { return b.r.HalfLife > 0 }

// done reports whether the walk has seen every item.
func (b *recentWalk) done() bool { return b.walking() && b.next < 0 }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
