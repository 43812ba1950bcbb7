package sqlitestore

import (
	"errors"
	"strings"
	"syscall"

	"github.com/cairndb/cairn/vector"
)

// The errors of package sqlitestore that have no counterpart in package
// vector. Everything else is reported with vector's sentinels (wrapped with
// context), so callers test with [errors.Is] as they do for any other store.
var (
	// ErrNotDatabase is returned by [Open] when the file exists but is not
	// a cairn database: it is empty, is not a SQLite file, or is a SQLite
	// file written by some other application. It matches
	// [vector.ErrCorrupt] under [errors.Is] as well. The file is not
	// modified.
	ErrNotDatabase error = &kindError{"sqlitestore: not a cairn database", vector.ErrCorrupt}

	// ErrLocked is returned by [Open] when another [DB] (in this process or
	// another one) has the file open. A cairn database has one owner at a
	// time: the owner holds an exclusive lock on the file until Close, so a
	// second opener fails at once (or after [Options.LockTimeout]) instead
	// of waiting for writes that could interleave with its own. A
	// read-only Open returns it when the owner holds the whole file for
	// longer than the reader waits, or has stopped (a debugger, SIGSTOP)
	// halfway through updating the log's index; a write, when another
	// program holds SQLite's write lock on the file for longer than
	// [Options.LockTimeout].
	ErrLocked = errors.New("sqlitestore: database is locked by another owner")

	// ErrReadOnly is returned by every write to a DB opened with
	// [Options.ReadOnly], and by such an Open of a file whose schema only
	// a writable Open can migrate, or of a file beside a hot rollback
	// journal (a transaction a killed writer did not finish, in a file
	// not yet in WAL mode, as [DB.Backup] writes it) that only a writable
	// Open can roll back.
	ErrReadOnly = errors.New("sqlitestore: database opened read-only")

	// ErrNotWritable is returned by a writable [Open] of a file SQLite
	// cannot write: on read-only media, or a file or directory this
	// process may not write (SQLite writes its log and the log's index
	// beside the file). The file is not modified; [Options.ReadOnly]
	// opens it to read.
	ErrNotWritable = errors.New("sqlitestore: the file cannot be written here")

	// ErrHardLinked is returned by [Open] of a file that has more than one
	// name (hard links). SQLite keeps a database's write-ahead log and the
	// log's index beside the name it opened, so a DB under another name
	// would not see them: a reader beside a writer would miss its commits
	// or read torn pages, and a writer after a crash would leave out the
	// commits of the log beside the other name. Open it under one name:
	// remove the other links, or copy the file. The file is not modified.
	ErrHardLinked = errors.New("sqlitestore: the file has more than one name (hard links)")

	// ErrOrphanLog is returned by a writable [Open] of a file that does
	// not exist when a write-ahead log of that name lies beside it (the
	// name with "-wal" after it): the log of a database deleted without
	// it, or of one a process still has open under that name. SQLite
	// would take its pages into the new file, which would then hold
	// pages of another database. Nothing is created or changed: remove
	// the log (and the "-shm" beside it) once no process uses it, or put
	// back the database it belongs to.
	ErrOrphanLog = errors.New("sqlitestore: a write-ahead log is left beside a missing file")

	// ErrDiskFull is returned by a write, or an Open, that the disk has
	// no room for (SQLite's "database or disk is full", or a writable
	// Open that cannot make the log's index, the "-shm" file). It matches
	// [syscall.ENOSPC] under [errors.Is] as well. A write that returns it
	// left nothing behind, and can be retried as it was once there is
	// room.
	ErrDiskFull error = &kindError{"sqlitestore: the disk is full", syscall.ENOSPC}

	// ErrStaleIndex is returned by [Collection.LoadIndex] when the saved
	// index was written before the collection's items last changed: it
	// lacks (or still holds) some items. The caller should rebuild the
	// index from the store and save it again.
	ErrStaleIndex = errors.New("sqlitestore: saved index is older than the items")
)

// kindError is a sentinel that also matches a more general sentinel.
type kindError struct {
	msg    string
	parent error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.parent }

// DamagedError is the error of an [Open] that found a cairn file (its
// application id, a schema version this build reads) and refused it as
// damaged: a table it reads is missing or lacks a column, a row cannot be
// loaded (a vector whose length is not its collection's dimension, say).
// It matches [vector.ErrCorrupt] under [errors.Is], as Err does. The file
// is not modified.
type DamagedError struct {
	// Err is why the file was refused.
	Err error
	// Drift lists how the file's schema differs from the one cairn makes
	// for it, one sentence each, as [DB.SchemaDrift] does; empty if it
	// does not, or if that could not be told.
	Drift []string
}

// Error returns Err's message, and the schema's differences after it.
func (e *DamagedError) Error() string {
	if len(e.Drift) == 0 {
		return e.Err.Error()
	}
	return e.Err.Error() + " (the file's schema is not cairn's: " + strings.Join(e.Drift, "; ") + ")"
}

// Unwrap returns Err.
func (e *DamagedError) Unwrap() error { return e.Err }
