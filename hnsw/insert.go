package hnsw

// insert links node s, whose vector v (ix.vecp(s)) and external id are
// already in place, into the graph with top layer lvl (paper, Algorithm 1).
// mu is held for reading.
func (ix *Index) insert(sc *scratch, s node, v []float32, lvl int) {
	ix.setUpper(s, lvl)
	ix.list(s, 0)[0] = 0
	ix.setLevel(s, uint8(lvl))

	ep, top, ok := ix.entry()
	if !ok || lvl > top {
		// This insert may raise the top level: serialise it with the
		// others that may, and look again.
		ix.epMu.Lock()
		defer ix.epMu.Unlock()
		ep, top, ok = ix.entry()
		if !ok {
			ix.ep.Store(packEntry(s, lvl))
			return
		}
		if lvl > top {
			defer ix.ep.Store(packEntry(s, lvl))
		}
	}

	// Codes, if there are any, are walked: a batch's (buildcodes.go), or
	// the rows' of an index that quantizes; the neighbours are still
	// chosen on exact distances (exactCands).
	src := source{q: v}
	if bc := ix.bcodes.Load(); bc != nil {
		if bc.q.PrepareInto(&sc.pq, v) == nil {
			src.pq, src.bc = &sc.pq, bc
		}
	} else if qz := ix.quant.q; qz != nil && qz.Bits() == 8 && qz.Coded() == ix.dim && ix.dim >= buildCodesMinDim && ix.prepareCodes(sc, qz, v) {
		src.pq = &sc.pq
	}
	cur := cand{ix.scoreOne(src, ep), ep}
	for lc := top; lc > lvl; lc-- {
		cur = ix.greedy(sc, src, cur, lc, 0, false)
	}
	sc.ent = append(sc.ent[:0], cur)
	hi := min(top, lvl)
	for len(sc.sels) <= hi {
		sc.sels = append(sc.sels, nil)
	}
	for lc := hi; lc >= 0; lc-- {
		ix.searchLayer(sc, src, sc.ent, ix.opts.EfConstruction, ix.opts.EfConstruction, lc, false, nil, nil)
		// Another insert may have made s reachable already; never link
		// s to itself.
		found := withoutNode(sc.w, s)
		w := found
		if src.pq != nil {
			w = ix.exactCands(sc, v, found)
		}
		sc.sels[lc] = ix.selectNeighbors(sc, w, ix.m, sc.sels[lc])
		// The next layer starts from what this one found, scored as its
		// walk scores.
		sc.ent = append(sc.ent[:0], found...)
	}
	// Link from layer 0 up: s becomes reachable on a layer only once its
	// lists on that layer and every layer below are set, so a search that
	// steps onto s never finds it without layer-0 links.
	for lc := 0; lc <= hi; lc++ {
		ix.setLinks(sc, s, lc, sc.sels[lc])
		for _, c := range sc.sels[lc] {
			ix.addLink(sc, c.node, s, c.dist, lc)
		}
	}
}

// withoutNode removes node s from cs, if there, and returns cs.
func withoutNode(cs []cand, s node) []cand {
	for i, c := range cs {
		if c.node == s {
			return append(cs[:i], cs[i+1:]...)
		}
	}
	return cs
}
