package hnsw

import (
	"slices"
	"sync/atomic"
	"unsafe"
)

// list returns node n's neighbour list on layer lc: element 0 is the count,
// the links follow. Elements are read with atomic loads (or under the
// node's lock) and written with atomic stores under the node's lock.
func (ix *Index) list(n node, lc int) []uint32 {
	p, i := ix.pageOf(n)
	if lc == 0 {
		b := i*ix.row0 + ix.lnk0
		return p.rows0[b : b+ix.stride0 : b+ix.stride0]
	}
	return unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(p.upper[i]), (lc-1)*ix.strideU*4)), ix.strideU)
}

// maxLinks is Mmax0 on layer 0 and Mmax above.
func (ix *Index) maxLinks(lc int) int {
	if lc == 0 {
		return ix.m0
	}
	return ix.m
}

// storeList writes the links of cs into l, count last, so that a reader
// never sees a count covering links not yet written.
func storeList(l []uint32, cs []cand) {
	for i, c := range cs {
		atomic.StoreUint32(&l[1+i], uint32(c.node))
	}
	atomic.StoreUint32(&l[0], uint32(len(cs)))
}

// sortCands sorts candidates by ascending distance, ties by node.
func sortCands(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int {
		switch {
		case a.dist < b.dist:
			return -1
		case a.dist > b.dist:
			return 1
		}
		return int(a.node) - int(b.node)
	})
}

