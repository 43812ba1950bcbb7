//go:build !linux

package hnsw

// mapBytes returns n zeroed bytes (on the Go heap on this system).
func mapBytes(n int) ([]byte, error) { return make([]byte, max(n, 1)), nil }

// unmapBytes leaves memory from mapBytes to the garbage collector.
func unmapBytes([]byte) {}
