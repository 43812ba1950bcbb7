package hnsw

import "syscall"

// mapBytes returns n zeroed bytes of anonymous memory mapped for the
// caller outside the Go heap: untouched pages take no memory, and
// unmapBytes gives them all back at once.
func mapBytes(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, max(n, 1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapBytes unmaps memory from mapBytes.
func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
