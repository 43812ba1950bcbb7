package vector

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/cairndb/cairn/internal/hugepage"
	"github.com/cairndb/cairn/internal/pagefile"
)

// blockSlots is the number of vectors in one arena block. Blocks are
// allocated whole and never move, so a slice returned by Get stays valid
// while the arena grows, and a scan can hand whole blocks (768 KiB at 768
// dimensions) to the kernels and to worker goroutines.
const blockSlots = 256

// chunkBytes bounds the memory blocks are carved from at once. Blocks come
// in chunks that double with the store (1, 1, 2, 4, … blocks) up to about
// chunkBytes, so that the vectors of a large store lie in arrays big
// enough for huge pages (internal/hugepage): with 4 KiB pages a graph
// walk misses the TLB on nearly every vector it reads. At most one chunk
// is partly used.
const chunkBytes = 16 << 20

// MemStore is an in-memory [Store]. Vectors live in an arena of fixed-size
// blocks of contiguous float32s (no per-vector allocation, no map of
// slices); ids map to dense slots, and the slot of a deleted vector is
// reused by the next Put unless an index holds it (MemStore is a
// [SlotStore]). Under Cosine, vectors are normalised once on the
// way in. A large store's blocks lie on transparent huge pages where Linux
// offers them (see chunkBytes), which spares a graph walk a TLB miss on
// nearly every vector it reads.
//
// MemStore is safe for concurrent use: any number of goroutines may read
// (Get, Len, ForEach, ViewBlocks, Slot, SlotBlock) while others write
// (Put, PutBatch, Delete, Hold, Release); writes are serialised by a lock.
type MemStore struct {
	dim    int
	metric Metric
	// pages holds the arena when it is paged (NewPagedMemStore); nil
	// when the arena is the process's own memory.
	pages *pagefile.File

	mu     sync.RWMutex
	blocks [][]float32 // each blockSlots*dim long
	chunk  []float32   // the unused rest of the chunk blocks are carved from
	alloc  int64       // bytes of the chunks allocated so far
	ids    []ID        // id of each slot ever allocated
	live   []bool      // whether each slot holds a vector
	slot   slotTable   // id → slot of live vectors
	free   []uint32    // slots to reuse, most recently freed last
	// held counts the holds on slots (SlotStore): a deleted vector's
	// slot joins free once none is left.
	held   map[uint32]uint32
	closed bool
}

// NewMemStore returns an empty store of vectors of dimension dim under
// metric m. It returns an error wrapping [ErrInvalidOptions] if dim is not
// positive or m is not a valid metric.
func NewMemStore(dim int, m Metric) (*MemStore, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("%w: dimension %d must be positive", ErrInvalidOptions, dim)
	}
	if !m.Valid() {
		return nil, fmt.Errorf("%w: invalid metric %v", ErrInvalidOptions, m)
	}
	return &MemStore{dim: dim, metric: m}, nil
}

// NewPagedMemStore returns an empty MemStore whose arena is paged: it
// lives in an unlinked temporary file in dir, mapped into memory, so the
// kernel keeps in memory only the vectors that are read, and reclaims
// them under memory pressure. It suits an index that reads few of its
// vectors per query, as an HNSW index walked on int8 codes does (only to
// rescore a query's finalists): its resident memory is then the graph and
// the codes. Reads that miss the page cache read the disk, so dir should
// be on a local disk (a tmpfs gains nothing). Linux only: elsewhere it
// returns an error wrapping errors.ErrUnsupported.
//
// Close frees the file's space; its mapping is undone once the store is
// unreachable. So the vectors Get returns stay readable while the store
// is reachable (an index over the store holds it), as zeros after Close;
// a caller that keeps a vector beyond that must copy it. A Put that
// cannot grow the file (a full disk) returns an error and stores nothing.
func NewPagedMemStore(dim int, m Metric, dir string) (*MemStore, error) {
	s, err := NewMemStore(dim, m)
	if err != nil {
		return nil, err
	}
	if s.pages, err = pagefile.Create(dir); err != nil {
		return nil, fmt.Errorf("paged store: %w", err)
	}
	runtime.AddCleanup(s, func(p *pagefile.File) { _ = p.Close() }, s.pages)
	return s, nil
}

// Paged reports whether the store's arena is paged (NewPagedMemStore).
func (s *MemStore) Paged() bool { return s.pages != nil }

// PageOut writes a paged store's arena back to its file and drops it from
// memory: each vector is read from the disk the next time it is read, and
// the memory held is the store's slots and id map alone. It returns nil
// at once for a store that is not paged.
func (s *MemStore) PageOut() error {
	if s.pages == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return s.pages.PageOut()
}

