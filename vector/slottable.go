package vector

import "math/bits"

// slotTable maps ids to the slots of a [MemStore]: an open-addressing hash
// table with linear probing whose cells hold slot+1 (0 is empty). The key
// of a cell is the id the store records for its slot (keyOf), so a cell
// costs 4 bytes, against about 26 for a map[ID]uint32 (8-byte key, 4-byte
// value padded to 16, control bytes, load factor). It is kept at most 3/4
// full. A slot's id must be recorded before the slot is put in the table
// and kept until it is taken out. hnsw's id table is the same design.
type slotTable struct {
	cells []uint32
	n     int
	shift uint8 // 64 − log2(len(cells))
}

func hashID(id ID) uint64 { return uint64(id) * 0x9e3779b97f4a7c15 }

// get returns the slot of id.
func (t *slotTable) get(id ID, keyOf []ID) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.cells) - 1)
	for i := hashID(id) >> t.shift; ; i = (i + 1) & mask {
		c := t.cells[i]
		if c == 0 {
			return 0, false
		}
		if keyOf[c-1] == id {
			return c - 1, true
		}
	}
}

// put records slot sl, whose id keyOf[sl] must be absent.
func (t *slotTable) put(sl uint32, keyOf []ID) {
	if (t.n+1)*4 > len(t.cells)*3 {
		t.grow(max(16, 2*len(t.cells)), keyOf)
	}
	t.insert(sl, keyOf)
	t.n++
}

func (t *slotTable) insert(sl uint32, keyOf []ID) {
	mask := uint64(len(t.cells) - 1)
	i := hashID(keyOf[sl]) >> t.shift
	for t.cells[i] != 0 {
		i = (i + 1) & mask
	}
	t.cells[i] = sl + 1
}

func (t *slotTable) grow(size int, keyOf []ID) {
	old := t.cells
	t.cells = make([]uint32, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	for _, c := range old {
		if c != 0 {
			t.insert(c-1, keyOf)
		}
	}
}

// remove takes id's entry out, if any (backward-shift deletion, so no
// tombstones accumulate).
func (t *slotTable) remove(id ID, keyOf []ID) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.cells) - 1)
	i := hashID(id) >> t.shift
	for {
		c := t.cells[i]
		if c == 0 {
			return
		}
		if keyOf[c-1] == id {
			break
		}
		i = (i + 1) & mask
	}
	// Shift later cells of the probe run back over the hole when their
	// home position is not between the hole and them.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		c := t.cells[j]
		if c == 0 {
			break
		}
		home := hashID(keyOf[c-1]) >> t.shift
		if (j-home)&mask >= (j-i)&mask {
			t.cells[i] = c
			i = j
		}
	}
	t.cells[i] = 0
	t.n--
}
