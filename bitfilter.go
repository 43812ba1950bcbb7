package cairn

// This file holds the bitmap allow-list handed to an index for a large
// filter match.

import (
	"slices"

	"github.com/cairndb/cairn/vector"
)

// bitFilter is an allow-list of ids as a bitmap over the span of the ids
// it holds, for allow-lists too large for a [vector.IDSet] to be worth
// building: ids are mostly dense (issued in sequence), so it is small and
// quick to fill and to test.
type bitFilter struct {
	lo    vector.ID // the id of bit 0 of words[0]
	words []uint64
}

// newBitFilter returns ids, all below next, as a bitmap, or false if
// their span would take more words than there are ids (sparse ids, such as
// a few far-off ones a file can hold), for which a set is the smaller
// form. ids is not empty.
func newBitFilter(next vector.ID, ids matched) (*bitFilter, bool) {
	b := new(bitFilter)
	return b, b.fill(next, ids)
}

// fill sets b to ids as newBitFilter does, reusing b's words, and reports
// whether it did (false for ids too sparse for a bitmap).
func (b *bitFilter) fill(next vector.ID, ids matched) bool {
	n := vector.ID(ids.len())
	lo, hi := vector.ID(0), next
	if next/64 >= n { // not dense from 0: find the span of the ids
		lo, hi = ^vector.ID(0), 0
		for _, id := range ids.ids {
			lo, hi = min(lo, id), max(hi, id)
		}
		for id := range ids.set {
			lo, hi = min(lo, id), max(hi, id)
		}
		if (hi-lo)/64 >= n {
			return false
		}
	}
	b.lo, b.words = lo, slices.Grow(b.words[:0], int((hi-lo)/64+1))[:(hi-lo)/64+1]
	clear(b.words)
	for _, id := range ids.ids {
		b.words[(id-lo)/64] |= 1 << ((id - lo) % 64)
	}
	for id := range ids.set {
		b.words[(id-lo)/64] |= 1 << ((id - lo) % 64)
	}
	return true
}

// Allow reports whether id is in the set.
func (b *bitFilter) Allow(id vector.ID) bool {
	if id < b.lo {
		return false
	}
	w := (id - b.lo) / 64
	return w < vector.ID(len(b.words)) && b.words[w]&(1<<((id-b.lo)%64)) != 0
}
