package hnsw

// This file holds the removal of deleted nodes from the graph: batches of
// tombstones unlinked in short steps under the shared lock, beside
// running searches and inserts; the repair of the nodes that linked to
// them; and the pacing that spreads a batch's work over the deletes that
// follow it.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// tombBatchDiv sets the size of a batch of tombstones unlinked together:
// a batch is taken once tombstones reach 1/tombBatchDiv of the graph (and
// at least tombBatchMin). Larger batches share the scan and the repairs
// among more deletes, but repairs then find fewer live candidates nearby:
// in BenchmarkDeleteHalf (clustered 768-d, n = 10,000, half deleted;
// recall@10 at ef = 16 beside a fresh build) batches of 1/64 of the graph
// cost 1.65 ms an id (−0.006), 1/16 0.96 ms (−0.007), 1/8 0.61 ms
// (−0.007), 1/4 0.25 ms (−0.010), and in TestDeleteRecall 1/4 and larger
// fell 0.02–0.03 below a fresh build where 1/8 and smaller stayed within
// 0.01.
const (
	tombBatchDiv = 8
	tombBatchMin = 32
)

// unlinkPace is how much faster than deletes arrive a batch is unlinked:
// the deletes that follow a batch's start do its work, unlinkPace times
// their share, so that it is done when half a batch more has arrived.
// Tombstones, which every search walks through, then stay below 1.5
// batches (3/16 of the graph) while deletes go on.
const unlinkPace = 2

// unlinkStepSlots is the most slots one step scans (and repairs) under
// one hold of the shared lock: a writer waiting for the exclusive lock,
// and the searches queued behind it, wait for at most one step.
const unlinkStepSlots = 32

// unlinking is a batch of tombstones being taken out of the graph,
// ix.tombs[:n]. It goes in three stages: begin (mu held for writing, O(n)
// plus a copy of one byte a slot) marks the batch dead, so that repairs
// stop choosing its nodes; steps under the shared lock scan every slot
// that was a node at the start and repair each node linking to the batch,
// then repair the nodes inserted since (which may have linked to it);
// finish (mu held for writing, O(n)) frees the batch's slots, which no
// node links to any more and no search holds, since none runs.
type unlinking struct {
	n   int // the batch is ix.tombs[:n]
	top int // the highest level in the batch
	// levels is the level of every slot below next when the batch began:
	// the nodes to scan. Their levels do not change while it runs (only
	// finish frees a slot), and reading the snapshot instead of the pages
	// keeps the scan clear of inserts filling new slots.
	levels []uint8
	// pos is the next slot of levels to scan. It changes only in steps,
	// under mu and, when mu is shared, repairMu.
	pos int
	// perTomb is the slots to scan for each tombstone added while the
	// batch runs (see unlinkPace).
	perTomb int

	mu sync.Mutex
	// touched holds the nodes inserted since the batch began: an insert
	// may link to a node of the batch (it is still walkable), and the
	// scan, which only covers the slots of levels, would miss that.
	touched []node
}

// isDead reports whether node n is in the batch being unlinked. mu is
// held.
func (ix *Index) isDead(n node) bool { return int(n) < len(ix.dead) && ix.dead[n] }

// batchLen returns the size of the next batch to unlink. mu is held.
func (ix *Index) batchLen() int {
	return max(tombBatchMin, (ix.liveCount()+len(ix.tombs))/tombBatchDiv)
}

// noteInserted records that node s was just linked, if a batch is being
// unlinked. mu is held for reading, by the insert.
func (ix *Index) noteInserted(s node) {
	if u := ix.unl; u != nil {
		u.mu.Lock()
		u.touched = append(u.touched, s)
		u.mu.Unlock()
	}
}

