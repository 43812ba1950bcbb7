package hugepage

import (
	"bytes"
	"os"
	"sync"
	"syscall"
)

// The system's transparent huge page setting.
const (
	modeNever = iota
	modeMadvise
	modeAlways
)

// mode reads /sys/kernel/mm/transparent_hugepage/enabled once: the
// setting in brackets, never if the file is missing or unreadable.
var mode = sync.OnceValue(func() int {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return modeNever
	}
	switch {
	case bytes.Contains(b, []byte("[always]")):
		return modeAlways
	case bytes.Contains(b, []byte("[madvise]")):
		return modeMadvise
	}
	return modeNever
})

// advise asks for huge pages on [start, start+length) (on), which must
// lie in a new array (all zeros), or withdraws the request (off). start
// and length are multiples of Size.
func advise(start, length uintptr, on bool) error {
	if length == 0 {
		return nil
	}
	adv := uintptr(syscall.MADV_HUGEPAGE)
	if !on {
		adv = syscall.MADV_NOHUGEPAGE
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, start, length, adv); e != 0 {
		return e
	}
	if on {
		// Memory the heap reuses was zeroed by the allocator, which
		// faulted it in small pages before the advice. The array is
		// new, all zeros: drop those pages, which then read as zeros
		// again, so that the first touch of each huge page faults in a
		// whole one, and the pages never touched (the unused end of a
		// store's last chunk) take no memory. (Collapsing them into
		// huge pages instead, MADV_COLLAPSE, made the whole array
		// resident: 15 MiB of a 100,000 × 768 store's 16 MiB chunk.)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, length, syscall.MADV_DONTNEED)
	}
	return nil
}
