package hnsw

import (
	"math/bits"
	"unsafe"

	"github.com/cairndb/cairn/vector"
)

// idMap maps external ids to slots: an open-addressing hash table with
// linear probing whose cells hold slot+1 (0 is empty); the key of a cell is
// the id recorded for its slot, so a cell costs 4 bytes against about 26 for
// a map[vector.ID]node (8-byte key, 4-byte value padded to 16, control
// bytes, load factor). It is kept at most 3/4 full. The id of a slot must
// be set before the slot is put in the map and cleared after it is taken
// out. Guarded by the index's idMu.
type idMap struct {
	cells []uint32
	n     int
	shift uint8 // 64 − log2(len(cells))
}

func hashID(id vector.ID) uint64 { return uint64(id) * 0x9e3779b97f4a7c15 }

// get returns the slot of id.
func (ix *Index) idGet(id vector.ID) (node, bool) {
	m := &ix.byID
	if m.n == 0 {
		return 0, false
	}
	mask := uint64(len(m.cells) - 1)
	for i := hashID(id) >> m.shift; ; i = (i + 1) & mask {
		c := m.cells[i]
		if c == 0 {
			return 0, false
		}
		if ix.idOf(node(c-1)) == id {
			return node(c - 1), true
		}
	}
}

// idPut records that slot s (whose id is set) holds id; id must be absent.
func (ix *Index) idPut(s node) {
	m := &ix.byID
	if (m.n+1)*4 > len(m.cells)*3 {
		ix.idGrow(max(16, 2*len(m.cells)))
	}
	ix.idInsert(s)
	m.n++
}

func (ix *Index) idInsert(s node) {
	m := &ix.byID
	mask := uint64(len(m.cells) - 1)
	i := hashID(ix.idOf(s)) >> m.shift
	for m.cells[i] != 0 {
		i = (i + 1) & mask
	}
	m.cells[i] = uint32(s) + 1
}

func (ix *Index) idGrow(size int) {
	m := &ix.byID
	old := m.cells
	m.cells = make([]uint32, size)
	m.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	for _, c := range old {
		if c != 0 {
			ix.idInsert(node(c - 1))
		}
	}
}

// idDelete removes id's entry, if any (backward-shift deletion, so no
// tombstones accumulate).
func (ix *Index) idDelete(id vector.ID) {
	m := &ix.byID
	if m.n == 0 {
		return
	}
	mask := uint64(len(m.cells) - 1)
	i := hashID(id) >> m.shift
	for {
		c := m.cells[i]
		if c == 0 {
			return
		}
		if ix.idOf(node(c-1)) == id {
			break
		}
		i = (i + 1) & mask
	}
	// Shift later cells of the probe run back over the hole when their
	// home position is not between the hole and them.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		c := m.cells[j]
		if c == 0 {
			break
		}
		home := hashID(ix.idOf(node(c-1))) >> m.shift
		if (j-home)&mask >= (j-i)&mask {
			m.cells[i] = c
			i = j
		}
	}
	m.cells[i] = 0
	m.n--
}

// idLen returns the number of ids in the map.
func (ix *Index) idLen() int { return ix.byID.n }

func (ix *Index) idMapBytes() int64 {
	return int64(len(ix.byID.cells)) * int64(unsafe.Sizeof(uint32(0)))
}
