//go:build unix

package sqlitestore

import (
	"path/filepath"
	"syscall"
)

// mayWrite reports whether this process may write the file at path and
// create files beside it (access(2), which asks without opening: opening
// the file and closing it again would drop this process's POSIX locks on
// it).
func mayWrite(path string) bool {
	const w = 2 // W_OK
	return syscall.Access(path, w) == nil && syscall.Access(filepath.Dir(path), w) == nil
}

// mayCreateIn reports whether this process may create a file in the
// directory dir.
func mayCreateIn(dir string) bool {
	const w = 2 // W_OK
	return syscall.Access(dir, w) == nil
}

// mayWriteFile reports whether this process may write the file at path.
func mayWriteFile(path string) bool {
	const w = 2 // W_OK
	return syscall.Access(path, w) == nil
}
