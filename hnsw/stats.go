package hnsw

import (
	"sync"
	"unsafe"

	"github.com/cairndb/cairn/vector"
)

// Stats describes the shape and memory of a graph: a snapshot value, owned
// by the caller.
type Stats struct {
	// Len is the number of indexed vectors.
	Len int
	// Slots is the number of node slots allocated (free ones included).
	Slots int
	// Levels is the number of layers, the top level plus one (0 if empty).
	Levels int
	// Nodes holds the number of nodes on each layer, layer 0 first.
	Nodes []int
	// MeanDegree holds the mean number of links of a node on each layer.
	MeanDegree []float64
	// GraphBytes estimates the memory the index holds beyond the vectors
	// themselves (which live in the store): neighbour lists, per-slot
	// arrays, the id map.
	GraphBytes int64
	// BytesPerVector is GraphBytes / Len.
	BytesPerVector float64
}

// Stats returns the shape and memory of the graph. It runs alone, like
// Delete, and costs O(n).
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st Stats
	st.Len = ix.live
	st.Slots = ix.capacity()
	var links []int
	for s := node(0); s < ix.next; s++ {
		lv := ix.level[s]
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
		st.GraphBytes += int64(len(ix.upper[s])) * 4
	}
	st.Levels = len(st.Nodes)
	for lc, n := range st.Nodes {
		st.MeanDegree = append(st.MeanDegree, float64(links[lc])/float64(n))
	}
	perSlot := int64(ix.stride0*4) + // layer-0 list
		int64(unsafe.Sizeof([]uint32(nil))) + // upper list header
		int64(unsafe.Sizeof((*float32)(nil))) + // vector pointer
		1 + // level
		int64(unsafe.Sizeof(sync.Mutex{})) + // node lock
		int64(unsafe.Sizeof(vector.ID(0))) // id
	st.GraphBytes += int64(st.Slots) * perSlot
	// The id map: key, value and control byte per entry at a load factor
	// of about 7/8.
	st.GraphBytes += int64(float64(ix.live) * float64(8+4+1) * 8 / 7)
	st.GraphBytes += int64(cap(ix.free)) * 4
	if st.Len > 0 {
		st.BytesPerVector = float64(st.GraphBytes) / float64(st.Len)
	}
	return st
}

// Store returns the store the index reads from and writes to.
func (ix *Index) Store() vector.Store { return ix.store }
