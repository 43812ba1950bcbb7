package hnsw

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// Verify checks the structure of the graph and returns every problem found
// (up to a hundred), wrapped in one error that wraps [vector.ErrCorrupt]:
// degree bounds, no self-links, no links to free slots or to nodes below
// the layer, no duplicate links, the id map and the slots agreeing, the
// entry point on the top level, and, over a [vector.SlotStore], every node
// at its vector's slot. It waits for running searches and inserts and
// blocks new ones while it runs. Tests run it after every change; it
// costs O(n·M).
func (ix *Index) Verify() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.verifyLocked(); err != nil {
		return err
	}
	return ix.verifySlotsLocked()
}

// verifySlotsLocked checks, over a store with slots (see Index.slots),
// that every node not deleted is its vector's slot in the store and that
// the graph knows the store's block of each node. mu is held.
func (ix *Index) verifySlotsLocked() error {
	if ix.slots == nil {
		return nil
	}
	var errs []error
	for s := node(0); s < ix.next && len(errs) < 100; s++ {
		if ix.levelOf(s) == freeLevel || ix.isTomb(s) {
			continue
		}
		if int(s)>>vector.SlotBlockShift >= len(ix.slotBase) {
			errs = append(errs, fmt.Errorf("node %d beyond the %d store blocks known", s, len(ix.slotBase)))
			continue
		}
		// An id the store lacks was deleted behind the index's back
		// (through another index over the store), as before the slots.
		if sl, ok := ix.slots.Slot(ix.idOf(s)); ok && node(sl) != s {
			errs = append(errs, fmt.Errorf("node %d (id %d) is not its slot in the store, %d", s, ix.idOf(s), sl))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("hnsw: verify: %w: %w", vector.ErrCorrupt, errors.Join(errs...))
}

// verifyLocked is Verify with mu held for writing. It never panics, whatever
// the arrays hold, so it also checks decoded graphs.
func (ix *Index) verifyLocked() error {
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 100 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	live, pending, tombs, free, top := 0, 0, 0, 0, -1
	for s := node(0); s < ix.next; s++ {
		lv := ix.levelOf(s)
		if lv == freeLevel {
			if got, ok := ix.idGet(ix.idOf(s)); ok && got == s {
				pending++ // reserved by a batch insert in progress
			} else if free++; ix.hasVec(s) {
				bad("free slot %d holds a vector", s)
			}
			if ix.isTomb(s) {
				bad("free slot %d is a tombstone", s)
			}
			continue
		}
		top = max(top, int(lv))
		if ix.isTomb(s) {
			// Deleted, not yet unlinked: out of the id map.
			tombs++
		} else if got, ok := ix.idGet(ix.idOf(s)); !ok || got != s {
			live++
			bad("slot %d (id %d) missing from the id map", s, ix.idOf(s))
		} else {
			live++
		}
		if !ix.hasVec(s) {
			bad("slot %d has no vector", s)
		}
		if ix.hasUpper(s) != (lv > 0) {
			bad("slot %d at level %d has upper lists: %v", s, lv, ix.hasUpper(s))
			continue
		}
		for lc := 0; lc <= int(lv); lc++ {
			l := ix.list(s, lc)
			cnt := int(l[0])
			if cnt > ix.maxLinks(lc) {
				bad("slot %d layer %d has %d links, max %d", s, lc, cnt, ix.maxLinks(lc))
				continue
			}
			seen := make(map[uint32]bool, cnt)
			for _, x := range l[1 : 1+cnt] {
				n := node(x)
				switch {
				case n == s:
					bad("slot %d layer %d links to itself", s, lc)
				case n >= ix.next || ix.levelOf(n) == freeLevel:
					bad("slot %d layer %d links to free slot %d", s, lc, n)
				case int(ix.levelOf(n)) < lc:
					bad("slot %d layer %d links to slot %d of level %d", s, lc, n, ix.levelOf(n))
				case seen[x]:
					bad("slot %d layer %d links twice to %d", s, lc, n)
				}
				seen[x] = true
			}
		}
	}
	if live != ix.live || pending != ix.pending || live+pending != ix.idLen() {
		bad("%d live and %d pending slots, counts %d and %d, id map %d", live, pending, ix.live, ix.pending, ix.idLen())
	}
	if tombs != len(ix.tombs) {
		bad("%d tombstones, %d listed", tombs, len(ix.tombs))
	}
	listed := free
	if ix.slots != nil {
		listed = 0 // the store hands its slots out (freeSlot)
	}
	if len(ix.free) != listed {
		bad("%d free slots, %d listed", free, len(ix.free))
	}
	if free+live+pending+tombs != int(ix.next) {
		bad("%d free + %d live + %d pending + %d deleted slots != %d used", free, live, pending, tombs, ix.next)
	}
	ep, epTop, ok := ix.entry()
	switch {
	case !ok && live+tombs > 0:
		bad("no entry point in a graph of %d nodes", live+tombs)
	case ok && live+tombs == 0:
		bad("entry point %d in an empty graph", ep)
	case ok && (ep >= ix.next || ix.levelOf(ep) == freeLevel):
		bad("entry point %d is a free slot", ep)
	case ok && (int(ix.levelOf(ep)) != epTop || epTop != top):
		bad("entry point %d at level %d (recorded %d), top level %d", ep, ix.levelOf(ep), epTop, top)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("hnsw: verify: %w: %w", vector.ErrCorrupt, errors.Join(errs...))
}