// unlinkSome does this caller's share of unlinking tombstones, after it
// added credit of them: it starts a batch once tombstones reach a batch,
// and scans credit·perTomb slots of the running batch (see unlinkPace),
// or the whole batch if tombstones waiting behind it reach a batch of
// their own. With all set it unlinks every tombstone there was when it
// began (later ones too if they share a batch), batch by batch, and
// returns ctx's error if ctx ends between steps. mu is not held: begin
// and finish take it for writing, steps for reading.
func (ix *Index) unlinkSome(ctx context.Context, credit int, all bool) error {
	ix.repairMu.Lock()
	defer ix.repairMu.Unlock()
	var sc *scratch
	defer func() {
		if sc != nil {
			ix.scratch.Put(sc)
		}
	}()
	budget := 0 // slots this call may still scan
	quota := -1 // with all, the tombstones still to unlink of those at the start
	for {
		if all {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("hnsw: flush: %w", err)
			}
		}
		ix.mu.RLock()
		u := ix.unl
		waiting, batch := len(ix.tombs), ix.batchLen()
		if quota < 0 {
			quota = waiting
		}
		if u == nil {
			ix.mu.RUnlock()
			if waiting == 0 || waiting < batch && !all || all && quota <= 0 {
				return nil
			}
			ix.mu.Lock()
			if ix.unl == nil && len(ix.tombs) > 0 {
				ix.beginUnlinkLocked()
			}
			ix.mu.Unlock()
			continue
		}
		waiting -= u.n
		budget += credit * u.perTomb
		credit = 0
		if budget <= 0 && !all && waiting < batch {
			ix.mu.RUnlock()
			return nil
		}
		if sc == nil {
			sc = ix.getScratch()
		}
		used, done := ix.unlinkStep(sc, u, unlinkStepSlots)
		ix.mu.RUnlock()
		budget -= used
		if done {
			ix.mu.Lock()
			if ix.unl == u { // not replaced by ReadFrom meanwhile
				ix.finishUnlinkLocked(sc)
				quota -= u.n
			}
			ix.mu.Unlock()
		}
	}
}

// unlinkAllLocked unlinks every tombstone with mu held for writing, for
// callers that must see a graph without any (WriteTo), after
// [Index.Flush] did the work under the shared lock: only tombstones added
// since are left.
func (ix *Index) unlinkAllLocked() {
	if len(ix.tombs) == 0 {
		return
	}
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	for len(ix.tombs) > 0 {
		if ix.unl == nil {
			ix.beginUnlinkLocked()
		}
		ix.finishUnlinkLocked(sc)
	}
}

// beginUnlinkLocked starts unlinking the oldest tombstones, a batch of
// them. mu is held for writing.
func (ix *Index) beginUnlinkLocked() {
	n := min(len(ix.tombs), ix.batchLen())
	if len(ix.dead) < ix.capacity() {
		ix.dead = make([]bool, ix.capacity())
	}
	u := &unlinking{n: n, top: -1}
	for _, s := range ix.tombs[:n] {
		ix.dead[s] = true
		u.top = max(u.top, int(ix.levelOf(s)))
	}
	u.levels = make([]uint8, ix.next)
	for i := 0; i < len(u.levels); i += pageSize {
		copy(u.levels[i:], ix.pages[i>>pageShift].level[:])
	}
	u.perTomb = unlinkPace*len(u.levels)/n + 1
	ix.unl = u
}

// unlinkStep scans up to budget slots of batch u, then repairs the nodes
// inserted since it began, up to budget in all, and reports how many it
// took and whether none is left. mu is held, and repairMu too if mu is
// only read-locked.
func (ix *Index) unlinkStep(sc *scratch, u *unlinking, budget int) (used int, done bool) {
	for ; u.pos < len(u.levels) && used < budget; u.pos++ {
		used++
		lv := u.levels[u.pos]
		if lv == freeLevel || ix.dead[u.pos] {
			continue
		}
		ix.unlinkFrom(sc, node(u.pos), min(int(lv), u.top))
	}
	if u.pos < len(u.levels) {
		return used, false
	}
	for used < budget {
		u.mu.Lock()
		k := len(u.touched)
		if k == 0 {
			u.mu.Unlock()
			return used, true
		}
		s := u.touched[k-1]
		u.touched = u.touched[:k-1]
		u.mu.Unlock()
		used++
		ix.unlinkFrom(sc, s, min(int(ix.levelOf(s)), u.top))
	}
	return used, false
}

// unlinkFrom takes node s's links to the batch out, on layers 0..top: a
// live node is repaired, a tombstone just loses them (it stays walkable
// until its own batch).
func (ix *Index) unlinkFrom(sc *scratch, s node, top int) {
	for lc := 0; lc <= top; lc++ {
		if !ix.linksDead(s, lc) {
			continue
		}
		if ix.isTomb(s) {
			ix.dropDead(s, lc)
			continue
		}
		ix.repair(sc, s, lc)
	}
}

// linksDead reports whether node s links to the batch on layer lc.
func (ix *Index) linksDead(s node, lc int) bool {
	l := ix.list(s, lc)
	cnt := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
	for i := 1; i <= cnt; i++ {
		if ix.isDead(node(atomic.LoadUint32(&l[i]))) {
			return true
		}
	}
	return false
}

