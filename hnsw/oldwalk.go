package hnsw

// The walk as it was before one walk served every code (greedy and
// greedyCodes, searchLayer and searchCodes, walk and walkCodes), kept
// beside the new one for BenchmarkExperiment and BenchmarkBuildExperiment
// to alternate (experiment == 1 runs it). Removed once measured.

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

func (ix *Index) greedyOld(sc *scratch, q []float32, cur cand, lc int, skip node, skipOn bool) cand {
	for changed := true; changed; {
		changed = false
		l := ix.list(cur.node, lc)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		// Gather and prefetch every neighbour's vector first, then score
		// them together, as in searchLayer.
		batch, vs := sc.batch[:0], sc.vs[:0]
		for i := range ls {
			n := node(atomic.LoadUint32(&ls[i]))
			if skipOn && n == skip {
				continue
			}
			batch = append(batch, n)
			vs = append(vs, ix.vecp(n))
		}
		prefetchAll(vs, ix.pfLines)
		sc.batch, sc.vs = batch, vs
		for i, d := range ix.distances(sc, q, vs) {
			if d < cur.dist {
				cur = cand{d, batch[i]}
				changed = true
			}
		}
	}
	return cur
}

func (ix *Index) searchLayerOld(sc *scratch, q []float32, ent []cand, ef, lc int, query bool, filter vector.Filter, done <-chan struct{}) {
	// Deleted nodes not yet unlinked (tombstones) are walked through
	// but never returned by a query. Inserts do link to them, as to any
	// node (a new node among deleted ones would otherwise get no links);
	// the batch that unlinks them repairs those links.
	tombs := query && len(ix.tombs) > 0
	if query && filter == nil && !tombs && !sc.skipOn {
		ix.searchPoolOld(sc, q, ent, ef, lc, done)
		return
	}
	sc.vis.reset(ix.capacity())
	cands := sc.cands[:0]
	res := sc.res[:0]
	for _, e := range ent {
		if sc.vis.visit(e.node) {
			continue
		}
		cands.push(e)
		if sc.skipOn && e.node == sc.skip {
			continue // an entry, so walked from, but never a result
		}
		if (!tombs || !ix.isTomb(e.node)) && (filter == nil || filter.Allow(ix.idOf(e.node))) {
			if len(res) < ef {
				res.push(e)
			} else if e.dist < res[0].dist {
				res.replaceTop(e)
			}
		}
	}
	if sc.skipOn {
		sc.vis.visit(sc.skip)
	}
	lower := float32(math.Inf(1))
	if len(res) >= ef {
		lower = res[0].dist
	}
	tags, gen := sc.vis.tags, sc.vis.gen
	if cap(sc.batch) < ix.m0 || cap(sc.vs) < ix.m0 {
		sc.batch, sc.vs = make([]node, 0, ix.m0), make([]*float32, 0, ix.m0)
	}
	for steps := 1; len(cands) > 0; steps++ {
		c := cands[0]
		if c.dist > lower && (len(res) >= ef || filter == nil) {
			break
		}
		cands.pop()
		if !query && len(cands) > 0 {
			// An insert's search: fetch the list of the candidate
			// likely expanded next (the new top, unless this
			// expansion finds a closer one) while this one's
			// distances are computed, rather than stalling on it
			// then. Builds interleaved with and without took 0.94–0.97
			// of the time at d = 768 and 0.97 at d = 100, n = 12,000;
			// also fetching the lists of the two candidates after it
			// took 1.01–1.04 (BenchmarkInterleavedExperiment).
			nl := ix.list(cands[0].node, lc)
			prefetchLines(unsafe.Pointer(&nl[0]), 3)
		}
		if done != nil && steps%checkEvery == 0 {
			select {
			case <-done:
				cands = cands[:0]
				continue
			default:
			}
		}
		// Gather the unvisited neighbours and prefetch their vectors
		// before computing any distance, so that the cache misses of a
		// whole neighbour list overlap instead of coming one at a time.
		// One call prefetches them all: against a call per neighbour it
		// takes 0.82, 0.90 and 0.94 of the time at ef = 16, 64, 256
		// (BenchmarkExperiment, clustered d = 100, n = 200,000).
		l := ix.list(c.node, lc)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		batch := sc.batch[:unvisited(ls, tags, gen, sc.batch[:len(ls)])]
		vs := sc.vs[:len(batch)]
		for i, n := range batch {
			vs[i] = ix.vecp(n)
		}
		prefetchAll(vs, ix.pfLines)
		dists := ix.distances(sc, q, vs)
		for i, n := range batch {
			d := dists[i]
			if len(res) < ef || d < lower {
				cands.push(cand{d, n})
				if (!tombs || !ix.isTomb(n)) && (filter == nil || filter.Allow(ix.idOf(n))) {
					// Here len(res) < ef or d < lower = the furthest kept.
					if len(res) < ef {
						res.push(cand{d, n})
					} else {
						res.replaceTop(cand{d, n})
					}
					if len(res) >= ef {
						lower = res[0].dist
					}
				}
			}
		}
	}
	w := sc.w[:0]
	for len(res) > 0 {
		w = append(w, res.pop())
	}
	for i, j := 0, len(w)-1; i < j; i, j = i+1, j-1 {
		w[i], w[j] = w[j], w[i]
	}
	sc.cands, sc.res, sc.w = cands, res, w
}

