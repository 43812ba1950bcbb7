package hnsw

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/cairndb/cairn/vector"
)

// FilterCrossover sets when a search with an allow-list ([*vector.IDSet])
// of s ids scores those ids exactly instead of walking the graph: when
// s² ≤ FilterCrossover · ef · n, for n indexed vectors.
//
// Why that shape: a walk with a filter that keeps a fraction p = s/n of the
// nodes must expand about ef/p nodes before it has collected ef allowed
// ones, so its cost grows like ef·n/s, while the exact scan costs s; they
// meet at s² ∝ ef·n. The constant was measured with BenchmarkFilter
// (clustered 768-d, n = 10,000, M = 16, ef = 64): the walk takes 3.8 ms
// with 100 allowed ids, 0.77 ms with 2,000 and 0.44 ms with 4,000; the exact
// scan 0.013, 0.39 and 0.77 ms; they cross near s = 3,000, which gives
// 3000² / (64 · 10,000) ≈ 14. With the defaults that is every allow-list
// below about 30% of a 10,000-vector index and about 9% of a 100,000 one.
// Below the crossover the exact scan is also exact.
const FilterCrossover = 14

// filterCrossover is FilterCrossover, variable for the crossover benchmark.
var filterCrossover float64 = FilterCrossover

// exactFilter reports whether an allow-list of s ids is scored exactly.
func exactFilter(s, ef, n int) bool {
	return float64(s)*float64(s) <= filterCrossover*float64(ef)*float64(n)
}

// searchEf returns the beam width of a search for k results asked for
// with ef (0 for the index's EfSearch).
func (ix *Index) searchEf(ef, k int) int {
	if ef == 0 {
		ef = ix.opts.EfSearch
	}
	return max(ef, k)
}

// ScoresSetExactly reports whether a search for k results at beam width ef
// (0 for [Options].EfSearch) with an allow-list ([*vector.IDSet]) of s ids
// scores those ids exactly instead of walking the graph, by the rule of
// [FilterCrossover]. Callers that build allow-lists use it to choose their
// representation: a set only where the index will iterate it.
func (ix *Index) ScoresSetExactly(s, k, ef int) bool {
	return exactFilter(s, ix.searchEf(ef, k), ix.liveCount())
}

// checkEvery is the number of nodes a search expands between checks of its
// context.
const checkEvery = 256

// experiment selects a variant of the code under measurement: 0 always in
// the library. To compare a change, branch on experiment == 1 beside the
// current code and run BenchmarkExperiment or BenchmarkBuildExperiment,
// which alternate the two in one process; no code branches on it now.
var experiment int

