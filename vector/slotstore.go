package vector

// SlotBlockShift sets the number of slots in a block of a [SlotStore],
// 1 << SlotBlockShift.
const SlotBlockShift = 8

// SlotStore is an optional [Store] capability for an index that keeps
// state of its own for every vector, as package hnsw's graph does: the
// store keeps each vector in a numbered slot of an arena that never moves,
// so the index can number its nodes by slot and find a vector from its
// slot alone, with neither a copy of it nor a pointer to it.
//
// A deleted vector's slot is reused by a later Put, unless an index holds
// it: an index holds the slot of a vector it still reads after letting it
// go (a graph routes through a deleted node until it has repaired the
// links around it), and releases it when done.
//
// What is safe to call concurrently is the implementation's to document,
// as for [Store]; [MemStore]'s methods all are.
type SlotStore interface {
	Store
	// Slot returns the slot of id's vector, or false if id is absent.
	Slot(id ID) (uint32, bool)
	// SlotBlock returns the vectors of the block of slots b << SlotBlockShift
	// onwards, row-major, of (1 << SlotBlockShift) · Dim floats: the
	// memory Get returns slices of. Block b exists once Slot has returned
	// a slot in it, and stays where it is until the store is closed.
	SlotBlock(b int) []float32
	// Hold keeps slot s, which holds a vector, from reuse until a Release
	// of s; holds add up. Holding a slot that holds no vector does
	// nothing.
	Hold(s uint32)
	// Release undoes a Hold of s: once none is left, a deleted vector's
	// slot is reused by a later Put. Releasing a slot not held does
	// nothing.
	Release(s uint32)
}

// Slot returns the slot of id's vector; see [SlotStore].
func (s *MemStore) Slot(id ID) (uint32, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.slot.get(id, s.ids)
}

// SlotBlock returns block b of the arena; see [SlotStore]. It returns nil
// for a block that does not exist.
func (s *MemStore) SlotBlock(b int) []float32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if b < 0 || b >= len(s.blocks) {
		return nil
	}
	return s.blocks[b]
}

// Hold keeps slot sl from reuse; see [SlotStore].
func (s *MemStore) Hold(sl uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if int(sl) >= len(s.live) || !s.live[sl] {
		return
	}
	if s.held == nil {
		s.held = make(map[uint32]uint32)
	}
	s.held[sl]++
}

// Release undoes a Hold of slot sl; see [SlotStore].
func (s *MemStore) Release(sl uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.held[sl]
	if !ok {
		return
	}
	if n > 1 {
		s.held[sl] = n - 1
		return
	}
	delete(s.held, sl)
	if !s.live[sl] {
		s.free = append(s.free, sl)
	}
}