func (ix *Index) walkOld(sc *scratch, qv []float32, k, ef int, filter vector.Filter, done <-chan struct{}) []vector.Result {
	if qz := ix.quant.q; qz != nil {
		if res, ok := ix.walkCodesOld(sc, qz, qv, k, ef, filter, done); ok {
			return res
		}
	}
	ep, top, ok := ix.entry()
	if !ok {
		return []vector.Result{}
	}
	cur := cand{ix.dist(qv, ix.vec(ep)), ep}
	if sc.skipOn && ep == sc.skip {
		cur.dist = float32(math.Inf(1)) // leave it for any neighbour
	}
	for lc := top; lc > 0; lc-- {
		cur = ix.greedyOld(sc, qv, cur, lc, sc.skip, sc.skipOn)
	}
	sc.ent = append(sc.ent[:0], cur)
	ix.searchLayerOld(sc, qv, sc.ent, ef, 0, true, filter, done)
	// Rank by the one ordering of results, distance then id, before
	// cutting to k, so that ties at the boundary resolve by id. The walk
	// scored most nodes with the four-way gather kernel, which sums in
	// another order than the single one and can differ in the last bit;
	// scoring the ef finalists again with the single kernel (about 1% of
	// a query) makes a reported distance depend only on the query and the
	// vector, the same on every path (the exact one included) and after a
	// reload, whichever way the walk went. Only the finalists that may
	// rank among the first k are scored again: sc.w is sorted by the walk's
	// distance, and past the k-th one by more than twice the bound on the
	// two kernels' difference (rescoreBound) none can (at d = 100 the
	// rescoring of all ef finalists was 7% of a query's instructions).
	t := &sc.top
	t.Reset(k)
	kept, limit := 0, float32(math.Inf(1))
	for _, c := range sc.w {
		if sc.skipOn && c.node == sc.skip {
			continue
		}
		if c.dist > limit {
			break
		}
		t.Push(ix.idOf(c.node), ix.dist(qv, ix.vec(c.node)))
		if kept++; kept == k {
			limit = ix.rescoreLimit(c.dist)
		}
	}
	return t.Results()
}

func (ix *Index) greedyCodesOld(sc *scratch, pq *quant.Query, cur cand, lc int) cand {
	for changed := true; changed; {
		changed = false
		l := ix.list(cur.node, lc)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		batch, cs := sc.batch[:0], sc.vs[:0]
		for i := range ls {
			n := node(atomic.LoadUint32(&ls[i]))
			if sc.skipOn && n == sc.skip {
				continue
			}
			batch = append(batch, n)
			cs = append(cs, ix.codeAddr(n))
		}
		prefetchAll(cs, ix.codeLines)
		sc.batch, sc.vs = batch, cs
		for i, d := range ix.codeDistances(sc, pq, cs) {
			if d < cur.dist {
				cur = cand{d, batch[i]}
				changed = true
			}
		}
	}
	return cur
}