// greedy is the search on an upper layer (paper, Algorithm 2 with ef = 1):
// move to the neighbour closest to q while one is closer than cur.
//
// A node equal to skip (when skipOn) is never moved to: the calibration's
// held-out queries walk the graph as if their own node were not in it.
func (ix *Index) greedy(sc *scratch, q []float32, cur cand, lc int, skip node, skipOn bool) cand {
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
// filter, queries with ef = max(EfSearch, k) on layer 0. It leaves in sc.w
// the (up to) ef nodes closest to q that the filter allows, sorted by
// ascending distance, starting from the entry points ent.
//
// A filter does not prune the walk: nodes it rejects are still expanded,
// they only stay out of the results, so a search keeps going until ef
// allowed nodes are found (or the graph is exhausted). done, if non-nil,
// is polled every checkEvery expansions; when it is closed the search stops
// and returns what it has.
//
// A query without a filter, tombstones to leave out or a node to skip
// walks with searchPool, the same walk on one sorted array; the two heaps
// here serve the others and every insert. (Inserts through searchPool
// built graphs that differ where distances tie, as the two order ties
// differently, and on data with many exact duplicates under Dot some
// duplicates lost every in-link: TestWalkRanksLikeExact.)
func (ix *Index) searchLayer(sc *scratch, q []float32, ent []cand, ef, lc int, query bool, filter vector.Filter, done <-chan struct{}) {
	// Deleted nodes not yet unlinked (tombstones) are walked through
	// but never returned by a query. Inserts do link to them, as to any
	// node (a new node among deleted ones would otherwise get no links);
	// the batch that unlinks them repairs those links.
	tombs := query && len(ix.tombs) > 0
	if query && filter == nil && !tombs && !sc.skipOn {
		ix.searchPool(sc, q, ent, ef, lc, done)
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

// Search returns up to k stored vectors nearest to q, closest first (ties
// by ascending id), searching with [Options.EfSearch]; see [vector.Index].
// It is [Index.SearchWith] with the common options only.
func (ix *Index) Search(ctx context.Context, q vector.Vector, k int, opts *vector.SearchOptions) ([]vector.Result, error) {
	var o SearchOptions
	if opts != nil {
		o.SearchOptions = *opts
	}
	return ix.SearchWith(ctx, q, k, &o)
}

// SearchWith is Search with HNSW's options: o.Ef overrides EfSearch for this
// query. o may be nil. It returns an error wrapping [vector.ErrInvalidK] for
// k <= 0, [vector.ErrInvalidOptions] for an Ef out of range, the
// validation errors of [vector.Check] for q, and ctx's error if ctx is done
// before or during the search.
//
// With a filter, the walk goes on through nodes the filter rejects, so k
// results come back whenever k allowed vectors are reachable; a small
// [*vector.IDSet] is scored exactly instead (see [FilterCrossover]).
func (ix *Index) SearchWith(ctx context.Context, q vector.Vector, k int, o *SearchOptions) ([]vector.Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("hnsw: search: %w: k = %d", vector.ErrInvalidK, k)
	}
	var so SearchOptions
	if o != nil {
		so = *o
	}
	if so.Ef < 0 || so.Ef > MaxEf {
		return nil, fmt.Errorf("hnsw: search: %w: Ef = %d, want 0..%d", vector.ErrInvalidOptions, so.Ef, MaxEf)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	if cap(sc.q) < ix.dim {
		sc.q = make([]float32, ix.dim)
	}
	qv := sc.q[:ix.dim]
	if err := vector.PrepareInto(qv, q, ix.dim, ix.metric); err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	ef, exact := ix.searchEf(so.Ef, k), false
	if so.Ef == 0 && ix.opts.TargetRecall != 0 {
		ef, exact = ix.targetEf(k)
		if so.Filter == nil {
			ix.recordQuery(qv)
		}
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if exact {
		return ix.searchAll(ctx, qv, k, so.Filter)
	}
	if set, ok := so.Filter.(*vector.IDSet); ok && exactFilter(set.Len(), ef, ix.liveCount()) {
		return ix.searchExact(qv, k, set), nil
	}
	res := ix.walk(sc, qv, k, ef, so.Filter, ctx.Done())
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	return res, nil
}

// searchPrepared is a search for a prepared query at beam width ef, for
// the index's own measurements: it is not recorded as a query and cannot
// be cancelled; filter (nil for none) is the calibration's universe. It
// also returns the number of nodes the walk scored.
//
// With skipOn, the id skip is walked around as if it were not in the
// graph: never moved to on the upper layers, never expanded or returned on
// layer 0 (unless the walk has no other way in).
func (ix *Index) searchPrepared(q []float32, k, ef int, skip vector.ID, skipOn bool, filter vector.Filter) ([]vector.Result, int) {
	sc := ix.getScratch()
	defer func() {
		sc.skipOn = false
		ix.scratch.Put(sc)
	}()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if skipOn {
		ix.idMu.Lock()
		sc.skip, sc.skipOn = ix.idGet(skip)
		ix.idMu.Unlock()
	}
	res := ix.walk(sc, q, k, ef, filter, nil)
	return res, sc.vis.count()
}

// walk is the graph search for the k nodes nearest to the prepared query
// q at beam width ef: greedy descent through the upper layers, then the
// beam search of layer 0. mu is held. A closed done ends it early, with
// the results found so far.
func (ix *Index) walk(sc *scratch, qv []float32, k, ef int, filter vector.Filter, done <-chan struct{}) []vector.Result {
	if qz := ix.quant.q; qz != nil {
		if res, ok := ix.walkCodes(sc, qz, qv, k, ef, filter, done); ok {
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
		cur = ix.greedy(sc, qv, cur, lc, sc.skip, sc.skipOn)
	}
	sc.ent = append(sc.ent[:0], cur)
	ix.searchLayer(sc, qv, sc.ent, ef, 0, true, filter, done)
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

// rescoreLimit returns the walk's distance beyond which no finalist can
// rank among the first k, when the k-th smallest walk distance is dk: the
// gather and single kernels each round a sum of dim products, each within
// γ = dim·u (u = 2⁻²⁴) of the exact sum of their magnitudes, so they differ
// by at most δ = 2γ·Σ|aᵢbᵢ|. Under Cosine the vectors are unit length
// and Σ|aᵢbᵢ| ≤ 1 (Cauchy–Schwarz), plus the rounding of 1 − a·b; under
// L2 every term is non-negative and δ ≤ 2γ·d (relative). A finalist c can
// rank among the first k only if its single-kernel distance, at least
// dc − δ, is at most the k-th one, at most dk + δ. Under Dot the sum's
// scale is unbounded: every finalist is scored again. The margin is
// doubled again for safety.
func (ix *Index) rescoreLimit(dk float32) float32 {
	const u = 1.0 / (1 << 24)
	g := 4 * float64(ix.dim+4) * u
	switch ix.metric {
	case vector.Cosine:
		return float32(float64(dk) + 2*(g+8*u))
	case vector.L2:
		return float32(float64(dk)*(1+g)/(1-g) + 1e-30)
	}
	return float32(math.Inf(1))
}

// searchExact scores the indexed ids of set one by one. mu is held.
func (ix *Index) searchExact(q []float32, k int, set *vector.IDSet) []vector.Result {
	t := vector.NewTopK(k)
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	set.All(func(id vector.ID) bool {
		if s, ok := ix.idGet(id); ok && ix.hasVec(s) {
			t.Push(id, ix.dist(q, ix.vec(s)))
		}
		return true
	})
	return t.Results()
}

// liveCount is Len for callers that may hold mu.
func (ix *Index) liveCount() int {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	return ix.live
}

// distances returns the distances from q to the vectors vs (dim floats
// each), in sc.dists, scored by one call of the pointer-gather kernel
// (four vectors a pass over q, the loop over them in assembly). Against a
// call of the four-row kernel per four neighbours it cut the instructions
// of a query by 6% (callgrind, clustered d = 100, n = 50,000, ef = 64:
// BenchmarkCountQueries). The callers gather the pointers once, for the
// prefetch and for this.
func (ix *Index) distances(sc *scratch, q []float32, vs []*float32) []float32 {
	if cap(sc.dists) < len(vs) {
		sc.dists = make([]float32, len(vs), 2*len(vs))
	}
	return ix.distancesInto(q, vs, sc.dists)
}

// distancesInto is distances writing into out, which must hold at least
// len(vs) floats; it returns out[:len(vs)].
func (ix *Index) distancesInto(q []float32, vs []*float32, out []float32) []float32 {
	out = out[:len(vs)]
	switch ix.metric {
	case vector.Cosine:
		// Unit vectors: 1 − a·b.
		vector.InnerProductGather(q, vs, out)
		for j, p := range out {
			out[j] = 1 - p
		}
	case vector.Dot:
		vector.InnerProductGather(q, vs, out)
		for j, p := range out {
			out[j] = -p
		}
	default:
		vector.SquaredL2Gather(q, vs, out)
	}
	return out
}
