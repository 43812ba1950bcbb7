package hnsw

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// source is what a walk scores nodes by: the float32 vectors, from the
// prepared query q, or the int8 codes, from the query pq prepared for
// them (pq non-nil): the rows' (Options.Quantize) or a batch's. The
// greedy descent, the layer search and the walk are written once, over a
// source; they differ only in the address they prefetch and the kernel
// they call, which score picks once a neighbour list, not once a node.
type source struct {
	q  []float32
	pq *quant.Query
	// bc, with pq, holds the codes when they are a batch's (buildCodes)
	// rather than the rows'.
	bc *buildCodes
}

// score returns the distances from src's query to the nodes batch, in
// sc.dists, having prefetched what it reads: the nodes' vectors, or their
// codes at the start of their rows.
func (ix *Index) score(sc *scratch, src source, batch []node) []float32 {
	vs := sc.vs[:len(batch)]
	if src.pq == nil {
		for i, n := range batch {
			vs[i] = ix.vecp(n)
		}
		prefetchAll(vs, ix.pfLines)
		return ix.distances(sc, src.q, vs)
	}
	if bc := src.bc; bc != nil {
		for i, n := range batch {
			vs[i] = bc.addr(n)
		}
		prefetchAll(vs, bc.lines)
		return ix.codeDistances(sc, src.pq, vs)
	}
	for i, n := range batch {
		vs[i] = ix.codeAddr(n)
	}
	prefetchAll(vs, ix.codeLines)
	return ix.codeDistances(sc, src.pq, vs)
}

// scoreOne returns the distance from src's query to node n.
func (ix *Index) scoreOne(src source, n node) float32 {
	switch {
	case src.pq == nil:
		return ix.dist(src.q, ix.vec(n))
	case src.bc != nil:
		return src.pq.Distance(src.bc.code(n))
	}
	return src.pq.Distance(ix.code(n))
}

// greedy is the search on an upper layer (paper, Algorithm 2 with ef = 1):
// move to the neighbour closest to the query while one is closer than
// cur.
//
// A node equal to skip (when skipOn) is never moved to: the calibration's
// held-out queries walk the graph as if their own node were not in it.
func (ix *Index) greedy(sc *scratch, src source, cur cand, lc int, skip node, skipOn bool) cand {
	if cap(sc.batch) < ix.m0 || cap(sc.vs) < ix.m0 {
		sc.batch, sc.vs = make([]node, 0, ix.m0), make([]*float32, 0, ix.m0)
	}
	for changed := true; changed; {
		changed = false
		l := ix.list(cur.node, lc)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		// Gather every neighbour first, then prefetch and score them
		// together, as in searchLayer.
		batch := sc.batch[:0]
		for i := range ls {
			n := node(atomic.LoadUint32(&ls[i]))
			if skipOn && n == skip {
				continue
			}
			batch = append(batch, n)
		}
		sc.batch = batch
		for i, d := range ix.score(sc, src, batch) {
			if d < cur.dist {
				cur = cand{d, batch[i]}
				changed = true
			}
		}
	}
	return cur
}

// unvisited writes the nodes of the list ls not yet visited (their tags
// not gen), marking them visited, into batch (of len(ls)) and returns how
// many. It is a function of its own, not inlined, so that its loop keeps
// everything in registers: inside searchLayer the loop counters were
// spilled to the stack and every visited neighbour reloaded half a dozen
// of them. The vectors' addresses are looked up after, in a loop of their
// own.
//
//go:noinline
func unvisited(ls []uint32, tags []uint16, gen uint16, batch []node) int {
	k := 0
	for i := range ls {
		n := node(atomic.LoadUint32(&ls[i]))
		if tags[n] == gen {
			continue
		}
		tags[n] = gen
		batch[k] = n
		k++
	}
	return k
}

