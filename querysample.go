// This file holds the sample of recent queries an Auto collection with a
// recall target keeps while a scan answers them, for its next measurement
// of the ways to the target: real queries measure a graph's recall closer
// to the truth than the collection's own vectors held out.

package cairn

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// querySample is a uniform sample of the distinct queries offered since it
// was last taken. A query offered again while it is kept counts once. Safe
// for concurrent use.
type querySample struct {
	mu     sync.Mutex
	seen   int // distinct queries offered since the last take, kept or not
	qs     [][]float32
	hashes []uint64         // hashes[i] is queryHash(qs[i])
	at     map[uint64]int32 // the place in qs of each kept hash
}

// add offers a copy of q to a sample of at most size queries and returns
// how many it holds.
func (s *querySample) add(q []float32, size int) int {
	h := queryHash(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.at[h]; ok && slices.Equal(s.qs[i], q) {
		return len(s.qs)
	}
	s.seen++
	if len(s.qs) < size {
		if s.at == nil {
			s.at = make(map[uint64]int32)
		}
		s.at[h] = int32(len(s.qs))
		s.qs, s.hashes = append(s.qs, slices.Clone(q)), append(s.hashes, h)
		return len(s.qs)
	}
	// Full: keep the newcomer with the chance size/seen, in place of a
	// query drawn at random, so that every query offered has the same.
	if j := rand.IntN(s.seen); j < len(s.qs) {
		if s.at[s.hashes[j]] == int32(j) {
			delete(s.at, s.hashes[j])
		}
		copy(s.qs[j], q)
		s.hashes[j], s.at[h] = h, int32(j)
	}
	return len(s.qs)
}

// len returns how many queries the sample holds.
func (s *querySample) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.qs)
}

// take returns the queries held and empties the sample.
func (s *querySample) take() [][]float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	qs := s.qs
	s.seen, s.qs, s.hashes, s.at = 0, nil, nil, nil
	return qs
}

// queryHash is FNV-1a over the bits of every component of q.
func queryHash(q []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range q {
		h ^= uint64(math.Float32bits(x))
		h *= 1099511628211
	}
	return h
}
