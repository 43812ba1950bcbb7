// Package hugepage allocates the large arrays that an index reads at
// random (a store's vectors, a graph's rows) so that the kernel can back
// them with transparent huge pages (2 MiB) where it offers them.
//
// With 4 KiB pages every step of a graph walk over a few hundred megabytes
// misses the TLB, once or twice a vector; in a virtual machine each miss is
// a two-level page walk. Go's runtime does not ask for huge pages, and
// under the common Linux setting (transparent_hugepage "madvise") none are
// given unless asked. An array of at least MinBytes is therefore advised
// with MADV_HUGEPAGE over the 2 MiB pages that lie wholly inside it (all
// but less than 2 MiB at each end; no memory is added to align it); once
// the array is garbage, a cleanup withdraws the advice (MADV_NOHUGEPAGE,
// which under "madvise" is the default), so the heap memory it leaves
// behind is returned to the system in small pages as before. Under
// "always" and "never", on other systems or below MinBytes it is a plain
// make.
//
// The functions are safe to call concurrently.
package hugepage

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

const (
	// Size is the size of a huge page.
	Size = 2 << 20
	// MinBytes is the smallest array allocated for huge pages: below it
	// the padding would cost more than the pages it buys.
	MinBytes = 2 * Size
)

// enabled switches the huge-page allocation on and off (SetEnabled).
var enabled atomic.Bool

func init() { enabled.Store(true) }

// SetEnabled turns the huge-page allocation on or off for arrays allocated
// from then on and returns the previous setting; for benchmarks that
// compare the two.
func SetEnabled(on bool) bool { return enabled.Swap(on) }

// Float32s returns a zeroed slice of n float32s, on huge pages if it is
// large enough (see the package comment).
func Float32s(n int) []float32 { return alloc[float32](n) }

// Uint32s is Float32s for uint32s.
func Uint32s(n int) []uint32 { return alloc[uint32](n) }

// huge reports whether an array of size bytes goes on huge pages.
func huge(size int) bool { return size >= MinBytes && mode() != modeNever && enabled.Load() }

func alloc[T float32 | uint32](n int) []T {
	const w = 4 // bytes per element
	s := make([]T, n)
	if !huge(n*w) || mode() != modeMadvise {
		return s
	}
	start, length := interior(uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(n*w))
	if length > 0 && advise(start, length, true) == nil {
		runtime.AddCleanup(unsafe.SliceData(s), func(r [2]uintptr) {
			_ = advise(r[0], r[1], false)
		}, [2]uintptr{start, length})
	}
	return s
}

// interior returns the huge pages that lie wholly inside the size bytes
// at base: their start, and their length (0 if there are none).
func interior(base, size uintptr) (start, length uintptr) {
	start = (base + Size - 1) &^ (Size - 1)
	end := (base + size) &^ (Size - 1)
	if end <= start {
		return start, 0
	}
	return start, end - start
}
