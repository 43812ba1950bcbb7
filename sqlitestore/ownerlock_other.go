//go:build !unix

package sqlitestore

import (
	"context"
	"os"
	"time"
)

// ownerLocks is false where there is no flock(2): the writer then holds
// SQLite's own EXCLUSIVE lock from Open to Close, and no other process
// can read the file beside it.
const ownerLocks = false

func lockOwner(context.Context, *os.File, time.Duration) error { return nil }

func unlockOwner(*os.File) {}

// links returns 1: where hard links cannot be counted, they are not
// refused.
func links(*os.File) (uint64, error) { return 1, nil }

// lockUnused reports false: where SQLite's record locks cannot be taken
// from here, no file is known to be unused.
func lockUnused(string) (unlock func(), ok bool) { return nil, false }
