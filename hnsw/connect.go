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

import "sync/atomic"

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

// noteLinked counts n nodes linked and reports whether the nodes linked
// since the last pass call for one.
func (ix *Index) noteLinked(n int) bool {
	ix.sinceConnect.Add(int64(n))
	return ix.connectDue()
}

// connectDue reports whether the nodes linked since the last pass call
// for one.
func (ix *Index) connectDue() bool {
	return ix.sinceConnect.Load() >= int64(max(connectMin, ix.liveCount()/connectDiv))
}

// connect runs the pass (see connectLocked) if it is still due, or
// whatever the count with force, taking mu for writing: it waits for
// running searches and inserts and blocks new ones while it runs (about
// 120 ms at 541,190 nodes, d = 100, with nothing to link). It does nothing while deletes are being
// unlinked (the unlinking repairs lists itself; a later pass catches up).
func (ix *Index) connect(force bool) {
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !connectOn || ix.unl != nil || !force && !ix.connectDue() {
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
	for s := node(0); s < ix.next; s++ {
		if !r.cutOff(ix, s) || !ix.linkFrom(sc, &r, s, ep, top) {
			continue
		}
		linked++
		r.in[s]++
		r.mark(ix, s)
		r.spread(ix)
	}
	return linked
}

// reachLocked returns the nodes reachable from ep. mu is held.
func (ix *Index) reachLocked(ep node) reach {
	r := reach{seen: make([]bool, ix.next), in: make([]int32, ix.next)}
	r.mark(ix, ep)
	r.spread(ix)
	return r
}

// reach is the pass's record of the nodes a search reaches: seen, and,
// for each node, how many reachable nodes link to it on layer 0.
type reach struct {
	seen  []bool
	in    []int32
	stack []node
}

// cutOff reports whether s is a node of the graph, not deleted, that
// the marked nodes do not reach.
func (r *reach) cutOff(ix *Index, s node) bool {
	return !r.seen[s] && ix.levelOf(s) != freeLevel && !ix.isTomb(s)
}

// mark notes n reachable, for spread to follow its links.
func (r *reach) mark(ix *Index, n node) {
	r.seen[n] = true
	r.stack = append(r.stack, n)
}

// spread marks every node reachable from the marked ones, counting
// their layer-0 links.
func (r *reach) spread(ix *Index) {
	for len(r.stack) > 0 {
		x := r.stack[len(r.stack)-1]
		r.stack = r.stack[:len(r.stack)-1]
		for lc := 0; lc <= int(ix.levelOf(x)); lc++ {
			l := ix.list(x, lc)
			for _, y := range l[1 : 1+l[0]] {
				if lc == 0 {
					r.in[y]++
				}
				if !r.seen[y] {
					r.mark(ix, node(y))
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
		if c.node != s && !ix.isTomb(c.node) && r.seen[c.node] && ix.takeLink(r, c.node, s) {
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
		if r.in[z] < 2 || ix.isTomb(z) {
			continue
		}
		if d := ix.dist(vy, ix.vec(z)); d > farDist {
			far, farDist = i, d
		}
	}
	if far < 0 {
		return false
	}
	r.in[l[1+far]]--
	atomic.StoreUint32(&l[1+far], uint32(s))
	return true
}
