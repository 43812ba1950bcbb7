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

// advise asks for huge pages on [start, start+length) (on), or withdraws
// the request (off). start and length are multiples of Size.
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
		// faulted it in small pages before the advice: collapse those
		// into huge pages now rather than waiting for khugepaged, which
		// scans 16 MiB every 10 s. Linux before 6.1 refuses
		// (EINVAL); the advice then still covers new faults.
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, length, madvCollapse)
	}
	return nil
}

// madvCollapse is MADV_COLLAPSE (Linux 6.1), which package syscall lacks.
const madvCollapse = 25
