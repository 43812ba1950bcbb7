package hnsw

import (
	"math/bits"

	"github.com/cairndb/cairn/vector"
)

// slotHolds records which of the store's slots an index holds (see
// Index.slots: those of its deleted nodes not yet unlinked), apart from
// the index, so that a cleanup releases them once the index is garbage:
// an index dropped with such nodes (replaced by a rebuilt one, say) would
// otherwise keep their slots from the store's reuse for good. The index's
// mu, held for writing, guards it; the cleanup runs when nothing else can.
type slotHolds struct {
	store vector.SlotStore
	bits  []uint64 // bit s is set while slot s is held
}

// hold holds slot s of the store, once however often it is called.
func (h *slotHolds) hold(s node) {
	w := int(s / 64)
	if w >= len(h.bits) {
		h.bits = append(h.bits, make([]uint64, w+1-len(h.bits))...)
	}
	if h.bits[w]&(1<<(s%64)) != 0 {
		return
	}
	h.bits[w] |= 1 << (s % 64)
	h.store.Hold(uint32(s))
}

// release releases slot s if it is held.
func (h *slotHolds) release(s node) {
	w := int(s / 64)
	if w >= len(h.bits) || h.bits[w]&(1<<(s%64)) == 0 {
		return
	}
	h.bits[w] &^= 1 << (s % 64)
	h.store.Release(uint32(s))
}

// releaseAll releases every slot held.
func (h *slotHolds) releaseAll() {
	for w, b := range h.bits {
		for ; b != 0; b &= b - 1 {
			h.store.Release(uint32(w*64 + bits.TrailingZeros64(b)))
		}
		h.bits[w] = 0
	}
}

// bytes returns the memory the record holds.
func (h *slotHolds) bytes() int64 { return int64(cap(h.bits)) * 8 }
