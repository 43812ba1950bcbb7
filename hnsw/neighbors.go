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
//
// A candidate is scored against the first neighbour kept alone (the one
// that rejects it most often: 44% of rejections in an insert at d = 100),
// then against the others four at a time with the gather kernel, stopping
// at the first group that rejects it. Against one kernel call a pair the
// selections of real inserts take 0.90 of the time at d = 100 and 0.98 at
// d = 768 (BenchmarkSelectExperiment); the outcome of the rule does not
// depend on the order of the checks.
func (ix *Index) selectNeighbors(sc *scratch, cs []cand, m int, out []cand) []cand {
	out = out[:0]
	if len(cs) <= m {
		return append(out, cs...)
	}
	kept := sc.kv[:0] // the vectors of out
	if cap(sc.kd) < 4 {
		sc.kd = make([]float32, 4)
	}
	kd := sc.kd[:4]
	for _, c := range cs {
		if len(out) >= m {
			break
		}
		vc := ix.vec(c.node)
		good := len(kept) == 0 || ix.dist(vc, unsafe.Slice(kept[0], ix.dim)) >= c.dist
		for j := 1; good && j < len(kept); j += 4 {
			for _, d := range ix.distancesInto(vc, kept[j:min(j+4, len(kept))], kd) {
				if d < c.dist {
					good = false
					break
				}
			}
		}
		if good {
			out = append(out, c)
			kept = append(kept, ix.vecp(c.node))
		}
	}
	sc.kv = kept
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
	sc.keep = ix.selectNeighbors(sc, nb, ix.maxLinks(lc), sc.keep)
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
	sc.keep = ix.selectNeighbors(sc, nb, maxM, sc.keep)
	storeList(l, sc.keep)
	sc.nb = nb
}

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
