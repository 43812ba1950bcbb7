//go:build unix

package sqlitestore

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// ownerLocks reports that the writer's ownership of a file is a lock of
// its own (flock(2) on the kept descriptor), apart from SQLite's: SQLite
// then runs in its normal locking mode, so that readers in other
// processes can share the file beside the writer.
const ownerLocks = true

// lockOwner takes the exclusive flock(2) that makes f's holder the
// file's one writer, waiting up to timeout (0: not at all) for another
// process to give it up; it returns [ErrLocked] if none did. flock locks
// belong to the open file description, not the process, so neither
// SQLite's record locks nor any close of another descriptor touch it.
func lockOwner(ctx context.Context, f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if !time.Now().Before(deadline) {
			return ErrLocked
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(25*time.Millisecond, time.Until(deadline))):
		}
	}
}

// unlockOwner gives up the lock lockOwner took.
func unlockOwner(f *os.File) { flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	return onFD(f, func(fd uintptr) error { return syscall.Flock(int(fd), how) })
}

// onFD runs call on f's descriptor, again for as long as a signal
// interrupts it (EINTR).
func onFD(f *os.File, call func(fd uintptr) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if cerr = call(fd); cerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return cerr
}

// links returns the number of names (hard links) the file f has.
func links(f *os.File) (uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink), nil
	}
	return 1, nil
}

// SQLite's lock bytes in a database file (its unix VFS): the PENDING
// byte, the RESERVED byte and the SHARED range, which its EXCLUSIVE lock
// holds for writing.
const (
	pendingByte = 0x40000000
	lockBytes   = 2 + 510
)

// lockUnused takes, without waiting, the write lock of SQLite's
// EXCLUSIVE lock on the file at path, and reports whether it could: it
// can only if no connection of another process has the file open, since
// a connection to a file in WAL mode holds a read lock in its SHARED
// range from its first read to its close (taking it before it looks at
// the log); and none gets past it until unlock. A process that may not
// write the file cannot take it, and cannot know that no other process
// is about to use the log: asking whether one holds a lock now leaves a
// moment in which a writer may open the log it is about to remove. The
// caller must have no connection of its own to the file: record locks
// belong to the process, so its own would not count, and unlock would
// drop them.
func lockUnused(path string) (unlock func(), ok bool) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, false
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: pendingByte, Len: lockBytes}
	if fcntlLock(f, &lk) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true // which drops the lock
}

// fcntlLock takes the record lock lk on f without waiting (F_SETLK).
func fcntlLock(f *os.File, lk *syscall.Flock_t) error {
	return onFD(f, func(fd uintptr) error { return syscall.FcntlFlock(fd, syscall.F_SETLK, lk) })
}
