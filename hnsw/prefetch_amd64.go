package hnsw

import "unsafe"

// prefetchLines asks the CPU to bring n cache lines (64 bytes each) from p
// on into cache, without waiting for them: the graph walk issues it for the
// vectors of a node's neighbours before computing their distances, so that
// the memory fetches overlap (hnswlib's _mm_prefetch).
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n int)

// prefetchAll is prefetchLines for each address of addrs, in one call: the
// walk gathers the vectors of a node's unvisited neighbours and prefetches
// them together, rather than paying for a call per neighbour.
//
//go:noescape
func prefetchAll(addrs []*float32, n int)
