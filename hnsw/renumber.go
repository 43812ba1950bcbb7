package hnsw

import "unsafe"

// renumberMinLen is the least number of nodes an index renumbers: below
// it, the rows of a graph at dimension 100 take under 10 MiB and stay
// mostly in cache whatever their order. Variable for the tests.
var renumberMinLen = 16384

// renumberIfGrown renumbers the slots once the index has doubled since it
// last did (or reached renumberMinLen), as a batch or an insert ends: the
// copying then costs each insert O(1) on average. It takes mu for writing
// only when the graph is quiet enough to renumber (see renumberLocked).
func (ix *Index) renumberIfGrown() {
	due := func() bool {
		ix.idMu.Lock()
		defer ix.idMu.Unlock()
		return ix.live >= renumberMinLen && ix.live >= 2*ix.renumberedAt &&
			ix.unl == nil && ix.pending == 0 && ix.batches.Load() == 0
	}
	ix.mu.RLock()
	ok := due()
	ix.mu.RUnlock()
	if !ok {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if due() {
		ix.renumberLocked()
	}
}

// renumberLocked gives the nodes new slots in the order a breadth-first
// walk of layer 0 from the entry point meets them (nodes it does not reach
// follow, in slot order), and drops the free slots. A search reads the
// rows of the nodes near the ones it has read; numbered this way,
// neighbours lie near each other in the rows, so that more of what a walk
// reads shares cache lines and pages with what it read just before.
//
// It renumbers only a quiet graph: no unlink under way, no slots reserved
// by inserts not yet linked, no batch running; it reports whether it did.
// Tombstones keep their flag and their place in the list of those waiting. mu is held for writing (or the index is not yet shared:
// a graph being read). The results of searches do not change,
// but for the order of nodes at equal distances.
func (ix *Index) renumberLocked() bool {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	ep, top, ok := ix.entry()
	if !ok || ix.unl != nil || ix.pending > 0 || ix.batches.Load() > 0 {
		return false
	}
	// order lists the old slots in their new order; to maps an old slot
	// to its new one, plus one (0: not yet placed).
	order := make([]node, 0, ix.live)
	to := make([]uint32, ix.next)
	place := func(s node) {
		to[s] = uint32(len(order)) + 1
		order = append(order, s)
	}
	place(ep)
	for i := 0; i < len(order); i++ {
		l := ix.list(order[i], 0)
		for _, x := range l[1 : 1+l[0]] {
			if to[x] == 0 {
				place(node(x))
			}
		}
	}
	for s := node(0); s < ix.next; s++ {
		if to[s] == 0 && ix.levelOf(s) != freeLevel {
			place(s)
		}
	}

	old, bc := ix.pages, ix.bcodes.Swap(nil)
	if bc != nil {
		ix.bcodes.Store(bc.renumbered(order))
		bc.region.free()
	}
	ix.pages, ix.rowChunk, ix.rowAlloc = nil, nil, 0
	ix.growLocked(len(order))
	rename := func(l []uint32) {
		for j := 1; j <= int(l[0]); j++ {
			l[j] = to[l[j]] - 1
		}
	}
	// Rows are read in the new order, from all over the old pages:
	// fetch a few ahead, so that their misses overlap.
	const ahead = 8
	lines := (ix.row0*4 + 63) / 64
	for n, s := range order {
		if n+ahead < len(order) {
			a := order[n+ahead]
			ap := old[a>>pageShift]
			prefetchLines(unsafe.Pointer(&ap.rows0[int(a&pageMask)*ix.row0]), lines)
		}
		op, oi := old[s>>pageShift], int(s&pageMask)
		np, ni := ix.pageOf(node(n))
		row := np.rows0[ni*ix.row0 : (ni+1)*ix.row0]
		copy(row, op.rows0[oi*ix.row0:(oi+1)*ix.row0])
		rename(row[ix.lnk0 : ix.lnk0+ix.stride0])
		np.upper[ni] = op.upper[oi]
		np.ids[ni] = op.ids[oi]
		np.level[ni] = op.level[oi]
		np.tomb[ni] = op.tomb[oi]
		np.vecs[ni] = op.vecs[oi]
		if ix.inline {
			np.vecs[ni] = (*float32)(unsafe.Pointer(unsafe.SliceData(row)))
		}
		for lc := 1; lc <= int(np.level[ni]); lc++ {
			rename(ix.list(node(n), lc))
		}
	}
	ix.next, ix.free = node(len(order)), nil
	ix.byID = idMap{}
	for n := range order {
		if !ix.isTomb(node(n)) { // a tombstone's id is free
			ix.idPut(node(n))
		}
	}
	for i, s := range ix.tombs {
		ix.tombs[i] = node(to[s] - 1)
	}
	ix.ep.Store(packEntry(node(to[ep]-1), top))
	ix.renumbers++
	ix.renumberedAt = ix.live
	return true
}