func (ix *Index) searchCodesOld(sc *scratch, pq *quant.Query, e cand, ef, pool int, filter vector.Filter, done <-chan struct{}) {
	sc.vis.reset(ix.capacity())
	cands, res := sc.cands[:0], sc.res[:0]
	// extra holds the pool best scored nodes when pool > ef; it borrows
	// the storage of an insert's buffer (a search inserts nothing).
	extra, wide := maxHeap(sc.keep[:0]), pool > ef
	keepExtra := func(c cand) {
		if len(extra) < pool {
			extra.push(c)
		} else if c.dist < extra[0].dist {
			extra.replaceTop(c)
		}
	}
	tombs := len(ix.tombs) > 0
	allowed := func(n node) bool {
		return (!tombs || !ix.isTomb(n)) && (filter == nil || filter.Allow(ix.idOf(n)))
	}
	sc.vis.visit(e.node)
	cands.push(e)
	if !(sc.skipOn && e.node == sc.skip) && allowed(e.node) {
		res.push(e)
		if wide {
			keepExtra(e)
		}
	}
	if sc.skipOn {
		sc.vis.visit(sc.skip)
	}
	lower := float32(math.Inf(1))
	if len(res) >= ef {
		lower = res[0].dist
	}
	for steps := 1; len(cands) > 0; steps++ {
		c := cands[0]
		if c.dist > lower && (len(res) >= ef || filter == nil) {
			break
		}
		cands.pop()
		if done != nil && steps%checkEvery == 0 {
			select {
			case <-done:
				cands = cands[:0]
				continue
			default:
			}
		}
		l := ix.list(c.node, 0)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		batch, cs := sc.batch[:0], sc.vs[:0]
		for i := range ls {
			n := node(atomic.LoadUint32(&ls[i]))
			if sc.vis.visit(n) {
				continue
			}
			batch = append(batch, n)
			cs = append(cs, ix.codeAddr(n))
		}
		prefetchAll(cs, ix.codeLines)
		sc.batch, sc.vs = batch, cs
		dists := ix.codeDistances(sc, pq, cs)
		for i, n := range batch {
			d := dists[i]
			if wide && (len(extra) < pool || d < extra[0].dist) && allowed(n) {
				keepExtra(cand{d, n})
			}
			if len(res) < ef || d < lower {
				cands.push(cand{d, n})
				if allowed(n) {
					if len(res) < ef {
						res.push(cand{d, n})
					} else {
						res.replaceTop(cand{d, n})
					}
					if len(res) >= ef {
						lower = res[0].dist
					}
				}
			}
		}
	}
	if wide {
		sc.w = append(sc.w[:0], extra...)
	} else {
		sc.w = append(sc.w[:0], res...)
	}
	sc.cands, sc.res, sc.keep = cands, res[:0], extra[:0]
}

func (ix *Index) walkCodesOld(sc *scratch, qz *quant.Quantizer, qv []float32, k, ef int, filter vector.Filter, done <-chan struct{}) ([]vector.Result, bool) {
	ep, top, ok := ix.entry()
	if !ok {
		return []vector.Result{}, true
	}
	if uintptr(qz.GatherSpan()) > ix.rowBytes {
		return nil, false
	}
	pq := &sc.pq
	if err := qz.PrepareInto(pq, qv); err != nil {
		return nil, false
	}
	cur := cand{pq.Distance(ix.code(ep)), ep}
	if sc.skipOn && ep == sc.skip {
		cur.dist = float32(math.Inf(1))
	}
	for lc := top; lc > 0; lc-- {
		cur = ix.greedyCodesOld(sc, pq, cur, lc)
	}
	beam := ef + max(beamMin, (ef+beamWiden-1)/beamWiden)
	keep := max(beam, rescorePool*k)
	if filter == nil && len(ix.tombs) == 0 && !sc.skipOn {
		sc.ent = append(sc.ent[:0], cur)
		ix.walkPoolOld(sc, nil, pq, sc.ent, beam, keep, 0, done)
	} else {
		ix.searchCodesOld(sc, pq, cur, beam, keep, filter, done)
		slices.SortFunc(sc.w, func(a, b cand) int { return cmp.Compare(a.dist, b.dist) })
	}
	return ix.rescore(sc, qv, k, pq.ErrorBound(), pq.NoiseSD()), true
}

