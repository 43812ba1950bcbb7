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
// but less than 2 MiB at each end; no memory is added to align it), and
// the small pages the allocator's zeroing faulted in there are dropped,
// so that each huge page is faulted in whole when first written and the
// pages never written take no memory; once
// the array is garbage, a cleanup withdraws the advice (MADV_NOHUGEPAGE,
// which under "madvise" is the default), so the heap memory it leaves
// behind is returned to the system in small pages as before. Go may hand
// that memory to a new array before the cleanup runs; a ledger of which
// array advised each huge page last keeps the cleanup off the pages a
// newer array holds. Under "always" and "never", on other systems or
// below MinBytes it is a plain make.
//
// The functions are safe to call concurrently.
package hugepage

import (
	"runtime"
	"sync"
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
	if c, ok := pages.claim(start, length); ok {
		runtime.AddCleanup(unsafe.SliceData(s), pages.release, c)
	}
	return s
}

// pages is the ledger of the process's advised huge pages.
var pages = ledger{owner: map[uintptr]uint64{}, advise: advise}

// A ledger records which array advised each huge page last, so that an
// array's cleanup withdraws the advice only from the pages no newer array
// has claimed. Its methods are safe to call concurrently.
type ledger struct {
	mu     sync.Mutex // serialises the advice with the map
	owner  map[uintptr]uint64
	last   uint64 // the claim most recently handed out
	advise func(start, length uintptr, on bool) error
}

// claim is one array's advice on a range of whole huge pages.
type claim struct {
	id            uint64
	start, length uintptr
}

// claim advises [start, start+length) and records the pages as the new
// claim's; ok is false (and nothing recorded) if there are no pages or
// the system refuses.
func (l *ledger) claim(start, length uintptr) (c claim, ok bool) {
	if length == 0 {
		return claim{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.advise(start, length, true) != nil {
		return claim{}, false
	}
	l.last++
	for p := start; p < start+length; p += Size {
		l.owner[p] = l.last
	}
	return claim{l.last, start, length}, true
}

// release withdraws c's advice from the pages that are still c's, in
// runs of consecutive pages.
func (l *ledger) release(c claim) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var run uintptr // the first page of the current run; 0 for none
	withdraw := func(end uintptr) {
		if run != 0 {
			_ = l.advise(run, end-run, false)
			run = 0
		}
	}
	end := c.start + c.length
	for p := c.start; p < end; p += Size {
		if l.owner[p] != c.id {
			withdraw(p)
			continue
		}
		delete(l.owner, p)
		if run == 0 {
			run = p
		}
	}
	withdraw(end)
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