// selectNeighbors is the paper's neighbour-selection heuristic (Algorithm
// 4, hnswlib's getNeighborsByHeuristic2): from candidates sorted by
// ascending distance to the base node, keep a candidate only if it is
// closer to the base than to every neighbour already kept, until m are
// kept. Fewer than m candidates are all kept. It appends to out[:0].
//
// The rule prefers neighbours in different directions over a cluster of
// near-duplicates, which keeps the graph navigable across clusters.
func (ix *Index) selectNeighbors(cs []cand, m int, out []cand) []cand {
	out = out[:0]
	if len(cs) <= m {
		return append(out, cs...)
	}
	for _, c := range cs {
		if len(out) >= m {
			break
		}
		vc := ix.vec(c.node)
		good := true
		for _, r := range out {
			if ix.dist(vc, ix.vec(r.node)) < c.dist {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}

// setLinks makes sel the links of the new node s on layer lc. Another
// insert may already have linked to s from above and added itself to s's
// list; those links are merged in, pruned with the heuristic if too many.
func (ix *Index) setLinks(sc *scratch, s node, lc int, sel []cand) {
	ix.lock(s).Lock()
	defer ix.lock(s).Unlock()
	l := ix.list(s, lc)
	cnt := int(l[0])
	if cnt == 0 {
		storeList(l, sel)
		return
	}
	nb := append(sc.nb[:0], sel...)
	links := sc.links[:0]
	for _, x := range l[1 : 1+cnt] {
		n := node(x)
		if !slices.ContainsFunc(nb, func(c cand) bool { return c.node == n }) {
			links = append(links, x)
		}
	}
	nb = ix.scoreLinks(sc, ix.vec(s), links, nb)
	sc.links = links
	sortCands(nb)
	sc.keep = ix.selectNeighbors(nb, ix.maxLinks(lc), sc.keep)
	storeList(l, sc.keep)
	sc.nb = nb
}

// scoreLinks appends to nb the nodes of links with their distances to v,
// scored together with the gather kernels: pruning a full list scores its
// 2·M links at once (builds at d = 100, n = 20,000 took 0.97 of the time
// of one kernel call a link, BenchmarkBuildExperiment).
func (ix *Index) scoreLinks(sc *scratch, v []float32, links []uint32, nb []cand) []cand {
	vs := sc.vs[:0]
	for _, x := range links {
		vs = append(vs, ix.vecp(node(x)))
	}
	for i, d := range ix.distances(sc, v, vs) {
		nb = append(nb, cand{d, node(links[i])})
	}
	sc.vs = vs
	return nb
}

// addLink adds the link n → s on layer lc, where d is their distance (the
// paper's back-connection). A full list is pruned back to Mmax with the
// heuristic over its links and s.
func (ix *Index) addLink(sc *scratch, n, s node, d float32, lc int) {
	ix.lock(n).Lock()
	defer ix.lock(n).Unlock()
	ix.addLinkLocked(sc, n, s, d, lc)
}

// addLinkLocked is addLink with n's lock (or mu, for writing) held.
func (ix *Index) addLinkLocked(sc *scratch, n, s node, d float32, lc int) {
	l := ix.list(n, lc)
	cnt := int(l[0])
	for _, x := range l[1 : 1+cnt] {
		if node(x) == s {
			return
		}
	}
	maxM := ix.maxLinks(lc)
	if cnt < maxM {
		atomic.StoreUint32(&l[1+cnt], uint32(s))
		atomic.StoreUint32(&l[0], uint32(cnt+1))
		return
	}
	vn := ix.vec(n)
	nb := append(sc.nb[:0], cand{d, s})
	nb = ix.scoreLinks(sc, vn, l[1:1+cnt], nb)
	sortCands(nb)
	sc.keep = ix.selectNeighbors(nb, maxM, sc.keep)
	storeList(l, sc.keep)
	sc.nb = nb
}

// unlinkLocked removes the tombstoned nodes dead from the graph in one
// pass: every live node linking to one of them on some layer is repaired
// once, other tombstones just lose their links to them, then their slots
// are freed. mu is held for writing, so plain reads and writes are safe.
// The scan over all nodes costs O(n·M), shared by all of dead.
func (ix *Index) unlinkLocked(dead []node) {
	if len(ix.dead) < ix.capacity() {
		ix.dead = make([]bool, ix.capacity())
	}
	top := -1
	for _, s := range dead {
		ix.dead[s] = true
		top = max(top, int(ix.levelOf(s)))
	}
	isDead := func(x uint32) bool { return ix.dead[x] }
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	for u := node(0); u < ix.next; u++ {
		lu := ix.levelOf(u)
		if lu == freeLevel || ix.dead[u] {
			continue
		}
		tomb := ix.isTomb(u)
		for lc := 0; lc <= min(int(lu), top); lc++ {
			l := ix.list(u, lc)
			if !slices.ContainsFunc(l[1:1+l[0]], isDead) {
				continue
			}
			if tomb {
				// Deleted itself: keep it walkable, without links
				// to freed slots.
				kept := slices.DeleteFunc(l[1:1+l[0]], isDead)
				l[0] = uint32(len(kept))
				continue
			}
			ix.repair(sc, u, lc)
		}
	}
	ep, _, _ := ix.entry()
	epGone := false
	ix.idMu.Lock()
	for _, s := range dead {
		for lc := 0; lc <= int(ix.levelOf(s)); lc++ {
			ix.list(s, lc)[0] = 0
		}
		ix.setLevel(s, freeLevel)
		ix.setUpper(s, 0)
		ix.setVec(s, nil)
		ix.setTomb(s, false)
		ix.free = append(ix.free, s)
		ix.dead[s] = false
		epGone = epGone || s == ep
	}
	ix.idMu.Unlock()
	if epGone {
		// The highest live node, else the highest tombstone.
		best, bestLevel := node(0), -1
		for _, wantTomb := range []bool{false, true} {
			for u := node(0); u < ix.next; u++ {
				if lu := ix.levelOf(u); lu != freeLevel && ix.isTomb(u) == wantTomb && int(lu) > bestLevel {
					best, bestLevel = u, int(lu)
				}
			}
			if bestLevel >= 0 {
				break
			}
		}
		if bestLevel < 0 {
			ix.ep.Store(0)
		} else {
			ix.ep.Store(packEntry(best, bestLevel))
		}
	}
}

// repair replaces u's links to deleted nodes (tombstones, those being
// unlinked among them) on layer lc: its new links are chosen with the
// heuristic from its live links, the live links of its deleted neighbours,
// and the links of its live neighbours (hnswlib's
// repairConnectionsForUpdate, which also looks two hops out), and each new
// neighbour links back to u. mu is held for writing; the deleted nodes are
// still in place while the repairs run.
func (ix *Index) repair(sc *scratch, u node, lc int) {
	lu := ix.list(u, lc)
	vu := ix.vec(u)
	nb := sc.nb[:0]
	sc.vis.reset(ix.capacity())
	sc.vis.visit(u)
	// Deleted nodes of later batches are candidates like live ones: they
	// are still walkable, and their own batch repairs the links to them.
	// Leaving them out halves the candidates when many are pending (as
	// after one Untrack of half a graph) and costs recall (0.802 against
	// 0.830 in TestDeleteRecall).
	// Candidates are gathered first and scored together, four at a time
	// with the gather kernels, their vectors prefetched.
	todo, vs := sc.batch[:0], sc.vs[:0]
	add := func(x uint32) {
		if n := node(x); !ix.dead[n] && !sc.vis.visit(n) {
			todo = append(todo, n)
			vs = append(vs, ix.vecp(n))
			prefetchLines(unsafe.Pointer(vs[len(vs)-1]), ix.pfLines)
		}
	}
	for _, x := range lu[1 : 1+lu[0]] {
		add(x)
	}
	// The live links of u's deleted neighbours, and, walking on through
	// deleted nodes, of the deleted nodes they link to: when a whole
	// neighbourhood goes in one batch (as when every item near u is
	// upserted), a deleted neighbour's links are mostly deleted too, and
	// stopping at them cut u's region off from the rest of the graph
	// (TestReachAfterChurn: batches of upserted neighbours became islands
	// that no search could reach). The walk expands at most
	// deadWalk·Mmax deleted nodes.
	deadq := sc.deadq[:0]
	for _, x := range lu[1 : 1+lu[0]] {
		if ix.dead[x] && !sc.vis.visit(node(x)) {
			deadq = append(deadq, node(x))
		}
	}
	for i := 0; i < len(deadq) && i < deadWalk*ix.maxLinks(lc); i++ {
		ls := ix.list(deadq[i], lc)
		for _, y := range ls[1 : 1+ls[0]] {
			if !ix.dead[y] {
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
	for _, x := range lu[1 : 1+lu[0]] {
		if ix.dead[x] {
			continue
		}
		lx := ix.list(node(x), lc)
		for _, y := range lx[1 : 1+lx[0]] {
			add(y)
		}
	}
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
	sc.keep = ix.selectNeighbors(pool, ix.maxLinks(lc), sc.keep)
	// Remember which links are new before overwriting the list.
	fresh := sc.sel[:0]
	for _, c := range sc.keep {
		if !slices.Contains(lu[1:1+lu[0]], uint32(c.node)) {
			fresh = append(fresh, c)
		}
	}
	storeList(lu, sc.keep)
	sc.nb = nb
	// Link back from each new neighbour, as an insert does, so that the
	// nodes around the hole keep their in-links. Without this, recall after
	// deleting half of a graph falls 0.01–0.05 below a fresh build in
	// TestDeleteRecall (five seeds); with it, it is within ±0.03 of it,
	// mostly above. A neighbour not yet scanned may keep a dead link
	// through this; its own repair removes it.
	for _, c := range fresh {
		ix.addLinkLocked(sc, c.node, u, c.dist, lc)
	}
	sc.sel = fresh
}

// repairPool times Mmax is the number of nearest candidates a repair
// selects from.
const repairPool = 3

// deadWalk times Mmax bounds the deleted nodes a repair walks through to
// find live candidates.
const deadWalk = 2

// candLess orders candidates by ascending distance, ties by node, as
// sortCands does.
func candLess(a, b cand) bool {
	return a.dist < b.dist || a.dist == b.dist && a.node < b.node
}

// nearest reorders cs so that its first min(p, len(cs)) elements are the p
// smallest in candLess order, sorted, and returns them. It keeps a bounded
// max-heap in the front of cs, O(len(cs)·log p), rather than sorting all of
// cs: a repair gathers up to about (2·Mmax)² candidates and keeps 3·Mmax.
func nearest(cs []cand, p int) []cand {
	if len(cs) <= p {
		sortCands(cs)
		return cs
	}
	h := cs[:p]
	// Heapify the first p as a max-heap under candLess.
	for i := p/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, c := range cs[p:] {
		if candLess(c, h[0]) {
			h[0] = c
			siftDown(h, 0)
		}
	}
	sortCands(h)
	return h
}

func siftDown(h []cand, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && candLess(h[l], h[r]) {
			l = r
		}
		if !candLess(h[i], h[l]) {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}
