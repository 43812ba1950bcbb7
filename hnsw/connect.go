package hnsw

// This file holds the pass that keeps every node reachable. The
// neighbour-selection heuristic prunes a list to the links that point in
// different directions, and a node can lose, one pruning at a time,
// every link that pointed to it: no search finds it again, whatever its
// ef. On real sets about one node in a thousand ended so (128 of
// fashion-mnist's 60,000, 558 of a 541k-vector fastText set). The pass,
// as Lucene's HNSW builder does at the end of a build, finds the nodes
// the entry point cannot reach and links each from a reachable node
// near it.

import (
	"iter"
	"sync/atomic"
	"unsafe"
)

// connectDiv sets how often the pass runs: once the nodes inserted since
// the last pass reach 1/connectDiv of the index (and connectMin), at the
// end of the Add, AddBatch or Track that crosses the mark. A pass reads
// every list once, O(n·M), far less than the inserts since the last one
// read. Flush runs it whatever the count, so that a saved graph has no
// node cut off.
const (
	connectDiv = 8
	connectMin = 64
)

// connectOn is false in tests that measure the graph the pass would
// mend.
var connectOn = true

// connectRounds bounds the passes over the graph one call makes: linking
// a node can, rarely, cut off a node that only it reached, which the next
// pass finds.
const connectRounds = 4

// noteLinked counts n nodes linked, in an index of live nodes, and
// reports whether the nodes linked since the last pass call for one.
func (ix *Index) noteLinked(n, live int) bool {
	ix.sinceConnect.Add(int64(n))
	return ix.connectDue(live)
}

// connectDue reports whether the nodes linked since the last pass call
// for one, in an index of live nodes.
func (ix *Index) connectDue(live int) bool {
	return ix.sinceConnect.Load() >= int64(max(connectMin, live/connectDiv))
}

// connect runs the pass (see connectLocked) if it is still due, or
// whatever the count with force, taking mu for writing: it waits for
// running searches and inserts and blocks new ones while it runs (its
// cost is in BENCHMARKS.md, "no node cut off"). It does nothing
// while deletes are being unlinked (the unlinking repairs lists itself;
// a later pass catches up).
func (ix *Index) connect(force bool) {
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !connectOn || ix.unl != nil || !force && !ix.connectDue(ix.liveCount()) {
		return
	}
	ix.sinceConnect.Store(0)
	for range connectRounds {
		if ix.connectLocked(sc) == 0 {
			return
		}
	}
}

// connectLocked links every live node that a search from the entry point
// cannot reach into the layer-0 list of the nearest reachable node that
// can take it: one with room, or one that can give up its furthest link
// to a node another reachable node also links to. It returns how many
// it linked. mu is held for writing.
func (ix *Index) connectLocked(sc *scratch) int {
	ep, top, ok := ix.entry()
	if !ok {
		return 0
	}
	r := ix.reachLocked(ep)
	linked := 0
	for s := range r.cutOffs(ix) {
		if !ix.linkFrom(sc, &r, s, ep, top) {
			continue
		}
		linked++
		r.st[s] += 2 // the link just made
		r.mark(s)
		r.spread(ix)
	}
	return linked
}

// reachLocked returns the nodes reachable from ep. mu is held.
func (ix *Index) reachLocked(ep node) reach {
	r := reach{st: make([]uint32, ix.next)}
	r.mark(ep)
	r.spread(ix)
	return r
}

// reach is the pass's record of the nodes a search reaches: for each
// node, whether it is reached (bit 0) and how many reached nodes link to
// it on layer 0 (the bits above), in one array so that following a link
// costs one random read.
type reach struct {
	st    []uint32
	stack []node
}

// seen reports whether n is reached.
func (r *reach) seen(n node) bool { return r.st[n]&1 != 0 }

// in returns how many reached nodes link to n on layer 0.
func (r *reach) in(n node) int { return int(r.st[n] >> 1) }

