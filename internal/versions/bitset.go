package versions

import (
	"math/bits"

	"github.com/cairndb/cairn/vector"
)

// bitset is a set of version ids. Ids are issued in sequence, so they are
// a bitmap from 0, grown as they come; an id far beyond the others (which
// only a file written elsewhere can hold) goes in a map instead, so the
// bitmap stays within 64 words per id it holds. It is a vector.Filter.
type bitset struct {
	words []uint64
	far   map[vector.ID]struct{}
	n     int // ids held
}

// set adds id.
func (s *bitset) set(id vector.ID) {
	if s.has(id) {
		return
	}
	s.n++
	w := id / 64
	if w >= vector.ID(len(s.words)) {
		if w >= vector.ID(max(1<<14, 64*(s.n+1))) {
			if s.far == nil {
				s.far = make(map[vector.ID]struct{})
			}
			s.far[id] = struct{}{}
			return
		}
		s.words = append(s.words, make([]uint64, int(w)+1-len(s.words))...)
		for f := range s.far { // now within the bitmap
			if f/64 < vector.ID(len(s.words)) {
				delete(s.far, f)
				s.words[f/64] |= 1 << (f % 64)
			}
		}
	}
	s.words[w] |= 1 << (id % 64)
}

// clear removes id.
func (s *bitset) clear(id vector.ID) {
	if !s.has(id) {
		return
	}
	s.n--
	if w := id / 64; w < vector.ID(len(s.words)) {
		s.words[w] &^= 1 << (id % 64)
	} else {
		delete(s.far, id)
	}
}

func (s *bitset) has(id vector.ID) bool {
	if w := id / 64; w < vector.ID(len(s.words)) {
		return s.words[w]&(1<<(id%64)) != 0
	}
	_, ok := s.far[id]
	return ok
}

// Allow reports whether id is in the set.
func (s *bitset) Allow(id vector.ID) bool { return s.has(id) }

// each calls f with every id in the set.
func (s *bitset) each(f func(vector.ID)) {
	for i, w := range s.words {
		for w != 0 {
			f(vector.ID(i*64 + bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	for id := range s.far {
		f(id)
	}
}
