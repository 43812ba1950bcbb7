package hugepage

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// resident returns how many of the small pages of [start, start+length)
// are in memory (mincore).
func resident(t *testing.T, start, length uintptr) int {
	t.Helper()
	page := uintptr(syscall.Getpagesize())
	vec := make([]byte, (length+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, start, length, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, b := range vec {
		n += int(b & 1)
	}
	return n
}

// TestUntouchedPagesTakeNoMemory checks that the huge pages of a new
// array take memory only once written: the allocator's zeroing faulted
// them in, and the advice drops them again, so the unused end of a large
// array (a store's last chunk) costs nothing. The array still reads as
// zeros and takes writes.
func TestUntouchedPagesTakeNoMemory(t *testing.T) {
	if mode() != modeMadvise {
		t.Skip("transparent huge pages not in madvise mode")
	}
	// Heap memory written and freed, which the next array of its size
	// is likely to reuse: the allocator then zeroes it, in small pages.
	used := make([]float32, 4*Size/4)
	for i := range used {
		used[i] = 1
	}
	runtime.KeepAlive(used)
	used = nil
	runtime.GC()
	s := Float32s(4 * Size / 4) // 8 MiB: at least 3 huge pages inside
	start, length := interior(uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s)*4))
	if length < 2*Size {
		t.Fatalf("interior of %d bytes", length)
	}
	if n := resident(t, start, length); n != 0 {
		t.Errorf("%d pages of the untouched interior resident", n)
	}
	first := int(start-uintptr(unsafe.Pointer(unsafe.SliceData(s)))) / 4
	s[first] = 1
	if n := resident(t, start, length); n == 0 {
		t.Error("no page resident after a write")
	} else if n > int(Size)/syscall.Getpagesize() {
		t.Errorf("%d pages resident after a write to one huge page", n)
	}
	for i, v := range s {
		if v != 0 && i != first {
			t.Fatalf("s[%d] = %v, want 0", i, v)
		}
	}
}
