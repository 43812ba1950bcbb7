package hnsw

import "github.com/cairndb/cairn/vector"

// Stats describes the shape and memory of a graph: a snapshot value, owned
// by the caller.
type Stats struct {
	// Len is the number of indexed vectors.
	Len int
	// Deleted is the number of deleted nodes still in the graph, waiting
	// for their batch to be unlinked (see [Index.Flush]); the layer
	// counts below include them.
	Deleted int
	// Slots is the number of node slots allocated (free ones included).
	Slots int
	// Levels is the number of layers, the top level plus one (0 if empty).
	Levels int
	// Nodes holds the number of nodes on each layer, layer 0 first.
	Nodes []int
	// MeanDegree holds the mean number of links of a node on each layer.
	MeanDegree []float64
	// GraphBytes is the memory the index allocates beyond the store's
	// vectors, counted from what it holds: pages of per-slot state
	// (layer-0 lists, ids, levels, vector and upper-list pointers, and
	// over a store without slots the graph's own copies of the vectors at
	// dimension ≤ 512), upper lists, locks, the id table and the free
	// list. Pooled per-search scratch is not included.
	GraphBytes int64
	// BytesPerVector is GraphBytes / Len.
	BytesPerVector float64
	// CodeBytes is the part of GraphBytes that holds the codes the walk
	// reads: under [QuantizeInt8] d + 4 bytes a slot, under
	// [QuantizeBinary] 8·⌈d/64⌉ + 12 (d the coded components:
	// QuantizeDims, or the dimension); 0 otherwise. The rows then hold no
	// float32 copy of the vectors.
	CodeBytes int64
	// Memory is where the bytes of GraphBytes go.
	Memory Memory
}

// Memory splits the bytes an index allocates beyond its store's vectors
// ([Stats].GraphBytes) by what holds them; the fields sum to it. Slots
// count every slot handed out (deleted ones waiting for reuse included).
//
// It is a plain value, owned by the caller.
type Memory struct {
	// Links0 is the layer-0 lists: a count and 2·M links, 4 bytes each,
	// a slot.
	Links0 int64
	// Vectors is the graph's own float32 copies of the vectors, kept in
	// the rows at dimension ≤ 512 over a store without slots (see the
	// package doc); 0 otherwise.
	Vectors int64
	// Codes is the codes of the slots handed out under [Options].Quantize
	// (CodeBytes counts those of every slot of the pages).
	Codes int64
	// RowPad is the padding that starts every row on a boundary of 16
	// or 64 bytes.
	RowPad int64
	// Spare is rows allocated but not yet handed out: the rest of the
	// last page and of the chunk pages are carved from.
	Spare int64
	// Upper is the lists of layers 1 and up, as the allocator rounds them.
	Upper int64
	// Slots is the pages' per-slot arrays (external id, level, tombstone
	// flag, vector and upper-list pointers), the page directory and the
	// directory of the store's blocks.
	Slots int64
	// IDMap is the table from external ids to slots.
	IDMap int64
	// Locks is the striped neighbour-list locks.
	Locks int64
	// Deletes is the free list and the state of deletes waiting to be
	// unlinked (tombstones, the record of the store slots they hold, or
	// copies of their vectors over a store without slots above dimension
	// 512).
	Deletes int64
	// Build is the table of int8 codes that large batches of inserts
	// walk on (see [Index.AddBatch]), room for twice the slots; 0 once
	// the index has been searched or flushed.
	Build int64
}

// Total returns the sum of the fields.
func (m Memory) Total() int64 {
	return m.Links0 + m.Vectors + m.Codes + m.RowPad + m.Spare + m.Upper + m.Slots + m.IDMap + m.Locks + m.Deletes + m.Build
}

// Stats returns the shape and memory of the graph. It waits for running
// searches and inserts and blocks new ones while it runs, and costs O(n).
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st Stats
	st.Len = ix.live
	st.Deleted = len(ix.tombs)
	st.Slots = ix.capacity()
	var links []int
	for s := node(0); s < ix.next; s++ {
		lv := ix.levelOf(s)
		if lv == freeLevel {
			continue
		}
		for lc := 0; lc <= int(lv); lc++ {
			if lc >= len(st.Nodes) {
				st.Nodes = append(st.Nodes, 0)
				links = append(links, 0)
			}
			st.Nodes[lc]++
			links[lc] += int(ix.list(s, lc)[0])
		}
	}
	st.Levels = len(st.Nodes)
	for lc, n := range st.Nodes {
		st.MeanDegree = append(st.MeanDegree, float64(links[lc])/float64(n))
	}
	st.Memory = ix.memory()
	st.GraphBytes = st.Memory.Total()
	if ix.opts.Quantize != QuantizeNone {
		st.CodeBytes = int64(st.Slots) * int64(ix.codeSize())
	}
	if st.Len > 0 {
		st.BytesPerVector = float64(st.GraphBytes) / float64(st.Len)
	}
	return st
}

// Store returns the store the index reads from and writes to.
func (ix *Index) Store() vector.Store { return ix.store }