// dropDead removes node s's links to the batch on layer lc, under s's
// lock.
func (ix *Index) dropDead(s node, lc int) {
	ix.lock(s).Lock()
	defer ix.lock(s).Unlock()
	l := ix.list(s, lc)
	k := 0
	for _, x := range l[1 : 1+l[0]] {
		if !ix.isDead(node(x)) {
			atomic.StoreUint32(&l[1+k], x)
			k++
		}
	}
	atomic.StoreUint32(&l[0], uint32(k))
}

// loadLinks appends node n's links on layer lc to buf with atomic loads:
// the list may be changing under an insert, and any link it reads is a
// node of the layer.
func (ix *Index) loadLinks(n node, lc int, buf []uint32) []uint32 {
	l := ix.list(n, lc)
	cnt := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
	for i := 1; i <= cnt; i++ {
		buf = append(buf, atomic.LoadUint32(&l[i]))
	}
	return buf
}

// finishUnlinkLocked completes the running batch: it repairs whatever the
// steps left (nothing but the nodes inserted since the last step, when
// steps ran it to the end), frees the batch's slots and moves the entry
// point off them. mu is held for writing.
func (ix *Index) finishUnlinkLocked(sc *scratch) {
	u := ix.unl
	for {
		if _, done := ix.unlinkStep(sc, u, math.MaxInt); done {
			break
		}
	}
	ep, _, _ := ix.entry()
	epGone := false
	ix.idMu.Lock()
	for _, s := range ix.tombs[:u.n] {
		for lc := 0; lc <= int(ix.levelOf(s)); lc++ {
			ix.list(s, lc)[0] = 0
		}
		ix.setLevel(s, freeLevel)
		ix.setUpper(s, 0)
		ix.setVec(s, nil)
		ix.setTomb(s, false)
		ix.dropVecLocked(s)
		ix.freeSlot(s)
		ix.dead[s] = false
		epGone = epGone || s == ep
	}
	ix.idMu.Unlock()
	ix.tombs = append(ix.tombs[:0], ix.tombs[u.n:]...)
	if len(ix.tombs) == 0 {
		ix.tombs = nil
	}
	ix.unl = nil
	if epGone {
		// The highest node, live rather than a tombstone at that level.
		best, bestLevel, bestLive := node(0), -1, false
		for s := node(0); s < ix.next; s++ {
			lv := ix.levelOf(s)
			if lv == freeLevel {
				continue
			}
			live := !ix.isTomb(s)
			if int(lv) > bestLevel || int(lv) == bestLevel && live && !bestLive {
				best, bestLevel, bestLive = s, int(lv), live
			}
		}
		if bestLevel < 0 {
			ix.ep.Store(0)
		} else {
			ix.ep.Store(packEntry(best, bestLevel))
		}
	}
}

