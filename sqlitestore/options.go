package sqlitestore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/cairndb/cairn/vector"
)

// Sync selects how hard a commit works to survive a power failure.
//
// It is a plain value.
type Sync uint8

const (
	// SyncFull (the default) fsyncs the write-ahead log on every commit:
	// a write that returned nil survives a crash of the process, of the
	// operating system and a power failure. It costs one fsync per commit
	// (one per group of concurrent writers, see [Collection.PutItems]).
	SyncFull Sync = iota

	// SyncNormal fsyncs only when the write-ahead log is checkpointed into
	// the database. A write that returned nil survives a crash of the
	// process, but the last commits before a power failure or an operating
	// system crash may be rolled back (the database stays consistent). Use
	// it when the data can be re-derived or a few seconds of loss are
	// acceptable: a single write then costs a write(2), not an fsync.
	SyncNormal
)

// String returns "full" or "normal".
func (s Sync) String() string {
	switch s {
	case SyncFull:
		return "full"
	case SyncNormal:
		return "normal"
	}
	return fmt.Sprintf("Sync(%d)", uint8(s))
}

// Options configure [Open]. The zero value, and a nil *Options, give the
// defaults documented on each field. Open copies the options, so they may
// be reused or changed afterwards.
type Options struct {
	// Sync is the durability of a commit. Default [SyncFull].
	Sync Sync

	// LockTimeout is how long Open waits for another owner of the file to
	// close it before it gives up with [ErrLocked], and how long a write
	// waits for another program that holds SQLite's write lock on the
	// file. Default 0: fail at once.
	// A read-only Open waits at least 5 s, for the moments when a writer
	// holds the whole file (recovering its log after a crash, or deleting
	// it at Close); a writer's ordinary work never holds up a reader. A
	// writable Open, once no other owner has the file, waits as long for
	// its first read, which a reader holds up for such moments too
	// (rebuilding the log's index).
	LockTimeout time.Duration

	// CheckIntegrity runs SQLite's PRAGMA quick_check during Open and
	// refuses a damaged file with [vector.ErrCorrupt]. It reads every page,
	// so it roughly doubles the open time. Default off: Open still detects
	// damage in every page it reads while loading the vectors.
	CheckIntegrity bool

	// MaxGroup bounds how many write requests one group commit gathers.
	// Default 1024.
	MaxGroup int

	// ReadOnly opens an existing file for reading only: Open never
	// creates, writes, migrates or checkpoints it, and every write on the
	// DB returns [ErrReadOnly]. Any number of read-only DBs, in this
	// process and others, may have a file open beside its one writer.
	// Each reads a snapshot: the file as of its Open, whatever the writer
	// commits later (Open it again to see that). While a reader holds an
	// old snapshot, the writer cannot restart its write-ahead log, which
	// grows meanwhile. It works on read-only files and media: where SQLite
	// may not create the log's index beside the file, a file whose log
	// holds no commit is read as immutable. Default false.
	ReadOnly bool

	// PageVectorsIn, when set, names a directory in which each collection
	// keeps its in-memory copy of the vectors paged
	// ([vector.NewPagedMemStore]): in an unlinked temporary file mapped
	// into memory, which the kernel pages in as it is read and reclaims
	// under memory pressure. It suits HNSW indexes walked on int8 codes,
	// which read the float32 vectors only to rescore a query's finalists:
	// the process's memory is then the graph and the codes. A float32
	// HNSW index walks the mapped vectors in place, and exact (flat)
	// search reads every vector, so both run at the disk's speed once the
	// vectors outgrow the page cache. The directory should be on a local
	// disk; nothing is left in it. Tenants' vectors stay in memory. Linux
	// only: elsewhere Open fails with an error wrapping both
	// [vector.ErrInvalidOptions] and errors.ErrUnsupported. Default "":
	// every vector in memory.
	PageVectorsIn string
	// Logger receives reports worth acting on: a saved index that is
	// missing, stale or damaged (rebuild it), space reclaimed, slow opens.
	// Default: nothing is logged.
	Logger *slog.Logger
}

// Validate reports every problem with o at once, wrapped around
// [vector.ErrInvalidOptions]; a nil *Options is valid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.Sync > SyncNormal {
		errs = append(errs, fmt.Errorf("unknown Sync %v", o.Sync))
	}
	if o.LockTimeout < 0 {
		errs = append(errs, fmt.Errorf("negative LockTimeout %v", o.LockTimeout))
	}
	if o.MaxGroup < 0 {
		errs = append(errs, fmt.Errorf("negative MaxGroup %d", o.MaxGroup))
	}
	if o.PageVectorsIn != "" && runtime.GOOS != "linux" {
		errs = append(errs, fmt.Errorf("PageVectorsIn: %w on %s", errors.ErrUnsupported, runtime.GOOS))
	} else if o.PageVectorsIn != "" {
		if fi, err := os.Stat(o.PageVectorsIn); err != nil {
			errs = append(errs, fmt.Errorf("PageVectorsIn: %w", err))
		} else if !fi.IsDir() {
			errs = append(errs, fmt.Errorf("PageVectorsIn: %s is not a directory", o.PageVectorsIn))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("sqlitestore: %w: %w", vector.ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// withDefaults returns a copy of o with zero fields set to their defaults.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.MaxGroup == 0 {
		c.MaxGroup = 1024
	}
	if c.PageVectorsIn != "" {
		// The directory as Open found it, whatever the working
		// directory later.
		if abs, err := filepath.Abs(c.PageVectorsIn); err == nil {
			c.PageVectorsIn = abs
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
