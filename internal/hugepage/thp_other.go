//go:build !linux

package hugepage

const (
	modeNever = iota
	modeMadvise
	modeAlways
)

func mode() int { return modeNever }

func advise(start, length uintptr, on bool) error { return nil }
