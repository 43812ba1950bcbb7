// Package sqlitestore keeps cairn collections — vectors, text, JSON
// metadata and saved index graphs — in one durable SQLite file, and serves
// every read from memory.
//
// It uses modernc.org/sqlite (pure Go, no cgo). A [DB] is one file holding
// any number of named collections; each [Collection] implements
// [vector.Store] (with [vector.BatchPutter] and [vector.BlockViewer]), so
// flat and HNSW indexes run over it exactly as over a [vector.MemStore].
//
// # Model
//
// SQLite is the source of truth; memory is a cache of it. [Open] streams
// every collection's vectors into an in-memory arena (a [vector.MemStore]),
// and Get, ForEach, ViewBlocks — hence every search — read only the arena:
// an exact search over a Collection runs the same code as over a MemStore.
// With [Options.PageVectorsIn] the arena is paged from an unlinked
// temporary file, so that the kernel keeps resident only the vectors that
// are read. A write goes to SQLite first and, once its transaction has committed, to
// the arena, so a reader never sees a write that could still be lost.
//
// Items carry an [Item.ID] (a [vector.ID], the row's integer key), an
// optional [Item.Key] (the caller's identifier, unique when set), the
// vector as a little-endian float32 BLOB stored as given (the arena holds
// the prepared, normalised form, so a future change of metric loses
// nothing), free text, JSON metadata and three times owned by the caller
// ([Item.Created], [Item.Updated], [Item.Expires], Unix nanoseconds; the
// columns of schema version 2).
//
// After Close the database is that one file, to be copied or moved at
// will; while it is open, recent commits may live only in the write-ahead
// log beside it, so copy it with [DB.Backup].
//
// # Writes and durability
//
// The file is in WAL mode. [Options.Sync] chooses synchronous=FULL (the
// default: a write that returned nil survives power loss) or NORMAL
// (survives a crash of the process; the last commits may be lost to a
// power failure). One committer goroutine owns the connection: concurrent
// writers' requests are gathered into one transaction and one fsync
// (group commit), each in its own savepoint when one of them fails on a
// constraint, so one bad request never fails its neighbours. Any other
// failure (a full disk, an I/O error) fails the whole group and leaves
// nothing of it in the file, so each write may be retried as it was. A
// batch ([Collection.PutItems]) is one transaction, all or nothing.
// RELIABILITY.md at the repository root says how this is tested.
//
// Deleted items' pages are reused by later writes; the file is in
// auto_vacuum=INCREMENTAL mode and is shrunk whenever free pages exceed a
// quarter of it. Arena slots are reused as in [vector.MemStore].
//
// # Saved indexes
//
// [Collection.SaveIndex] stores the bytes of any [io.WriterTo] (an hnsw
// graph, say) in a table of its own, in 1 MiB chunks, with a CRC-32C and
// the collection's change counter; [Collection.LoadIndex] refuses a save
// that is missing ([vector.ErrNotFound]), older than the items
// ([ErrStaleIndex]) or damaged ([vector.ErrCorrupt]), and reports it to
// [Options.Logger], so that the caller rebuilds from the rows and saves
// again. The package knows nothing of any index format.
//
// # Files that are not right
//
// Before SQLite is allowed to open an existing file, its header is read:
// an empty file, one that is not SQLite, a SQLite file of another
// application (PRAGMA application_id), a truncated file, or one written by
// a newer schema (PRAGMA user_version) is refused with [ErrNotDatabase],
// [vector.ErrCorrupt] or [vector.ErrUnsupportedVersion] and left
// untouched. A file shorter than its header says is accepted only when its
// write-ahead log holds every missing page, as after a crash in the middle
// of a checkpoint. Damage SQLite finds while loading is reported as
// [vector.ErrCorrupt], and so is a key index that disagrees with its table
// (the mark of a file copied while it was written: copy open databases with
// [DB.Backup]); such a refusal of a cairn file is a [DamagedError], which
// also says how the file's schema differs from the one this package makes.
// [Options.CheckIntegrity] and [DB.IntegrityCheck] run SQLite's own
// checks; [DB.SchemaDrift] compares an open file's tables and indexes with
// those this package makes for its version and collections, and
// [DB.Orphans] finds the rows that belong to no collection. Older schemas are migrated forward at Open: a file
// of version 1 gains the time columns, NULL (no time) in its items; one of
// version 2 gains the (empty) tables of tenants, its own rows untouched;
// one of version 4 gains the two indexes that find the tenants with
// something due to leave the file ([Collection.DueTenants]). A read-only
// Open reads a file of version 4 as it is, without them.
//
// # Tenants
//
// A collection may have any number of tenants ([Collection.CreateTenant]):
// collections of their own items with the collection's dimension, metric
// and settings, all kept in one table keyed by (tenant, id), where the
// same id or key may be in every tenant. A tenant holds no memory until
// [Collection.Tenant] loads it, and [Collection.Unload] frees it again, so
// that a file can hold far more tenants than memory; creating and
// deleting one costs the same however many there are. A loaded tenant is
// a [Collection] in every other way: the same writes, reads, group
// commits and saved indexes.
//
// # Concurrency
//
// Within a process, [DB] and [Collection] are safe for concurrent use: any
// number of readers run alongside writers, and each write becomes visible
// all at once.
//
// Across processes, a file has one writer: the DB opened without
// [Options.ReadOnly] holds an exclusive flock(2) on it from Open to Close,
// and a second writer, from this process or another, fails with
// [ErrLocked] (after [Options.LockTimeout], if set). The lock dies with
// the process. Any number of read-only DBs, in this process and others,
// may open the file beside the writer (SQLite's WAL mode, with its index
// in the -shm file beside the log): each reads the file as of its Open.
// Other SQLite programs (the sqlite3 shell, a backup tool) may read the
// file too; none may write it while a DB has it open.
//
// The process knows its open files by identity (device and inode), not by
// path: a symlink, a hard link, a relative path or a bind mount of an open
// file leads to the same owner. A file with more than one name (hard
// links) is not opened at all, in either mode ([ErrHardLinked]): SQLite
// keeps the log and its index beside the name it opened, which a DB under
// another name would not see. That matters because SQLite's locks are
// POSIX record locks, which any close(2) of a descriptor of the file drops
// for the whole process: a refused Open opens no descriptor of the file,
// and the descriptor Open reads the header through is kept until the last
// DB of the file closes. Code in the same process should still not open and
// close the database file itself (to hash or copy it, say) while a DB has it
// open. On Linux, calling modernc.org/sqlite's OFDLocking(true) before the
// first Open (or setting MODERNC_SQLITE_OFD_LOCK=1) switches to
// open-file-description locks, which such a close does not drop; this
// package leaves that process-wide choice to the application.
//
// Where flock(2) does not exist (Windows), the writer holds SQLite's own
// EXCLUSIVE lock instead (locking_mode=EXCLUSIVE), and no reader can share
// the file beside it.
package sqlitestore
