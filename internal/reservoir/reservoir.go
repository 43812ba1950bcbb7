// Package reservoir holds the sample of recent queries that recall is
// measured on: the one an HNSW index keeps for its calibrations, and the
// one an Auto collection keeps while a scan answers, for the graph it
// measures next.
package reservoir

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

const (
	// Min is the smallest sample, and the size of a reservoir whose size
	// is not set: with 10 neighbours a query, the standard error of a
	// recall near 0.95 is about 0.004 over this many distinct queries.
	Min = 400
	// Max is the largest sample, for small indexes whose exact neighbours
	// cost less (see Size).
	Max = 2000
	// budget is the work of the exact neighbours of a sample, in scored
	// components: Min queries at 100,000 × 768, about 3 s on one core.
	budget = Min * 100_000 * 768
)

// Size is the size of the sample of recent queries kept for an index of n
// vectors of dimension dim: as many as have exact neighbours that cost
// what Min do at 100,000 × 768, from Min to Max. At 768-d it is 400 from
// 100,000 vectors up and 2,000 up to 20,000; its memory is that many
// vectors (6 MiB at 768-d).
func Size(n, dim int) int {
	m := int64(budget) / max(1, int64(n)*int64(dim))
	return int(min(max(m, Min), Max))
}

// Reservoir is a uniform sample of the queries added since it was last
// restarted, kept as copies. A query equal to one it holds is not kept
// again. Safe for concurrent use; most calls to Add cost one atomic add.
type Reservoir struct {
	seen   atomic.Int64 // queries added since the last restart
	size   atomic.Int64 // 0 for Min
	mu     sync.Mutex   // guards the fields below
	sample [][]float32  // in arenas
	arena  []float32    // the free end of the latest arena
	// hashes[i] is Hash(sample[i]), and kept maps the hash of each query
	// of the sample to its slot: a query equal to the one kept under its
	// hash is not kept again, so len(kept) is the number of distinct
	// queries held (but for distinct queries whose full hashes collide,
	// which are kept, and counted once).
	hashes []uint64
	kept   map[uint64]int32
}

// Add keeps a copy of q with the probability that makes the reservoir a
// uniform sample of the queries added since its last restart, unless an
// equal query is kept already, and returns how many have been added since.
func (r *Reservoir) Add(q []float32) int64 {
	c := r.seen.Add(1)
	size := r.Size()
	slot := c - 1
	if c > size {
		slot = int64(rand.Uint64N(uint64(c)))
		if slot >= size {
			return c
		}
	}
	h := Hash(q)
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.kept[h]; ok && slices.Equal(r.sample[i], q) {
		// Kept already: a measurement counts it once, and a copy would
		// take the place of another query.
		return c
	}
	if int(slot) < len(r.sample) {
		if r.kept[r.hashes[slot]] == int32(slot) {
			delete(r.kept, r.hashes[slot])
		}
		copy(r.sample[slot], q)
		r.hashes[slot] = h
		r.keptAt(h, int32(slot))
		return c
	}
	if size = r.Size(); len(r.sample) >= int(size) {
		return c // resized meanwhile
	}
	// The sample's vectors share one allocation, made by the first query
	// kept (and again if Limit has raised the size since), so that
	// keeping costs a copy, not an allocation a query.
	if len(r.arena) < len(q) {
		r.arena = make([]float32, (int(size)-len(r.sample))*len(q))
	}
	if r.kept == nil {
		r.kept = make(map[uint64]int32, size)
	}
	v := r.arena[:len(q):len(q)]
	r.arena = r.arena[len(q):]
	copy(v, q)
	r.keptAt(h, int32(len(r.sample)))
	r.sample = append(r.sample, v)
	r.hashes = append(r.hashes, h)
	return c
}

// keptAt notes that the query of hash h is kept in slot i, unless another
// query held has that hash: then that one stays under it. mu is held.
func (r *Reservoir) keptAt(h uint64, i int32) {
	if _, taken := r.kept[h]; !taken {
		r.kept[h] = i
	}
}

// Size returns how many queries the reservoir holds at most.
func (r *Reservoir) Size() int64 {
	if s := r.size.Load(); s > 0 {
		return s
	}
	return Min
}

// Resize makes size the reservoir's size; if that changes it, the queries
// held are dropped.
func (r *Reservoir) Resize(size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resizeLocked(size)
}

func (r *Reservoir) resizeLocked(size int) {
	if int64(size) != r.Size() {
		r.size.Store(int64(size))
		r.sample, r.arena, r.hashes, r.kept = nil, nil, nil, nil
	}
}

// Limit makes size the reservoir's size, keeping the queries held (those
// beyond a smaller size stay until the next Take or Restart).
func (r *Reservoir) Limit(size int) {
	r.size.Store(int64(size))
}

// Seen returns how many queries have been added since the last restart.
func (r *Reservoir) Seen() int64 { return r.seen.Load() }

// Len returns how many queries the reservoir holds, copies included.
func (r *Reservoir) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sample)
}

// Distinct returns how many distinct queries the reservoir holds, as it
// keeps count of them.
func (r *Reservoir) Distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.kept)
}

// Restart returns copies of the distinct queries held and starts a new
// sample of size queries: the queries added from now on replace those
// held, from the first slot on (if size changes the reservoir's, those
// held are dropped at once).
func (r *Reservoir) Restart(size int) [][]float32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := Distinct(r.sample)
	qs := make([][]float32, len(kept))
	for i, q := range kept {
		qs[i] = slices.Clone(q)
	}
	r.seen.Store(0)
	r.resizeLocked(size)
	return qs
}

// Take returns the queries held and empties the reservoir.
func (r *Reservoir) Take() [][]float32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	qs := r.sample
	r.seen.Store(0)
	r.sample, r.arena, r.hashes, r.kept = nil, nil, nil, nil
	return qs
}

// Distinct returns the vectors of qs without repeats, in their first
// order. Vectors are told apart by their hashes, and compared in full when
// the hashes agree.
func Distinct(qs [][]float32) [][]float32 {
	seen := make(map[uint64][]int, len(qs))
	out := make([][]float32, 0, len(qs))
next:
	for _, q := range qs {
		h := Hash(q)
		for _, j := range seen[h] {
			if slices.Equal(out[j], q) {
				continue next
			}
		}
		seen[h] = append(seen[h], len(out))
		out = append(out, q)
	}
	return out
}

// Hash is FNV-1a over the bits of v's components, all of them: a prefix
// does not tell real queries apart (the first row of an image is mostly
// blank: of fashion-mnist's 1,000 test images, 665 differ in their first
// 16 pixels, and a calibration on 500 of them kept 337).
func Hash(v []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range v {
		h ^= uint64(math.Float32bits(x))
		h *= 1099511628211
	}
	return h
}

// Sample returns the queries held, copies included, as they are: for
// tests.
func (r *Reservoir) Sample() [][]float32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sample)
}