// searchLayer is the beam search of the paper (Algorithm 2), the one search
// routine of the index: inserts call it with ef = EfConstruction and no
// filter, queries with ef = max(EfSearch, k) on layer 0 (widened on the
// codes: walk). It leaves in sc.w, sorted by ascending distance, the (up
// to) ef nodes closest to the query that the filter allows, starting from
// the entry points ent; or, when keep > ef, the keep closest allowed nodes
// of all it scored: the beam is unchanged (no more nodes are expanded),
// but nodes just outside it, which int8 estimates may have misranked, are
// rescored too.
//
// A filter does not prune the walk: nodes it rejects are still expanded,
// they only stay out of the results, so a search keeps going until ef
// allowed nodes are found (or the graph is exhausted). done, if non-nil,
// is polled every checkEvery expansions; when it is closed the search stops
// and returns what it has.
//
// Inserts, and queries without a filter, tombstones to leave out or a
// node to skip, walk with walkPool, the same walk on one sorted array;
// the two heaps here serve the other queries.
func (ix *Index) searchLayer(sc *scratch, src source, ent []cand, ef, keep, lc int, query bool, filter vector.Filter, done <-chan struct{}) {
	// Deleted nodes not yet unlinked (tombstones) are walked through
	// but never returned by a query. Inserts do link to them, as to any
	// node (a new node among deleted ones would otherwise get no links);
	// the batch that unlinks them repairs those links.
	tombs := query && len(ix.tombs) > 0
	if !query || filter == nil && !tombs && !sc.skipOn {
		ix.walkPool(sc, src, ent, ef, keep, lc, done)
		return
	}
	sc.vis.reset(ix.capacity())
	cands := sc.cands[:0]
	res := sc.res[:0]
	// extra holds the keep best allowed nodes scored, when keep > ef; it
	// borrows the storage of an insert's buffer (a query inserts
	// nothing, and an insert keeps no more than ef).
	extra, wide := maxHeap(sc.keep[:0]), keep > ef
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
			if wide {
				extra = keepBest(extra, e, keep)
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
		if done != nil && steps%checkEvery == 0 {
			select {
			case <-done:
				cands = cands[:0]
				continue
			default:
			}
		}
		// Gather the unvisited neighbours and prefetch what is scored
		// before computing any distance, so that the cache misses of a
		// whole neighbour list overlap instead of coming one at a time.
		// One call prefetches them all: against a call per neighbour it
		// takes 0.82, 0.90 and 0.94 of the time at ef = 16, 64, 256
		// (BenchmarkExperiment, clustered d = 100, n = 200,000).
		l := ix.list(c.node, lc)
		ls := l[1 : 1+atomic.LoadUint32(&l[0])]
		batch := sc.batch[:unvisited(ls, tags, gen, sc.batch[:len(ls)])]
		dists := ix.score(sc, src, batch)
		for i, n := range batch {
			d := dists[i]
			if len(res) < ef || d < lower {
				cands.push(cand{d, n})
				if (!tombs || !ix.isTomb(n)) && (filter == nil || filter.Allow(ix.idOf(n))) {
					// Here len(res) < ef or d < lower = the furthest kept.
					if wide {
						extra = keepBest(extra, cand{d, n}, keep)
					}
					if len(res) < ef {
						res.push(cand{d, n})
					} else {
						res.replaceTop(cand{d, n})
					}
					if len(res) >= ef {
						lower = res[0].dist
					}
				}
			} else if wide && (len(extra) < keep || d < extra[0].dist) &&
				(!tombs || !ix.isTomb(n)) && (filter == nil || filter.Allow(ix.idOf(n))) {
				extra = keepBest(extra, cand{d, n}, keep) // outside the beam, kept for the rescoring
			}
		}
	}
	w := sc.w[:0]
	if wide {
		w = append(w, extra...)
		slices.SortFunc(w, func(a, b cand) int { return cmpDist(a.dist, b.dist) })
		res = res[:0]
	} else {
		for len(res) > 0 {
			w = append(w, res.pop())
		}
		slices.Reverse(w)
	}
	sc.cands, sc.res, sc.w = cands, res, w
	if wide {
		sc.keep = extra[:0] // its storage, grown, for the next
	}
}