// cutOffs yields, in order, the nodes of the graph, not deleted, that
// the marked nodes do not reach, each tested when the scan comes to it:
// the caller may mark more nodes between yields.
func (r *reach) cutOffs(ix *Index) iter.Seq[node] {
	return func(yield func(node) bool) {
		for s := node(0); s < ix.next; s++ {
			if !r.seen(s) && ix.levelOf(s) != freeLevel && !ix.isTomb(s) && !yield(s) {
				return
			}
		}
	}
}

// mark notes n reached, for spread to follow its links.
func (r *reach) mark(n node) {
	r.st[n] |= 1
	r.stack = append(r.stack, n)
}

// spreadBatch is how many reached nodes spread takes from its stack at a
// time, prefetching their layer-0 lists before following any, so that
// the lists' cache misses overlap (a third of the time of one node at a
// time on 541k nodes; BenchmarkReachable, figures in BENCHMARKS.md).
const spreadBatch = 32

// spread marks every node reachable from the marked ones, counting
// their layer-0 links.
func (r *reach) spread(ix *Index) {
	ll := ix.linkLines()
	var batch [spreadBatch]node
	for len(r.stack) > 0 {
		n := copy(batch[:], r.stack[max(0, len(r.stack)-spreadBatch):])
		r.stack = r.stack[:len(r.stack)-n]
		for _, x := range batch[:n] {
			prefetchLines(unsafe.Pointer(&ix.list(x, 0)[0]), ll)
		}
		for _, x := range batch[:n] {
			for lc := 0; lc <= int(ix.levelOf(x)); lc++ {
				l := ix.list(x, lc)
				for _, y := range l[1 : 1+l[0]] {
					if lc == 0 {
						r.st[y] += 2
					}
					if r.st[y]&1 == 0 {
						r.mark(node(y))
					}
				}
			}
		}
	}
}

// linkFrom walks from the entry point to the nodes nearest to s, all of
// them reachable, and links s from the first that can take it; it
// reports whether one did.
func (ix *Index) linkFrom(sc *scratch, r *reach, s, ep node, top int) bool {
	src := source{q: ix.vec(s)}
	cur := cand{ix.scoreOne(src, ep), ep}
	for lc := top; lc > 0; lc-- {
		cur = ix.greedy(sc, src, cur, lc, 0, false)
	}
	sc.ent = append(sc.ent[:0], cur)
	ix.searchLayer(sc, src, sc.ent, ix.opts.EfConstruction, ix.opts.EfConstruction, 0, false, nil, nil)
	for _, c := range sc.w {
		if c.node != s && !ix.isTomb(c.node) && r.seen(c.node) && ix.takeLink(r, c.node, s) {
			return true
		}
	}
	return false
}

// takeLink adds s to y's layer-0 list if it has room, or puts it in
// place of y's furthest link to a node that another reachable node also
// links to; it reports whether it did.
func (ix *Index) takeLink(r *reach, y, s node) bool {
	l := ix.list(y, 0)
	cnt := int(l[0])
	for _, x := range l[1 : 1+cnt] {
		if node(x) == s {
			return false // y links to s, yet s was not reached: y is not reached either
		}
	}
	if cnt < ix.maxLinks(0) {
		atomic.StoreUint32(&l[1+cnt], uint32(s))
		atomic.StoreUint32(&l[0], uint32(cnt+1))
		return true
	}
	vy := ix.vec(y)
	far, farDist := -1, float32(-1)
	for i, x := range l[1 : 1+cnt] {
		z := node(x)
		if r.in(z) < 2 || ix.isTomb(z) {
			continue
		}
		if d := ix.dist(vy, ix.vec(z)); d > farDist {
			far, farDist = i, d
		}
	}
	if far < 0 {
		return false
	}
	r.st[l[1+far]] -= 2
	atomic.StoreUint32(&l[1+far], uint32(s))
	return true
}