func (ix *Index) searchPoolOld(sc *scratch, q []float32, ent []cand, ef, lc int, done <-chan struct{}) {
	ix.walkPoolOld(sc, q, nil, ent, ef, ef, lc, done)
}

func (ix *Index) walkPoolOld(sc *scratch, q []float32, pq *quant.Query, ent []cand, ef, keep, lc int, done <-chan struct{}) {
	sc.vis.reset(ix.capacity())
	tags, gen := sc.vis.tags, sc.vis.gen
	if cap(sc.batch) < ix.m0 || cap(sc.vs) < ix.m0 {
		sc.batch, sc.vs = make([]node, 0, ix.m0), make([]*float32, 0, ix.m0)
	}
	if cap(sc.pool) < keep+1 {
		sc.pool = make([]poolCand, 0, keep+1)
	}
	pool := sc.pool[:0]
	ll := ix.linkLines()
	for _, e := range ent {
		if tags[e.node] == gen {
			continue
		}
		tags[e.node] = gen
		pool, _ = poolInsert(pool, e.dist, e.node, keep)
	}
	cur := 0
	for steps := 1; ; steps++ {
		end := min(len(pool), ef)
		for cur < end && !pool[cur].open {
			cur++
		}
		if cur >= end {
			break
		}
		pool[cur].open = false
		c := pool[cur].node
		if pq != nil {
			// Prefetch the links of the node likely to be expanded next:
			// the next open one, unless this expansion finds a closer
			// one. The cursor moves on to it (every entry before it is
			// closed; an insert before it moves the cursor back, as
			// always), so that the search for it is not repeated. A
			// code's prefetch brings the first two lines of its row,
			// where most of the links lie past them, so that each
			// expansion began with a cache miss on its own list: this
			// takes 0.91–0.94 of the int8 walk's time at ef 200 and 320 on
			// the real 495k × 100-d set, 0.94–1.04 at ef 64
			// (BenchmarkExperiment-style alternation, loaded machine). On
			// the float32 walk, whose vectors' prefetch and reads run
			// into the links, it was 0.95–1.10: not taken there.
			for cur++; cur < end && !pool[cur].open; cur++ {
			}
			if cur < end {
				prefetchLines(unsafe.Pointer(&ix.list(pool[cur].node, lc)[0]), ll)
			}
		}
		if done != nil && steps%checkEvery == 0 {
			select {
			case <-done:
				cur = len(pool)
				continue
			default:
			}
		}
		l := ix.list(c, lc)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		batch := sc.batch[:unvisited(ls, tags, gen, sc.batch[:len(ls)])]
		vs := sc.vs[:len(batch)]
		var dists []float32
		if pq == nil {
			for i, n := range batch {
				vs[i] = ix.vecp(n)
			}
			prefetchAll(vs, ix.pfLines)
			dists = ix.distances(sc, q, vs)
		} else {
			for i, n := range batch {
				vs[i] = ix.codeAddr(n)
			}
			prefetchAll(vs, ix.codeLines)
			dists = ix.codeDistances(sc, pq, vs)
		}
		for i, n := range batch {
			d := dists[i]
			if len(pool) < keep || d < pool[len(pool)-1].dist {
				var p int
				pool, p = poolInsert(pool, d, n, keep)
				cur = min(cur, p)
			}
		}
	}
	w := sc.w[:0]
	for _, c := range pool {
		w = append(w, cand{c.dist, c.node})
	}
	sc.pool, sc.w = pool, w
}
