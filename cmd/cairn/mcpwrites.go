package main

import (
	"cmp"
	"hash/maphash"
	"sync"
)

// nsLocks serialises the writes of the MCP tools to one namespace. A
// tool call reads and writes in steps (memory_update reads a memory and
// writes it back whole; memory_store with merge_similar looks for its id,
// then upserts), and the SDK runs calls concurrently: without it, two
// updates of a memory could each write back a copy without the other's
// change, or an update bring back a memory deleted meanwhile. A call
// embeds its text before it takes the lock, so that one slow embedding
// does not hold up the namespace's other writes.
type nsLocks struct {
	seed    maphash.Seed
	stripes [64]sync.Mutex
}

func newNSLocks() *nsLocks { return &nsLocks{seed: maphash.MakeSeed()} }

// lock takes the lock of namespace ns (the resolved one: "" for the
// collection's own memories) and returns its unlock.
func (l *nsLocks) lock(ns string) func() {
	mu := &l.stripes[maphash.String(l.seed, ns)%uint64(len(l.stripes))]
	mu.Lock()
	return mu.Unlock
}

// writing takes the write lock of the namespace a call names (see
// namespaceOf; its length is checked there) and returns its unlock.
func (m *memory) writing(ns string) func() {
	return m.writes.lock(cmp.Or(ns, m.namespace))
}