// repair replaces node u's links to the batch on layer lc: its new links
// are chosen with the heuristic from its other links, the live links of
// its dead neighbours, and the links of its live neighbours (hnswlib's
// repairConnectionsForUpdate, which also looks two hops out), and each new
// neighbour links back to u. The batch's nodes are still in place while
// the repairs run.
//
// It runs beside searches and inserts (mu held for reading): it reads
// lists with atomic loads, computes the new list from a copy of u's, and
// writes it under u's lock, merging in the links an insert added to u
// meanwhile; no lock is held while another node's lock is taken.
func (ix *Index) repair(sc *scratch, u node, lc int) {
	ix.lock(u).Lock()
	l := ix.list(u, lc)
	snap := append(sc.snap[:0], l[1:1+l[0]]...)
	ix.lock(u).Unlock()
	sc.snap = snap
	vu := ix.vec(u)
	nb := sc.nb[:0]
	sc.vis.reset(ix.capacity())
	sc.vis.visit(u)
	// Tombstones of later batches are candidates like live nodes: they
	// are still walkable, and their own batch repairs the links to them.
	// Leaving them out halves the candidates when many are pending (as
	// after one Untrack of half a graph) and costs recall (0.802 against
	// 0.830 in TestDeleteRecall).
	// Candidates are gathered first and scored together, four at a time
	// with the gather kernels, their vectors prefetched.
	todo, vs := sc.batch[:0], sc.vs[:0]
	add := func(x uint32) {
		if n := node(x); !ix.isDead(n) && !sc.vis.visit(n) {
			todo = append(todo, n)
			vs = append(vs, ix.vecp(n))
			prefetchLines(unsafe.Pointer(vs[len(vs)-1]), ix.pfLines)
		}
	}
	for _, x := range snap {
		add(x)
	}
	// The live links of u's dead neighbours, and, walking on through dead
	// nodes, of the dead nodes they link to: when a whole neighbourhood
	// goes in one batch (as when every item near u is upserted), a dead
	// neighbour's links are mostly dead too, and stopping at them cut u's
	// region off from the rest of the graph (TestReachAfterChurn: batches
	// of upserted neighbours became islands that no search could reach).
	// The walk expands at most deadWalk·Mmax dead nodes.
	deadq := sc.deadq[:0]
	for _, x := range snap {
		if ix.isDead(node(x)) && !sc.vis.visit(node(x)) {
			deadq = append(deadq, node(x))
		}
	}
	links := sc.links[:0]
	for i := 0; i < len(deadq) && i < deadWalk*ix.maxLinks(lc); i++ {
		links = ix.loadLinks(deadq[i], lc, links[:0])
		for _, y := range links {
			if !ix.isDead(node(y)) {
				add(y)
			} else if !sc.vis.visit(node(y)) {
				deadq = append(deadq, node(y))
			}
		}
	}
	sc.deadq = deadq
	// The links of u's other neighbours too: without them, nodes that u
	// pruned in favour of some since-deleted node are lost for good, and
	// after deleting half of a graph recall drops by several points (0.71
	// against 0.79 for a fresh build in TestDeleteRecall; 0.78 with them).
	for _, x := range snap {
		if ix.isDead(node(x)) {
			continue
		}
		links = ix.loadLinks(node(x), lc, links[:0])
		for _, y := range links {
			add(y)
		}
	}
	sc.links = links
	for i, d := range ix.distances(sc, vu, vs) {
		nb = append(nb, cand{d, todo[i]})
	}
	sc.batch, sc.vs = todo, vs
	// Select from the 3·Mmax nearest candidates only. The heuristic's
	// pairwise distances dominate the cost of a delete, and a wider pool
	// buys nothing: in BenchmarkDeleteHalf (clustered 768-d, n=10,000,
	// half deleted) a pool of EfConstruction=200 gave recall@10 0.983
	// (ef=16) at 6.2 ms a delete, 3·Mmax 0.985 at 3.1 ms, against 0.989 for
	// a fresh build; Mmax alone (nearest only, no heuristic) 0.968 at 1.7 ms.
	pool := nearest(nb, repairPool*ix.maxLinks(lc))
	sc.keep = ix.selectNeighbors(sc, pool, ix.maxLinks(lc), sc.keep)
	sc.nb = nb

	ix.lock(u).Lock()
	l = ix.list(u, lc)
	cur := l[1 : 1+l[0]]
	if !slices.Equal(cur, snap) {
		// An insert linked to u meanwhile: its links (never to the
		// batch) join the chosen ones, pruned again if too many.
		extra := sc.links[:0]
		for _, x := range cur {
			n := node(x)
			if !ix.isDead(n) && !slices.ContainsFunc(sc.keep, func(c cand) bool { return c.node == n }) {
				extra = append(extra, x)
			}
		}
		if len(extra) > 0 {
			nb = append(sc.nb[:0], sc.keep...)
			nb = ix.scoreLinks(sc, vu, extra, nb)
			sortCands(nb)
			sc.keep = ix.selectNeighbors(sc, nb, ix.maxLinks(lc), sc.keep)
			sc.nb = nb
		}
		sc.links = extra
	}
	// Remember which links are new before overwriting the list.
	fresh := sc.sel[:0]
	for _, c := range sc.keep {
		if !slices.Contains(cur, uint32(c.node)) {
			fresh = append(fresh, c)
		}
	}
	storeList(l, sc.keep)
	ix.lock(u).Unlock()
	// Link back from each new neighbour, as an insert does, so that the
	// nodes around the hole keep their in-links. Without this, recall after
	// deleting half of a graph falls 0.01–0.05 below a fresh build in
	// TestDeleteRecall (five seeds); with it, it is within ±0.03 of it,
	// mostly above. A neighbour not yet scanned may keep a dead link
	// through this; its own repair removes it.
	for _, c := range fresh {
		ix.addLink(sc, c.node, u, c.dist, lc)
	}
	sc.sel = fresh
}

// repairPool times Mmax is the number of nearest candidates a repair
// selects from.
const repairPool = 3

// deadWalk times Mmax bounds the dead nodes a repair walks through to find
// live candidates.
const deadWalk = 2