// keepBest adds c to h, the at most keep best candidates, and returns h.
func keepBest(h maxHeap, c cand, keep int) maxHeap {
	if len(h) < keep {
		h.push(c)
	} else if c.dist < h[0].dist {
		h.replaceTop(c)
	}
	return h
}

func cmpDist(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// walk is the graph search for the k nodes nearest to the prepared query
// qv at beam width ef: greedy descent through the upper layers, then the
// beam search of layer 0. With codes (Options.Quantize), both walk the
// codes, the beam is widened (beamWiden) and the finalists are rescored
// exactly (rescore); else the finalists that may rank among the first k
// are scored again by the single kernel (finalists). mu is held. A closed
// done ends it early, with the results found so far.
func (ix *Index) walk(sc *scratch, qv []float32, k, ef int, filter vector.Filter, done <-chan struct{}) []vector.Result {
	ep, top, ok := ix.entry()
	if !ok {
		return []vector.Result{}
	}
	src, beam, keep := source{q: qv}, ef, ef
	if qz := ix.quant.q; qz != nil && ix.prepareCodes(sc, qz, qv) {
		src.pq = &sc.pq
		beam = ef + max(beamMin, (ef+beamWiden-1)/beamWiden)
		keep = max(beam, rescorePool*k)
	}
	cur := cand{ix.scoreOne(src, ep), ep}
	if sc.skipOn && ep == sc.skip {
		cur.dist = float32(math.Inf(1)) // leave it for any neighbour
	}
	for lc := top; lc > 0; lc-- {
		cur = ix.greedy(sc, src, cur, lc, sc.skip, sc.skipOn)
	}
	sc.ent = append(sc.ent[:0], cur)
	ix.searchLayer(sc, src, sc.ent, beam, keep, 0, true, filter, done)
	if src.pq != nil {
		return ix.rescore(sc, qv, k, src.pq.ErrorBound(), src.pq.NoiseSD())
	}
	return ix.finalists(sc, qv, k)
}

// prepareCodes prepares qv for the codes of qz in sc.pq, and reports
// false if it cannot be, or a row is too short for the gather kernel
// (neither is reached: qv passed the same checks, and rows are multiples
// of 64 bytes longer than a code): the walk then scores the vectors.
func (ix *Index) prepareCodes(sc *scratch, qz *quant.Quantizer, qv []float32) bool {
	return uintptr(qz.GatherSpan()) <= ix.rowBytes && qz.PrepareInto(&sc.pq, qv) == nil
}

// finalists returns the k nearest of a float32 walk's finalists sc.w.
//
// Rank by the one ordering of results, distance then id, before cutting
// to k, so that ties at the boundary resolve by id. The walk scored most
// nodes with the four-way gather kernel, which sums in another order than
// the single one and can differ in the last bit; scoring the ef finalists
// again with the single kernel (about 1% of a query) makes a reported
// distance depend only on the query and the vector, the same on every
// path (the exact one included) and after a reload, whichever way the
// walk went. Only the finalists that may rank among the first k are scored
// again: sc.w is sorted by the walk's distance, and past the k-th one by
// more than twice the bound on the two kernels' difference (rescoreLimit)
// none can (at d = 100 the rescoring of all ef finalists was 7% of a
// query's instructions). With sc.walkDists, the first k keep the walk's
// distances (SearchOptions.WalkDistances).
func (ix *Index) finalists(sc *scratch, qv []float32, k int) []vector.Result {
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
		if sc.walkDists {
			t.Push(ix.idOf(c.node), c.dist)
			if kept++; kept == k {
				break
			}
			continue
		}
		t.Push(ix.idOf(c.node), ix.dist(qv, ix.vec(c.node)))
		if kept++; kept == k {
			limit = ix.rescoreLimit(c.dist)
		}
	}
	return t.Results()
}