// Dim returns the dimension of the store's vectors.
func (s *MemStore) Dim() int { return s.dim }

// Metric returns the metric the store prepares vectors for.
func (s *MemStore) Metric() Metric { return s.metric }

// Len returns the number of stored vectors.
func (s *MemStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.slot.n
}

// Get returns the stored vector of id; see [Store.Get].
func (s *MemStore) Get(id ID) (Vector, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	sl, ok := s.slot.get(id, s.ids)
	if !ok {
		return nil, fmt.Errorf("%w: id %d", ErrNotFound, id)
	}
	return s.row(sl), nil
}

func (s *MemStore) row(sl uint32) Vector {
	b := s.blocks[sl/blockSlots]
	off := int(sl%blockSlots) * s.dim
	return b[off : off+s.dim : off+s.dim]
}

// Put stores a copy of v under id; see [Store.Put].
func (s *MemStore) Put(ctx context.Context, id ID, v Vector) error {
	if err := Check(v, s.dim, s.metric); err != nil {
		return fmt.Errorf("put %d: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if _, ok := s.slot.get(id, s.ids); ok {
		return fmt.Errorf("put %d: %w", id, ErrDuplicateID)
	}
	if err := s.reserveLocked(1); err != nil {
		return fmt.Errorf("put %d: %w", id, err)
	}
	s.insertLocked(id, v)
	return nil
}

// PutBatch stores copies of vs under ids, all or nothing; see
// [BatchPutter]. It returns an error wrapping [ErrInvalidOptions] if the two
// slices differ in length, and [ErrDuplicateID] if an id is repeated in ids
// or already stored.
func (s *MemStore) PutBatch(ctx context.Context, ids []ID, vs []Vector) error {
	if len(ids) != len(vs) {
		return fmt.Errorf("put batch: %w: %d ids for %d vectors", ErrInvalidOptions, len(ids), len(vs))
	}
	seen := make(map[ID]struct{}, len(ids))
	for i, v := range vs {
		if err := Check(v, s.dim, s.metric); err != nil {
			return fmt.Errorf("put batch: item %d (id %d): %w", i, ids[i], err)
		}
		if _, dup := seen[ids[i]]; dup {
			return fmt.Errorf("put batch: item %d (id %d): %w (repeated in batch)", i, ids[i], ErrDuplicateID)
		}
		seen[ids[i]] = struct{}{}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for i, id := range ids {
		if _, ok := s.slot.get(id, s.ids); ok {
			return fmt.Errorf("put batch: item %d (id %d): %w", i, id, ErrDuplicateID)
		}
	}
	if err := s.reserveLocked(len(ids)); err != nil {
		return fmt.Errorf("put batch: %w", err)
	}
	for i, id := range ids {
		s.insertLocked(id, vs[i])
	}
	return nil
}

// reserveLocked makes room for n more vectors: blocks for those the free
// slots cannot take. It fails only when a paged arena cannot grow, and
// then leaves the stored vectors as they were.
func (s *MemStore) reserveLocked(n int) error {
	need := len(s.ids) + max(n-len(s.free), 0)
	for len(s.blocks)*blockSlots < need {
		b, err := s.newBlockLocked()
		if err != nil {
			return err
		}
		s.blocks = append(s.blocks, b)
	}
	return nil
}

// insertLocked writes a validated vector into a free slot, or a new one
// in the blocks reserveLocked made.
func (s *MemStore) insertLocked(id ID, v Vector) {
	var sl uint32
	if n := len(s.free); n > 0 {
		sl = s.free[n-1]
		s.free = s.free[:n-1]
		s.ids[sl] = id
		s.live[sl] = true
	} else {
		sl = uint32(len(s.ids))
		s.ids = append(s.ids, id)
		s.live = append(s.live, true)
	}
	dst := s.row(sl)
	copy(dst, v)
	if s.metric == Cosine {
		normalize(dst)
	}
	s.slot.put(sl, s.ids)
}

// newBlockLocked returns a zeroed block of blockSlots vectors, carved from
// the current chunk or from a new one (see chunkBytes): in the process's
// memory, or in the paged arena's file.
func (s *MemStore) newBlockLocked() ([]float32, error) {
	bs := blockSlots * s.dim
	if len(s.chunk) < bs {
		k := min(max(len(s.blocks), 1), max(chunkBytes/(4*bs), 1))
		if s.pages == nil {
			s.chunk = hugepage.Float32s(k * bs)
		} else {
			c, err := s.pages.Float32s(k * bs)
			if err != nil {
				return nil, err
			}
			s.chunk = c
		}
		s.alloc += int64(4 * k * bs)
	}
	b := s.chunk[:bs:bs]
	s.chunk = s.chunk[bs:]
	return b, nil
}

// Delete removes id; its slot is reused by a later Put once no index
// holds it ([SlotStore]). See [Store.Delete].
func (s *MemStore) Delete(ctx context.Context, id ID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	sl, ok := s.slot.get(id, s.ids)
	if !ok {
		return fmt.Errorf("delete %d: %w", id, ErrNotFound)
	}
	s.slot.remove(id, s.ids)
	s.live[sl] = false
	if s.held[sl] == 0 {
		s.free = append(s.free, sl)
	}
	return nil
}

// ForEach calls fn for every stored vector; see [Store.ForEach]. It works
// on a snapshot of the ids taken when it starts, so fn may call Get; a
// vector deleted after the snapshot is skipped.
func (s *MemStore) ForEach(fn func(ID, Vector) error) error {
	type entry struct {
		id ID
		sl uint32
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	snap := make([]entry, 0, s.slot.n)
	for sl, live := range s.live {
		if live {
			snap = append(snap, entry{s.ids[sl], uint32(sl)})
		}
	}
	s.mu.RUnlock()
	for _, e := range snap {
		s.mu.RLock()
		ok := !s.closed && s.live[e.sl] && s.ids[e.sl] == e.id
		var v Vector
		if ok {
			v = s.row(e.sl)
		}
		s.mu.RUnlock()
		if !ok {
			continue
		}
		if err := fn(e.id, v); err != nil {
			return err
		}
	}
	return nil
}

// ViewBlocks calls fn with the blocks of the arena under the store's read
// lock; see [BlockViewer]. fn must not call the store's methods.
func (s *MemStore) ViewBlocks(fn func([]Block) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	n := len(s.ids)
	blocks := make([]Block, 0, len(s.blocks))
	for b := 0; b*blockSlots < n; b++ {
		lo, hi := b*blockSlots, min((b+1)*blockSlots, n)
		blocks = append(blocks, Block{
			IDs:  s.ids[lo:hi:hi],
			Live: s.live[lo:hi:hi],
			Data: s.blocks[b][: (hi-lo)*s.dim : (hi-lo)*s.dim],
		})
	}
	return fn(blocks)
}

// StoreMemory splits the bytes a [MemStore] holds by what holds them.
//
// It is a plain value, owned by the caller.
type StoreMemory struct {
	// Vectors is dim float32s for every slot handed out (those of
	// deleted vectors waiting for reuse included).
	Vectors int64
	// Spare is the arena allocated but not yet handed out: the rest of
	// the last block and of the chunk blocks are carved from.
	Spare int64
	// Slots is the per-slot arrays (id, liveness), the free list, the
	// block directory and the holds on slots.
	Slots int64
	// IDMap is the table from ids to slots.
	IDMap int64
	// Paged is set when Vectors and Spare lie in the file of a paged
	// arena (NewPagedMemStore), which the kernel pages in as they are
	// read, rather than in the process's own memory.
	Paged bool
}

// Total returns the sum of the byte counts.
func (m StoreMemory) Total() int64 { return m.Vectors + m.Spare + m.Slots + m.IDMap }

// Resident returns the bytes that live in the process's own memory: Total
// less the paged arena's file, if the store is paged.
func (m StoreMemory) Resident() int64 {
	if m.Paged {
		return m.Slots + m.IDMap
	}
	return m.Total()
}

// Memory returns the bytes the store holds, counted from what it holds.
func (s *MemStore) Memory() StoreMemory {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var m StoreMemory
	m.Vectors = int64(len(s.ids)) * int64(s.dim) * 4
	m.Spare = s.alloc - m.Vectors
	m.Slots = int64(cap(s.ids))*8 + int64(cap(s.live)) + int64(cap(s.free))*4 + int64(cap(s.blocks))*24 +
		int64(len(s.held))*16 // a map entry's key and count, about
	m.IDMap = int64(len(s.slot.cells)) * 4
	m.Paged = s.pages != nil
	return m
}

// Close releases the arena: a paged one's disk space at once (vectors
// still held read as zeros), the memory when it is no longer referenced.
// Later calls return [ErrClosed]; Close itself is idempotent.
func (s *MemStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pages != nil && !s.closed {
		if err := s.pages.Release(); err != nil {
			return err
		}
	}
	s.closed = true
	s.blocks, s.chunk, s.ids, s.live, s.free, s.held = nil, nil, nil, nil, nil, nil
	s.alloc = 0
	s.slot = slotTable{}
	return nil
}
