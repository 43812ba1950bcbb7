// This file holds the beam search of inserts and of queries without a
// filter: the ef nearest nodes found so far in one sorted array, the next
// node to expand found by a cursor, instead of the two heaps of
// searchLayer.

package hnsw

import (
	"sync/atomic"
	"unsafe"
)

// poolCand is a candidate of walkPool: open until it has been expanded.
type poolCand struct {
	dist float32
	node node
	open bool
}

// walkPool is searchLayer for every insert and for a query with no
// filter, no tombstones to leave out and no node to skip (most queries):
// the same walk (expand the nearest open candidate among the ef nearest
// found so far, stop when all of them have been expanded), with the keep
// nearest kept sorted in one array. A new candidate is put in place by a binary search and a copy,
// where searchLayer pushes it on two heaps and pops it from one; the next
// one to expand is the first open one, which a cursor finds without a
// sift. It leaves the result in sc.w, as searchLayer.
//
// The two heaps took 24% of a query's instructions at d = 100, ef = 64;
// with the sorted array a query takes 0.90 of the instructions
// (callgrind, BenchmarkCountQueries) and 0.92–0.96 of the time at ef = 64,
// about 0.94 at ef = 256, the same at ef = 16 (BenchmarkExperiment,
// median latencies, d = 100, n = 50,000, loaded machine). The walk visits
// the same nodes in the same order and returns the same results
// (TestPoolMatchesHeaps). Inserts through it build the same graphs as
// through the heaps, faster (BenchmarkBuildExperiment; BENCHMARKS.md,
// "Inserts on the sorted pool").
//
// It keeps the keep ≥ ef nearest nodes scored: the
// walk expands only the ef nearest (keep changes no step of it), and the
// keep − ef after them, nodes just outside the beam that the estimates
// may have misranked, are left in sc.w for the rescoring too.
func (ix *Index) walkPool(sc *scratch, src source, ent []cand, ef, keep, lc int, done <-chan struct{}) {
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
	// prefetchNext is set where a node's list does not lie beside what
	// scoring it reads (see below).
	prefetchNext := src.pq != nil || ix.slots != nil
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
		if prefetchNext {
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
			// the float32 walk with vectors inline, whose prefetch and
			// reads run into the links, it was 0.95–1.10: not taken
			// there; with the store's slots, whose vectors lie apart
			// from the links, it takes 0.87–0.94 of the time
			// (BenchmarkSlotted on dicts-fasttext-100, with and
			// without it).
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
		dists := ix.score(sc, src, batch)
		for i, n := range batch {
			d := dists[i]
			if len(pool) < keep || d < pool[len(pool)-1].dist {
				var p int
				pool, p = poolInsert(pool, d, n, keep)
				if p < cur && prefetchNext {
					// n goes before the node prefetched next: n
					// is expanded next instead (0.98–1.00 of the
					// time at ef 16, 64, 256 on dicts-fasttext-100,
					// BenchmarkExperiment).
					prefetchLines(unsafe.Pointer(&ix.list(n, lc)[0]), ll)
				}
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

// linkLines returns the number of cache lines a layer-0 list spans: 1 +
// 2M words (132 bytes at M = 16) at word lnk0 of a row, rows being whole
// lines (three lines after a code at d = 100).
func (ix *Index) linkLines() int {
	off := ix.lnk0 * 4 % 64
	return (off + ix.stride0*4 + 63) / 64
}

// poolInsert puts an open candidate (d, n) in place in pool, sorted by
// ascending distance, dropping the furthest if pool then holds more than
// ef, and returns pool and the candidate's position. pool has room for
// ef+1. The caller has checked that the candidate is closer than the
// furthest when pool is full.
//
// A candidate goes before those at the same distance: the newest found
// first. Inserts walk with walkPool too, and the order of ties decides
// which of a set of exact duplicates a new node links to. Put after them,
// the one the walk reached first took every new link and the others lost
// theirs, until some were unreachable (TestDuplicatesStayReachable).
func poolInsert(pool []poolCand, d float32, n node, ef int) ([]poolCand, int) {
	// A plain binary search: one without branches on the data (a mask
	// and an add a step) took 1.03–1.4 of its time (BenchmarkExperiment,
	// d = 100, ef 16…256), more instructions for fewer mispredictions.
	lo, hi := 0, len(pool)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pool[m].dist < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if len(pool) < ef {
		pool = append(pool, poolCand{})
	}
	copy(pool[lo+1:], pool[lo:len(pool)-1])
	pool[lo] = poolCand{d, n, true}
	return pool, lo
}
