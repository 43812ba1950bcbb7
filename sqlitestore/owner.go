package sqlitestore

// This file holds the one rule by which a process knows the database
// files it has open: by identity (device and inode), never by path.
//
// SQLite's locks are POSIX record locks, which belong to the process and
// are all dropped by a close(2) of any descriptor of the file, whichever
// opened it. So within a process the first Open of a file keeps one
// descriptor of it, through which every header check reads and on which
// the writer's own lock is taken, until the last DB of the file closes;
// any later Open finds the file here by identity (a symlink, a hard link,
// a relative path, a bind mount all lead to the same inode) before it
// opens a descriptor of its own, and is refused or shares that one.

import (
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/cairndb/cairn/vector"
)

// heldFile is a database file open in this process.
type heldFile struct {
	fi os.FileInfo
	// f is the descriptor kept while any DB of this process has the file
	// open: header checks read through it, the writer's lock is taken on
	// it, and it is closed only when no SQLite connection of this
	// process is left on the file. spare holds descriptors opened by an
	// Open that found the file held after all (its path was swapped
	// between stat and open): they are closed with f, never before.
	f     *os.File
	spare []*os.File
	dbs   int  // DBs of this process open on the file
	owner bool // one of them is the writer
	// found is set if a log or its index lay beside the file when the
	// process entered it (left by a writer that died, or another
	// process's): a reader leaves them there (see DB.tidy).
	found bool
}

var files = struct {
	sync.Mutex
	open []*heldFile
}{}

// find returns the entry of the file fi, or nil. The caller holds files.
func find(fi os.FileInfo) *heldFile {
	for _, o := range files.open {
		if os.SameFile(o.fi, fi) {
			return o
		}
	}
	return nil
}

// acquire enters a DB of the file at path, as its writer if owner is
// set, and reports whether it is the process's first (which must check
// the file before SQLite opens it). A second writer is refused with
// [ErrLocked] before any descriptor of the file is opened.
func acquire(path string, owner bool) (o *heldFile, first bool, err error) {
	files.Lock()
	defer files.Unlock()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false, err
	}
	if fi.IsDir() {
		return nil, false, fmt.Errorf("%w: %s is a directory", vector.ErrInvalidOptions, path)
	}
	if !fi.Mode().IsRegular() {
		// A named pipe would block the open below until a writer came; a
		// device or socket is no database either.
		return nil, false, fmt.Errorf("%w: %s is %s, not a regular file", ErrNotDatabase, path, kindOf(fi.Mode()))
	}
	o = find(fi)
	if o == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil, false, err
		}
		if ffi, err := f.Stat(); err == nil && !os.SameFile(ffi, fi) {
			if o = find(ffi); o != nil {
				o.spare = append(o.spare, f) // closing f could drop our locks
			} else {
				fi = ffi
			}
		}
		if o == nil {
			o = &heldFile{fi: fi, f: f, found: exists(path+"-wal") || exists(path+"-shm")}
			files.open = append(files.open, o)
			first = true
		}
	}
	if owner && o.owner {
		return nil, false, fmt.Errorf("%w (in this process)", ErrLocked)
	}
	o.dbs++
	o.owner = o.owner || owner
	return o, first, nil
}

// exists reports whether there is a file at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// kindOf names the kind of a file that is not a regular one.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// alone runs fn and returns what it returns if one DB of this process
// has the file open, letting no other in meanwhile; else it returns
// false.
func (o *heldFile) alone(fn func() bool) bool {
	files.Lock()
	defer files.Unlock()
	return o.dbs == 1 && fn()
}

// release leaves the file, as its writer if owner is set (also one that
// entered as the writer and could not take the lock, which unlocking then
// leaves as it is). The last DB of the file closes the kept descriptors,
// once SQLite has closed its own.
func (o *heldFile) release(owner bool) {
	files.Lock()
	defer files.Unlock()
	if owner {
		o.owner = false
		unlockOwner(o.f)
	}
	if o.dbs--; o.dbs > 0 {
		return
	}
	o.f.Close()
	for _, f := range o.spare {
		f.Close()
	}
	for i, x := range files.open {
		if x == o {
			files.open = append(files.open[:i], files.open[i+1:]...)
			break
		}
	}
}
