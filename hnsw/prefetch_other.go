//go:build !amd64

package hnsw

import "unsafe"

// prefetchLines does nothing on this architecture: the walk simply waits
// for memory.
func prefetchLines(p unsafe.Pointer, n int) {}

// prefetchAll does nothing on this architecture.
func prefetchAll(addrs []*float32, n int) {}
