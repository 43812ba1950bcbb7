package sqlitestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/internal/symlink"
	"github.com/cairndb/cairn/internal/vfsname"
	"github.com/cairndb/cairn/vector"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

const (
	// appID is written to the SQLite header (PRAGMA application_id) so a
	// cairn file is recognised before SQLite is let near it: "crn1".
	appID = 0x63726e31

	// readerWait is the least a read-only Open waits for a writer that
	// holds the whole file (see Options.ReadOnly).
	readerWait = 5 * time.Second

	// pageSize is the SQLite page size of new files. A 768-d vector is a
	// 3,072-byte row; 16 KiB pages hold five of them with 5% slack where
	// 4 KiB pages hold one with 25%, and keep rows with a few KiB of text
	// on one page instead of an overflow chain.
	pageSize = 16384
)

// schemaVersion is the version of the schema this build writes, kept in
// PRAGMA user_version: the number of migrations. Files of older versions
// are migrated forward at Open; newer ones are refused.
func schemaVersion() int { return len(migrations) }

// migrations[v] upgrades a database from schema version v to v+1. It runs
// inside the transaction that also sets the new user_version. Append only.
var migrations = []func(ctx context.Context, conn *sql.Conn) error{
	0: migrateV1,
	1: migrateV2,
	2: migrateV3,
	3: migrateV4,
	4: migrateV5,
}

// readOnlyFrom is the oldest schema version a read-only Open reads as it
// is: the migrations after it add only indexes (migrateV5), which the
// reads do not need, so a reader need not wait for a writer to migrate
// the file. Older versions lack tables the reads use.
const readOnlyFrom = 4

func migrateV1(ctx context.Context, conn *sql.Conn) error {
	return execAll(ctx, conn,
		`CREATE TABLE collections (
			id       INTEGER PRIMARY KEY,
			name     TEXT NOT NULL UNIQUE,
			dim      INTEGER NOT NULL,
			metric   TEXT NOT NULL,
			settings TEXT,
			changes  INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE index_blobs (
			coll    INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
			name    TEXT NOT NULL,
			changes INTEGER NOT NULL,
			size    INTEGER NOT NULL,
			crc     INTEGER NOT NULL,
			chunks  INTEGER NOT NULL,
			saved   INTEGER NOT NULL,
			PRIMARY KEY (coll, name)
		)`,
		`CREATE TABLE index_chunks (
			coll INTEGER NOT NULL,
			name TEXT NOT NULL,
			seq  INTEGER NOT NULL,
			data BLOB NOT NULL,
			PRIMARY KEY (coll, name, seq)
		)`,
	)
}

// itemColumns are the columns of a collection's items table after the
// key, text and metadata of version 1: its times (version 2).
const itemColumns = "created INTEGER, updated INTEGER, expires INTEGER"

// migrateV2 gives every items table the time columns, NULL in the rows
// already there (items written before version 2 have no times).
func migrateV2(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, "SELECT id FROM collections ORDER BY id")
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return scanErr(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		for _, col := range strings.Split(itemColumns, ", ") {
			if err := execAll(ctx, conn, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s", itemsTable(id), col)); err != nil {
				return err
			}
		}
	}
	return nil
}

// DB is one cairn database file holding any number of named collections.
// Open it with [Open] and Close it when done.
//
// DB is safe for concurrent use: every method may be called from any number
// of goroutines; writes from all of them are funnelled through one
// committer that groups them into shared transactions.
type DB struct {
	path string
	opts Options
	log  *slog.Logger

	sqldb  *sql.DB
	conn   *sql.Conn  // the one connection; holds the file's exclusive lock
	connMu sync.Mutex // serialises every use of conn

	mu     sync.RWMutex // guards closed; held shared by every operation in flight
	closed bool

	collMu  sync.Mutex
	colls   map[string]*Collection
	tenants map[int64]*Collection // the tenants loaded, by row id (tenant.go)
	tstmts  tenantStmts           // every tenant's statements, once one is loaded
	stmts   map[string]*sql.Stmt  // statements prepared on first use (cached), under connMu

	reqs chan *request
	quit chan struct{}
	done chan struct{}

	tx     txStmts      // the committer's prepared statements
	groups atomic.Int64 // transactions committed by the committer

	file *heldFile // the file's entry among those this process has open
	dsn  string    // the SQLite URI of the file, as connect opened it
	// immutable is set for a reader that SQLite reads as immutable (on
	// read-only media): it has no log or index of its own.
	immutable bool
}

// CollectionConfig describes a new collection. It is a plain value; the
// DB keeps a copy.
type CollectionConfig struct {
	// Dim is the dimension of every vector; it must be positive.
	Dim int
	// Metric is the metric vectors are prepared and compared under.
	Metric vector.Metric
	// Settings is opaque JSON owned by the caller (index choice and
	// parameters, say), stored with the collection; nil for none.
	Settings []byte
}

// CollectionInfo describes a stored collection: a snapshot, owned by the
// caller.
type CollectionInfo struct {
	Name     string
	Dim      int
	Metric   vector.Metric
	Settings []byte
	// Len is the number of items.
	Len int
	// Changes counts the committed transactions that changed the items;
	// a saved index remembers the value it was saved at.
	Changes uint64
}

// Open opens the cairn database at path, creating it if it does not exist,
// and loads every collection's vectors into memory. o may be nil for the
// defaults.
//
// A file that exists but is not a cairn database, is empty, or is damaged
// gives an error wrapping [ErrNotDatabase] or [vector.ErrCorrupt]; one
// written by a newer cairn gives [vector.ErrUnsupportedVersion]. In those
// cases the file is not written to. A file another [DB] has open, in this
// process or another, gives [ErrLocked].
//
// A new file is built under a temporary name beside path and linked into
// place once complete, so a crash during creation never leaves a partial
// database at path.
func Open(ctx context.Context, path string, o *Options) (*DB, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	opts := o.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	db, err := open(ctx, abs, opts)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", abs, err)
	}
	return db, nil
}

func open(ctx context.Context, path string, opts Options) (*DB, error) {
	start := time.Now()
	owner := !opts.ReadOnly
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && owner {
		// A dangling link: the new file goes where it points.
		to, err := symlink.Target(path)
		if err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
		if err := OrphanLog(to); err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
		if err := create(ctx, to); err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
	} else if err != nil {
		return nil, err
	}
	// SQLite keeps the log and its index beside the file a symlink leads
	// to, so the checks of them here look there too.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	file, first, err := acquire(path, owner)
	if err != nil {
		return nil, err
	}
	if owner {
		if err := lockOwner(ctx, file.f, opts.LockTimeout); err != nil {
			file.release(true) // no longer the writer it entered as
			return nil, err
		}
	}
	// Checked after the lock, so that a second writer under another name
	// learns of the first.
	if n, err := links(file.f); err != nil || n > 1 {
		file.release(owner)
		if err == nil {
			err = fmt.Errorf("%w: %d names", ErrHardLinked, n)
		}
		return nil, err
	}
	db, err := openFile(ctx, path, file, first, opts)
	if err != nil {
		file.release(owner)
		return nil, err
	}
	n := 0
	for _, c := range db.colls {
		n += c.Len()
	}
	db.log.Debug("sqlitestore: opened", "path", path, "read-only", opts.ReadOnly, "collections", len(db.colls), "items", n, "took", time.Since(start))
	return db, nil
}

// openFile opens the file this process has entered as file: checks it
// if no other DB of the process has it open, then connects and loads it.
func openFile(ctx context.Context, path string, file *heldFile, first bool, opts Options) (*DB, error) {
	if first {
		if err := checkHeader(file.f, path, opts.ReadOnly); err != nil {
			return nil, err
		}
	}
	db := &DB{
		path:    path,
		opts:    opts,
		log:     opts.Logger,
		colls:   map[string]*Collection{},
		tenants: map[int64]*Collection{},
		reqs:    make(chan *request, opts.MaxGroup),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		file:    file,
	}
	connect := db.connectReader
	if !opts.ReadOnly {
		if !mayWrite(path) {
			// SQLite would open the file read-only and fail each write.
			return nil, notWritable(errors.New("this process may not write it"))
		}
		connect = func(ctx context.Context) error {
			err := writableErr(db.connectAndInit(ctx, url.Values{}), path)
			if errors.Is(err, ErrNotWritable) && db.file.alone(db.dropLog) {
				// An empty log or index this process may not write, left
				// by another user's reader, and no longer in use.
				err = writableErr(db.connectAndInit(ctx, url.Values{}), path)
			}
			return err
		}
	}
	if err := connect(ctx); err != nil {
		if opts.ReadOnly {
			db.tidy() // the log and index SQLite made beside the file
		}
		return nil, err
	}
	if opts.ReadOnly {
		close(db.done) // no committer
	} else {
		go db.run()
	}
	return db, nil
}

// fileURI is the SQLite URI of the file at path with the given query
// parameters, and the VFS of the build's choice.
func fileURI(path string, params url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // Windows drive letters: file:///C:/...
	}
	if vfsname.Name != "" {
		params.Set("vfs", vfsname.Name)
	}
	u.RawQuery = params.Encode()
	return u.String()
}

// connect opens a single connection to dsn. No PRAGMA that writes is run
// here: the file is only read until init has validated it.
func connect(ctx context.Context, dsn string) (*sql.DB, *sql.Conn, error) {
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, err
	}
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	sqldb.SetConnMaxLifetime(0)
	sqldb.SetConnMaxIdleTime(0)
	conn, err := sqldb.Conn(ctx)
	if err != nil {
		sqldb.Close()
		return nil, nil, mapErr(err)
	}
	return sqldb, conn, nil
}

// connectAndInit connects db to its file with the URI parameters params
// and runs init; on failure it leaves db unconnected.
func (db *DB) connectAndInit(ctx context.Context, params url.Values) error {
	db.dsn = fileURI(db.path, params)
	var err error
	if db.sqldb, db.conn, err = connect(ctx, db.dsn); err != nil {
		return err
	}
	if err := db.init(ctx); err != nil {
		for _, c := range db.colls {
			c.closeStmts()
		}
		clear(db.colls)
		db.tx.close()
		release := db.guardLog(ctx, params)
		db.conn.Close()
		db.sqldb.Close()
		release()
		return fileErr(err)
	}
	return nil
}

// guardLog keeps the refused file and its log as they are while a
// writable connection that failed init closes. SQLite's last connection
// to a file in WAL mode checkpoints the log into the file and deletes it
// as it closes: the log of another database (a -wal left beside a backup
// copied back) went into the file Open had just refused, ruining it for
// good, and a damaged file was written to. A read-only connection opened
// first holds the file's shared lock, so the writable one cannot take
// the exclusive lock that checkpoint needs; closed last, the read-only
// one cannot checkpoint. The returned func closes it and removes an empty
// log and index it and the failed connection made beside the file, as a
// reader's Open does. A writable connection needs no guard where it holds
// the file exclusively (no flock(2)), or where none can be opened.
func (db *DB) guardLog(ctx context.Context, params url.Values) (release func()) {
	if params.Get("mode") == "ro" || !ownerLocks {
		return func() {}
	}
	ctx = context.WithoutCancel(ctx) // an Open cancelled as it fails too
	sqldb, conn, err := connect(ctx, fileURI(db.path, url.Values{"mode": {"ro"}}))
	if err != nil {
		return func() {}
	}
	// A read enters the log: from then on the connection holds the
	// file's shared lock, until it closes.
	var v int64
	conn.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&v)
	return func() {
		conn.Close()
		sqldb.Close()
		db.tidy()
	}
}

// connectReader connects a read-only DB. SQLite reads a file in WAL mode
// through its shared-memory index (-shm), which it creates beside the
// file if need be; where it cannot (read-only media, a directory one may
// not write) a file whose log holds no commit is read as immutable, which
// needs no index. A file whose log holds commits cannot be read there
// without them, and is refused; so is a file in rollback-journal mode
// (as Backup writes one) beside a hot journal, whose pages are only
// those of its last commit once a writer has rolled the journal back.
func (db *DB) connectReader(ctx context.Context) error {
	err := db.connectAndInit(ctx, url.Values{"mode": {"ro"}})
	if err == nil || !cannotIndex(err) {
		return err
	}
	switch {
	case sqliteCode(err) == sqlite3.SQLITE_READONLY_ROLLBACK:
		// Read as immutable, the file's half-written pages would be taken
		// for its content: an uncommitted state, or damage that is not there.
		return fmt.Errorf("%w: a rollback journal beside the file holds a transaction its writer did not finish, which only a writable Open rolls back: %w", ErrReadOnly, err)
	case sqliteCode(err) == sqlite3.SQLITE_READONLY_RECOVERY:
		return fmt.Errorf("%w (the log's index needs rebuilding after its writer stopped, which this process may not do: a writable Open, or a reader that may write the index, rebuilds it)", err)
	case !db.logEmpty():
		return fmt.Errorf("%w (its write-ahead log holds commits, which a reader can only see where it may create the log's index)", err)
	}
	db.immutable = true
	return db.connectAndInit(ctx, url.Values{"mode": {"ro"}, "immutable": {"1"}})
}

// writableErr is err of a writable Open of the file at path, wrapping
// ErrNotWritable where SQLite found it cannot write the file, or could not
// open its log or the log's index where this process may not write.
func writableErr(err error, path string) error {
	code := sqliteCode(err) & 0xff
	if code == sqlite3.SQLITE_READONLY || code == sqlite3.SQLITE_CANTOPEN && !mayWrite(path) {
		for _, side := range []string{"-wal", "-shm"} {
			if exists(path+side) && !mayWriteFile(path+side) {
				err = fmt.Errorf("%w; %s beside it is not this process's to write (another user's reader has the file open, or left it there)", err, filepath.Base(path+side))
				break
			}
		}
		return notWritable(err)
	}
	return err
}

// notWritable wraps err, the reason a writable Open failed, in
// ErrNotWritable.
func notWritable(err error) error {
	return fmt.Errorf("%w (on read-only media, or a file or directory this process may not write; a read-only Open reads it): %w", ErrNotWritable, err)
}

// cannotIndex reports whether err is SQLite's refusal to open or build a
// WAL file's shared-memory index.
func cannotIndex(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// logEmpty reports whether the file's write-ahead log holds no commit
// (or is missing), as SQLite's recovery would find it; false if that
// cannot be told.
func (db *DB) logEmpty() bool {
	var h [18]byte
	if _, err := db.file.f.ReadAt(h[:], 0); err != nil {
		return false
	}
	ps := int(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	w, err := readWAL(db.path+"-wal", ps)
	return err == nil && w.pages == 0
}

// init validates and migrates the schema, sets the connection's PRAGMAs
// and loads the collections. A writer takes SQLite's write lock first; a
// reader opens the read transaction it keeps until Close, its snapshot.
func (db *DB) init(ctx context.Context) error {
	sync := "FULL"
	if db.opts.Sync == SyncNormal {
		sync = "NORMAL"
	}
	wait, first := db.opts.LockTimeout, db.opts.LockTimeout
	if db.opts.ReadOnly {
		// A reader waits only while a writer holds the whole file, which
		// it does for moments: recovering or deleting its log.
		wait = max(wait, readerWait)
		first = wait
	} else if ownerLocks {
		// The writer, the one owner already (its flock), waits as long for
		// its first read: a reader holds the whole file for moments too,
		// recovering the log's index after a crash or rebuilding it.
		first = max(wait, readerWait)
	}
	pragmas := []string{
		fmt.Sprintf("PRAGMA busy_timeout=%d", first.Milliseconds()),
		"PRAGMA cache_size=-16384", // 16 MiB of page cache
	}
	switch {
	case db.opts.ReadOnly:
		pragmas = append(pragmas, "PRAGMA query_only=ON", "BEGIN")
	case !ownerLocks:
		// EXCLUSIVE locking before the first read: the lock, once taken,
		// is held until Close, and the WAL index lives in heap memory.
		pragmas = append(pragmas, "PRAGMA locking_mode=EXCLUSIVE", "PRAGMA foreign_keys=ON")
	default:
		pragmas = append(pragmas, "PRAGMA foreign_keys=ON")
	}
	if err := execAll(ctx, db.conn, pragmas...); err != nil {
		return mapErr(err)
	}
	if !db.opts.ReadOnly {
		if first != wait {
			if _, err := db.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout=%d", wait.Milliseconds())); err != nil {
				return mapErr(err)
			}
		}
		if _, err := db.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return lockErr(err)
		}
	}
	committed := false
	defer func() {
		if !committed {
			db.conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	version, err := db.checkSchema(ctx)
	if err != nil {
		return err
	}
	if db.opts.ReadOnly {
		if version < readOnlyFrom {
			return fmt.Errorf("%w: the file has schema version %d, which this build migrates to %d on a writable open", ErrReadOnly, version, schemaVersion())
		}
	} else {
		if version < int64(schemaVersion()) {
			if err := migrate(ctx, db.conn, int(version)); err != nil {
				return fmt.Errorf("migrate from version %d: %w", version, err)
			}
			db.log.Info("sqlitestore: migrated schema", "path", db.path, "from", version, "to", schemaVersion())
		}
		if _, err := db.conn.ExecContext(ctx, "COMMIT"); err != nil {
			return mapErr(err)
		}
		if err := execAll(ctx, db.conn,
			"PRAGMA journal_mode=WAL",
			"PRAGMA synchronous="+sync,
			walAutocheckpoint, walJournalLimit, // checkpoint and truncate the WAL at 4 MiB (reclaim.go)
		); err != nil {
			return mapErr(err)
		}
		if err := db.tx.prepare(ctx, db.conn); err != nil {
			return mapErr(err)
		}
	}
	if db.opts.CheckIntegrity {
		if err := db.check(ctx, "quick_check"); err != nil {
			return err
		}
	}
	// Memory-map the file while loading, so SQLite reads pages in place
	// instead of copying each into its cache; afterwards reads are rare
	// and plain reads keep I/O errors as errors rather than signals.
	if _, err := db.conn.ExecContext(ctx, "PRAGMA mmap_size=1099511627776"); err != nil {
		return mapErr(err)
	}
	if err := db.loadCollections(ctx); err != nil {
		return db.damaged(ctx, fileErr(err))
	}
	if _, err := db.conn.ExecContext(ctx, "PRAGMA mmap_size=0"); err != nil {
		return mapErr(err)
	}
	committed = true // a writer has committed; a reader keeps its snapshot
	return nil
}

// checkSchema reads the file's application id and schema version and
// compiles the queries of the saved indexes' tables, so that a file that
// is not ours, or whose schema is damaged, is refused before any PRAGMA
// can write to it. It returns the schema version.
func (db *DB) checkSchema(ctx context.Context) (int64, error) {
	var id, version int64
	if err := db.conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return 0, lockErr(err)
	}
	if err := db.conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, lockErr(err)
	}
	if uint32(id) != appID {
		return 0, fmt.Errorf("%w (application id %#x)", ErrNotDatabase, uint32(id))
	}
	if version > int64(schemaVersion()) {
		return 0, fmt.Errorf("%w: schema version %d, this build reads up to %d", vector.ErrUnsupportedVersion, version, schemaVersion())
	}
	if version < 1 {
		return 0, fmt.Errorf("%w (schema version %d)", ErrNotDatabase, version)
	}
	var tables int64
	if err := db.conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
		return 0, fileErr(err)
	}
	// The catalogue's tables are checked by the loading; those of the
	// saved indexes, the tenants and the history are read only later, so
	// compile their queries now: a damaged schema (a table dropped, a
	// column renamed by a bad byte) fails here, as ErrCorrupt, rather than
	// later as an SQL error.
	// Each table's query comes with the schema version that added it.
	queries := []struct {
		since int64
		q     string
	}{
		{1, "SELECT coll, name, changes, size, crc, chunks, saved FROM index_blobs LIMIT 0"},
		{1, "SELECT coll, name, seq, data FROM index_chunks LIMIT 0"},
		{3, "SELECT id, coll, name, changes FROM tenants LIMIT 0"},
		{3, "SELECT tenant, id, vec, key, text, meta, created, updated, expires FROM tenant_items LIMIT 0"},
		{4, "SELECT seq, coll, tenant, key, until, id, vec, text, meta, created, updated, expires FROM history LIMIT 0"},
		{4, "SELECT coll, tenant, since FROM history_since LIMIT 0"},
	}
	for _, q := range queries {
		if version < q.since {
			continue
		}
		rows, err := db.conn.QueryContext(ctx, q.q)
		if err != nil {
			return 0, db.damaged(ctx, fileErr(err))
		}
		rows.Close()
	}
	return version, nil
}

// damaged returns err, an error of init's after the file was found to be
// a cairn file of a version this build reads, as a [DamagedError] with
// the schema's differences from cairn's if it wraps [vector.ErrCorrupt];
// otherwise as it is.
func (db *DB) damaged(ctx context.Context, err error) error {
	if !errors.Is(err, vector.ErrCorrupt) {
		return err
	}
	var de *DamagedError
	if errors.As(err, &de) {
		return err
	}
	// No drift if it cannot be told: err says what is wrong.
	drift, _, _ := schemaDrift(ctx, db.conn)
	return &DamagedError{Err: err, Drift: drift}
}

func migrate(ctx context.Context, conn *sql.Conn, from int) error {
	for v := from; v < schemaVersion(); v++ {
		if err := migrations[v](ctx, conn); err != nil {
			return mapErr(err)
		}
	}
	_, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version=%d", schemaVersion()))
	return mapErr(err)
}

// tempBeside returns a new temporary name beside the file at path: "." +
// its name + tag + 16 random hex digits, its name cut short where that
// and SQLite's "-journal" after it would not fit in a directory entry
// (255 bytes).
func tempBeside(path, tag string) string {
	var rnd [8]byte
	rand.Read(rnd[:])
	suffix := tag + hex.EncodeToString(rnd[:])
	base := filepath.Base(path)
	if room := 255 - len(".") - len(suffix) - len("-journal"); len(base) > room {
		for room > 0 && !utf8.RuneStart(base[room]) {
			room-- // not in the middle of a character
		}
		base = base[:room]
	}
	return filepath.Join(filepath.Dir(path), "."+base+suffix)
}

// OrphanLog returns an error wrapping [ErrOrphanLog] if no file is at
// path and a write-ahead log of that name (path + "-wal", not empty) lies
// beside it, which SQLite would take into a database made at path; nil
// otherwise. [Open] and [DB.Backup] check it before they make a file; a
// program that makes one otherwise (under another name, then renamed into
// place) should too.
func OrphanLog(path string) error {
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("%w: %s (%d bytes)", ErrOrphanLog, path+"-wal", fi.Size())
	}
	return nil
}

// create builds a new, empty database under a temporary name and links it
// into place, so that path only ever names a complete database.
func create(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return err // no such directory, or none this process may look in
	}
	if !mayCreateIn(dir) {
		return notWritable(errors.New("this process may not create a file in its directory"))
	}
	tmp := tempBeside(path, ".new-")
	defer os.Remove(tmp)
	defer os.Remove(tmp + "-journal")
	defer os.Remove(tmp + "-wal")
	sqldb, conn, err := connect(ctx, fileURI(tmp, url.Values{}))
	if err != nil {
		return err
	}
	err = func() error {
		if err := execAll(ctx, conn,
			fmt.Sprintf("PRAGMA page_size=%d", pageSize),
			"PRAGMA auto_vacuum=INCREMENTAL",
			"BEGIN IMMEDIATE",
		); err != nil {
			return err
		}
		if err := migrate(ctx, conn, 0); err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
		return execAll(ctx, conn,
			fmt.Sprintf("PRAGMA application_id=%d", appID),
			"COMMIT",
			"PRAGMA journal_mode=WAL",
		)
	}()
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if cerr := sqldb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return mapErr(err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // someone else created it first: open theirs
		}
		// No hard links on this file system: rename, which may replace a
		// file created in the meantime by a racing creator.
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	// Make the new name durable; not every platform can fsync a directory,
	// and the file's contents are already safe, so an error is not fatal.
	syncFile(filepath.Dir(path))
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkHeader inspects the first 100 bytes of the file (the SQLite header)
// before SQLite opens it, so that a file that is not a cairn database is
// refused without being touched: SQLite would happily turn an empty file
// into a database, or roll a stray journal into a foreign one.
//
// It reads through f, the descriptor this process keeps of the file. A
// reader may meet a writer of another process in the middle of a
// checkpoint, between copying pages into the file and emptying the log,
// and see a file that seems to lack pages: it looks again before it
// believes that.
func checkHeader(f *os.File, path string, readOnly bool) error {
	err := checkHeaderOnce(f, path)
	for try := 0; readOnly && try < 3 && errors.Is(err, vector.ErrCorrupt) && !errors.Is(err, ErrNotDatabase); try++ {
		time.Sleep(50 * time.Millisecond)
		err = checkHeaderOnce(f, path)
	}
	return err
}

func checkHeaderOnce(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return fmt.Errorf("%w: empty file", ErrNotDatabase)
	}
	var h [100]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return fmt.Errorf("%w: %d bytes is too short for a SQLite header", ErrNotDatabase, fi.Size())
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return fmt.Errorf("%w: not a SQLite file", ErrNotDatabase)
	}
	if id := binary.BigEndian.Uint32(h[68:]); id != appID {
		return fmt.Errorf("%w: SQLite file of another application (id %#x)", ErrNotDatabase, id)
	}
	if v := binary.BigEndian.Uint32(h[60:]); int64(v) > int64(schemaVersion()) {
		return fmt.Errorf("%w: schema version %d, this build reads up to %d", vector.ErrUnsupportedVersion, v, schemaVersion())
	}
	// File format write and read versions: 1 (rollback journal) or 2 (WAL).
	// SQLite treats a larger write version as read-only and a larger read
	// version as unreadable: a format from the future.
	for _, v := range h[18:20] {
		if v == 0 {
			return fmt.Errorf("%w: file format version 0", vector.ErrCorrupt)
		}
		if v > 2 {
			return fmt.Errorf("%w: SQLite file format version %d", vector.ErrUnsupportedVersion, v)
		}
	}
	ps := int64(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return fmt.Errorf("%w: page size %d", vector.ErrCorrupt, ps)
	}
	complete := fi.Size() / ps // whole pages in the file
	var counted int64          // pages the header counts, if it is valid
	// The page count in the header is valid when the change counter equals
	// the version-valid-for number (SQLite file format, section 1.3.7).
	if binary.BigEndian.Uint32(h[24:]) == binary.BigEndian.Uint32(h[92:]) {
		counted = int64(binary.BigEndian.Uint32(h[28:]))
	}
	// Bytes after the pages a valid header counts are no page SQLite
	// reads (a file copied or appended to); without a valid count,
	// SQLite would read a last, partial page.
	if (fi.Size()%ps == 0 || counted > 0) && counted <= complete {
		return nil
	}
	// Where the log holds a commit, the database is as its last commit
	// has it: that many pages, each from the log where the log holds it,
	// else from the file. The file's header, copied from the log by a
	// checkpoint, may count pages the file lacks:
	//   - a checkpoint copies pages in page order, so page 1, with the new
	//     page count, lands before the file has grown; a crash then leaves
	//     a short file whose missing pages are all still in the log;
	//   - a checkpoint held back by a reader's old snapshot copies page 1
	//     as that snapshot had it, when the database was larger, and
	//     neither truncates the file nor restarts the log.
	// A hot rollback journal (beside a file not yet in WAL mode, as
	// Backup writes it, whose writer was killed in a commit) puts back
	// the pages and the size the file had before the commit, when SQLite
	// rolls it back: page 1, which the commit writes first, may count
	// pages it never appended.
	if hotJournal(path) {
		return nil
	}
	// Trust the file only if the last commit's pages are all in the file
	// or the log, and its header is one a commit of the log wrote or
	// counts no more pages than the last commit (every commit that
	// changes the size rewrites page 1): a header from a commit the log
	// has lost means the file holds pages the log no longer explains.
	// Unless the header is older than a commit of the log (its change
	// counter below that of a page 1 the log holds), as a power cut in a
	// checkpoint after the database shrank leaves it (a delete's
	// incremental vacuum, Compact's VACUUM): the checkpoint truncates the
	// file to the new size and writes page 1 before either is synced, and
	// the disk may keep the truncation and lose the page, so the file's
	// header still counts the pages it had before; SQLite reads page 1
	// from the log.
	w, err := readWAL(path+"-wal", int(ps))
	if err != nil {
		return err
	}
	if w.pages > 0 && w.covers(complete+1, int64(w.pages)) && (counted <= int64(w.pages) || w.headers[h] || w.follows(h)) {
		return nil
	}
	if fi.Size()%ps != 0 {
		return fmt.Errorf("%w: file size %d is not a multiple of the page size %d (truncated?)", vector.ErrCorrupt, fi.Size(), ps)
	}
	if w.pages > 0 {
		return fmt.Errorf("%w: file holds %d of its %d pages, and its write-ahead log lacks the others (truncated)", vector.ErrCorrupt, complete, w.pages)
	}
	return fmt.Errorf("%w: file holds %d of its %d pages (truncated)", vector.ErrCorrupt, complete, counted)
}

// journalMagic begins the header of a rollback journal that SQLite
// rolls back: it zeroes or deletes the journal once its transaction has
// committed or been rolled back.
const journalMagic = "\xd9\xd5\x05\xf9\x20\xa1\x63\xd7"

// hotJournal reports whether the rollback journal beside the file at path
// (its name with "-journal" after it) holds a transaction its writer did
// not finish.
func hotJournal(path string) bool {
	f, err := os.Open(path + "-journal")
	if err != nil {
		return false
	}
	defer f.Close()
	var h [len(journalMagic)]byte
	_, err = f.ReadAt(h[:], 0)
	return err == nil && string(h[:]) == journalMagic
}

// loadCollections reads the catalogue and streams every collection's
// vectors into its arena.
func (db *DB) loadCollections(ctx context.Context) error {
	rows, err := db.conn.QueryContext(ctx, "SELECT id, name, dim, metric, settings, changes FROM collections ORDER BY id")
	if err != nil {
		return mapErr(err)
	}
	var cs []*Collection
	for rows.Next() {
		var (
			id, dim, changes int64
			name, metric     string
			settings         []byte
		)
		if err := rows.Scan(&id, &name, &dim, &metric, &settings, &changes); err != nil {
			rows.Close()
			return scanErr(err)
		}
		m, err := vector.ParseMetric(metric)
		if err != nil || dim <= 0 || dim > 1<<20 {
			rows.Close()
			return fmt.Errorf("%w: collection %q has dimension %d, metric %q", vector.ErrCorrupt, name, dim, metric)
		}
		c, err := newCollection(db, id, name, CollectionConfig{Dim: int(dim), Metric: m, Settings: settings}, true)
		if err != nil {
			rows.Close()
			return err
		}
		c.changes.Store(uint64(changes))
		cs = append(cs, c)
	}
	if err := rows.Close(); err != nil {
		return mapErr(err)
	}
	if err := rows.Err(); err != nil {
		return mapErr(err)
	}
	for _, c := range cs {
		db.colls[c.name] = c
		if err := c.prepare(ctx); err != nil {
			return err
		}
		if err := c.load(ctx); err != nil {
			return fmt.Errorf("load collection %q: %w", c.name, err)
		}
	}
	return nil
}

// writable returns [ErrReadOnly] for a DB opened read-only: every write
// asks it first.
func (db *DB) writable() error {
	if db.opts.ReadOnly {
		return ErrReadOnly
	}
	return nil
}

// withWriteConn is withConn for a write: refused by a read-only DB.
func (db *DB) withWriteConn(fn func(conn *sql.Conn) error) error {
	if err := db.writable(); err != nil {
		return err
	}
	return db.withConn(fn)
}

// withConn runs fn with the connection, unless the DB is closed.
func (db *DB) withConn(fn func(conn *sql.Conn) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return vector.ErrClosed
	}
	db.connMu.Lock()
	defer db.connMu.Unlock()
	return fn(db.conn)
}

// CreateCollection creates an empty collection. It returns an error
// wrapping [vector.ErrDuplicateID] if the name is taken and
// [vector.ErrInvalidOptions] for an empty name, a dimension that is not
// positive, an invalid metric or settings that are not JSON.
func (db *DB) CreateCollection(ctx context.Context, name string, cfg CollectionConfig) (*Collection, error) {
	if err := validateConfig(name, cfg); err != nil {
		return nil, fmt.Errorf("sqlitestore: create collection %q: %w", name, err)
	}
	var c *Collection
	err := db.withWriteConn(func(conn *sql.Conn) error {
		db.collMu.Lock()
		_, exists := db.colls[name]
		db.collMu.Unlock()
		if exists {
			return vector.ErrDuplicateID
		}
		if err := beginImmediate(ctx, conn); err != nil {
			return err
		}
		res, err := conn.ExecContext(ctx, "INSERT INTO collections (name, dim, metric, settings) VALUES (?, ?, ?, ?)",
			name, cfg.Dim, cfg.Metric.String(), nullJSON(cfg.Settings))
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return mapErr(err)
		}
		id, _ := res.LastInsertId()
		c, err = newCollection(db, id, name, cfg, true)
		if err == nil {
			err = execAll(ctx, conn, itemsSchema(c.table)...)
		}
		if err == nil {
			err = commit(ctx, conn)
		}
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return mapErr(err)
		}
		// Committed: the collection is in the file, so it is in db.colls
		// too, whatever becomes of ctx.
		if err := c.prepare(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		db.collMu.Lock()
		db.colls[name] = c
		db.collMu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: create collection %q: %w", name, err)
	}
	return c, nil
}

func validateConfig(name string, cfg CollectionConfig) error {
	var errs []error
	if name == "" {
		errs = append(errs, errors.New("empty name"))
	}
	if cfg.Dim <= 0 || cfg.Dim > 1<<20 {
		errs = append(errs, fmt.Errorf("dimension %d out of range", cfg.Dim))
	}
	if !cfg.Metric.Valid() {
		errs = append(errs, fmt.Errorf("invalid metric %v", cfg.Metric))
	}
	if err := checkJSON(cfg.Settings); err != nil {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", vector.ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// Collection returns the named collection, or an error wrapping
// [vector.ErrNotFound]. Every call returns the same *Collection.
func (db *DB) Collection(ctx context.Context, name string) (*Collection, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, vector.ErrClosed
	}
	db.collMu.Lock()
	defer db.collMu.Unlock()
	c, ok := db.colls[name]
	if !ok {
		return nil, fmt.Errorf("sqlitestore: collection %q: %w", name, vector.ErrNotFound)
	}
	return c, nil
}

// Collections describes every collection, sorted by name.
func (db *DB) Collections(ctx context.Context) ([]CollectionInfo, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, vector.ErrClosed
	}
	db.collMu.Lock()
	infos := make([]CollectionInfo, 0, len(db.colls))
	for _, c := range db.colls {
		infos = append(infos, c.Info())
	}
	db.collMu.Unlock()
	slices.SortFunc(infos, func(a, b CollectionInfo) int { return strings.Compare(a.Name, b.Name) })
	return infos, nil
}

// DropCollection deletes the named collection, its items and its saved
// indexes, or returns an error wrapping [vector.ErrNotFound]. The
// *Collection handle then returns [vector.ErrClosed] from every method.
func (db *DB) DropCollection(ctx context.Context, name string) error {
	err := db.withWriteConn(func(conn *sql.Conn) error {
		db.collMu.Lock()
		c, ok := db.colls[name]
		db.collMu.Unlock()
		if !ok {
			return vector.ErrNotFound
		}
		if err := beginImmediate(ctx, conn); err != nil {
			return err
		}
		c.closeStmts()
		db.forget(c.table)
		err := execAll(ctx, conn,
			"DROP TABLE "+c.table,
			fmt.Sprintf("DELETE FROM tenant_items WHERE tenant IN (SELECT id FROM tenants WHERE coll = %d)", c.id),
			fmt.Sprintf("DELETE FROM tenants WHERE coll = %d", c.id),
			fmt.Sprintf("DELETE FROM index_chunks WHERE coll = %d", c.id),
			fmt.Sprintf("DELETE FROM index_blobs WHERE coll = %d", c.id),
			fmt.Sprintf("DELETE FROM collections WHERE id = %d", c.id),
			fmt.Sprintf("DELETE FROM history WHERE coll = %d", c.id),
			fmt.Sprintf("DELETE FROM history_since WHERE coll = %d", c.id),
		)
		if err == nil {
			err = commit(ctx, conn)
		}
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			if perr := c.prepare(context.Background()); perr != nil {
				db.log.Error("sqlitestore: drop collection failed and statements could not be restored", "collection", name, "err", perr)
			}
			return mapErr(err)
		}
		db.collMu.Lock()
		delete(db.colls, name)
		db.collMu.Unlock()
		c.mu.Lock()
		c.dropped = true
		c.arena.Close()
		c.mu.Unlock()
		db.unloadTenantsLocked(c.id)
		db.vacuumLocked(context.Background(), 0)
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: drop collection %q: %w", name, err)
	}
	return nil
}

// IntegrityCheck runs SQLite's full PRAGMA integrity_check over the file
// and returns nil if it reports "ok", or an error wrapping
// [vector.ErrCorrupt] with its findings. It reads the whole file.
func (db *DB) IntegrityCheck(ctx context.Context) error {
	return db.withConn(func(*sql.Conn) error { return db.check(ctx, "integrity_check") })
}

// ForeignSchema lists the triggers and views in the file, one line
// each: cairn makes none, so each is another program's, and can change
// what a write does (a trigger that deletes the rows an insert adds makes
// a write that returned nil vanish).
func (db *DB) ForeignSchema(ctx context.Context) ([]string, error) {
	var out []string
	err := db.withConn(func(conn *sql.Conn) error {
		rows, err := conn.QueryContext(ctx, "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY type, name")
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var typ, name, table string
			if err := rows.Scan(&typ, &name, &table); err != nil {
				return scanErr(err)
			}
			if typ == "trigger" {
				out = append(out, fmt.Sprintf("trigger %q on table %q", name, table))
			} else {
				out = append(out, fmt.Sprintf("view %q", name))
			}
		}
		return mapErr(rows.Err())
	})
	return out, err
}

func (db *DB) check(ctx context.Context, pragma string) error {
	rows, err := db.conn.QueryContext(ctx, "PRAGMA "+pragma)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return mapErr(err)
		}
		msgs = append(msgs, s)
	}
	if err := rows.Err(); err != nil {
		return mapErr(err)
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], "...")
	}
	return fmt.Errorf("%w: %s: %s", vector.ErrCorrupt, pragma, strings.Join(msgs, "; "))
}

// Backup writes a consistent copy of the database, as of the last commit,
// to a new file at path (which must not exist, nor a write-ahead log of
// it: [OrphanLog]), compacted, and fsyncs it.
// The copy is a cairn database that [Open] accepts. It is the only safe
// way to copy a database that is open: the file itself lags behind its
// write-ahead log until Close, and a copy of the file (or of the file and
// its log) taken while it is written can mix pages of different moments.
// Open refuses such a copy when it finds the damage (a key index that
// disagrees with its table, a page that fails SQLite's checks), but cannot
// see every mix. Writes wait while the copy is made. A read-only DB copies
// the file's latest commit, which may be newer than its own snapshot,
// and its writer, if any, goes on meanwhile. A Backup that fails (a
// cancelled ctx, a full disk) leaves nothing at path.
func (db *DB) Backup(ctx context.Context, path string) error {
	err := db.withConn(func(conn *sql.Conn) error {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s: %w", path, os.ErrExist)
		}
		if err := OrphanLog(path); err != nil {
			return err
		}
		if db.opts.ReadOnly {
			// VACUUM cannot run inside the snapshot's transaction: a
			// connection of its own copies the latest commit.
			sqldb, c, err := connect(ctx, db.dsn)
			if err != nil {
				return err
			}
			defer sqldb.Close()
			defer c.Close()
			conn = c
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		// The copy's file is made here, empty (which VACUUM INTO takes as
		// new), so that a copy cut short removes a file of its own only.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			_ = os.Remove(path)
			return err
		}
		// As a URI: SQLite would read a name that begins with "file:" as one.
		if _, err = conn.ExecContext(ctx, "VACUUM INTO ?", fileURI(abs, url.Values{})); err != nil {
			err = mapErr(err)
		} else {
			err = syncFile(path)
		}
		if err != nil {
			_ = os.Remove(path)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: backup: %w", err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close commits the writes still pending, releases the file (checkpointing
// the write-ahead log into it) and the in-memory arenas. Every later call on
// the DB or its collections returns [vector.ErrClosed]; Close itself is
// idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	db.mu.Unlock()
	close(db.quit)
	<-db.done

	db.connMu.Lock()
	defer db.connMu.Unlock()
	if !db.opts.ReadOnly {
		db.vacuumLocked(context.Background(), 0)
	}
	db.collMu.Lock()
	for _, c := range db.colls {
		c.closeStmts()
		c.mu.Lock()
		c.arena.Close()
		c.mu.Unlock()
	}
	db.collMu.Unlock()
	db.unloadTenantsLocked(0)
	db.tstmts.close()
	for _, st := range db.stmts {
		st.Close()
	}
	db.tx.close()
	end := "PRAGMA wal_checkpoint(TRUNCATE)"
	if db.opts.ReadOnly {
		end = "ROLLBACK" // the snapshot's read transaction
	}
	_, err := db.conn.ExecContext(context.Background(), end)
	if cerr := db.conn.Close(); err == nil {
		err = cerr
	}
	if cerr := db.sqldb.Close(); err == nil {
		err = cerr
	}
	if db.opts.ReadOnly {
		db.tidy()
	}
	db.file.release(!db.opts.ReadOnly)
	if err != nil {
		return fmt.Errorf("sqlitestore: close: %w", mapErr(err))
	}
	return nil
}

// tidy removes the empty write-ahead log and its index that a reader
// leaves beside the file: SQLite does not let a read-only connection
// delete them, as it cannot tell whether it is the last. A reader that
// may write the file can tell (dropLog); one that may not leaves them,
// and the owner's next Open removes them (SQLite opens a log or index
// it may not write read-only, so that every write would fail). It leaves
// those that lay beside the file before the process entered it (a dead
// writer's, say), as it found them, and those another DB of this
// process uses.
func (db *DB) tidy() {
	if !db.file.found {
		db.file.alone(db.dropLog)
	}
}

// dropLog removes the write-ahead log and its index beside the file if
// the log holds no commit and no connection anywhere has the file open,
// as SQLite's last connection to close does; it reports whether it
// removed any. Only a process that may write the file can tell
// (lockUnused). The caller has no connection to the
// file and is the only DB of this process on it, and no other may enter
// meanwhile (heldFile.alone): the locks it takes are blind to those of
// its own process.
func (db *DB) dropLog() bool {
	if !exists(db.path+"-wal") && !exists(db.path+"-shm") {
		return false
	}
	unlock, ok := lockUnused(db.path)
	if !ok {
		return false // another process has it open: its last close removes them
	}
	defer unlock()
	if !db.logEmpty() {
		return false
	}
	wal, shm := os.Remove(db.path+"-wal"), os.Remove(db.path+"-shm")
	return wal == nil || shm == nil
}

// vacuumLocked returns free pages to the file system once they are more
// than a quarter of the file (or minFree pages, if that is more). The file
// is in auto_vacuum=INCREMENTAL mode, so this moves pages from the end of
// the file into the holes and truncates it. The caller holds connMu.
func (db *DB) vacuumLocked(ctx context.Context, minFree int64) {
	var free, pages int64
	if err := db.conn.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return
	}
	if err := db.conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return
	}
	if free < max(minFree, 16) || free*4 < pages {
		return
	}
	if _, err := db.conn.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		db.log.Warn("sqlitestore: incremental vacuum failed", "path", db.path, "err", err)
		return
	}
	db.log.Debug("sqlitestore: reclaimed free pages", "path", db.path, "pages", free, "of", pages)
}

// beginImmediate starts a write transaction on conn. A BEGIN that reports
// an error may still have begun (a context cancelled under it): it is then
// rolled back, so that the connection is never left inside a transaction
// its caller took for failed (a later checkpoint would fail with "database
// table is locked").
func beginImmediate(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		// Busy or locked: the write lock is held elsewhere (ErrLocked).
		return lockErr(err)
	}
	return nil
}

// commit commits the transaction begun on conn, whatever becomes of ctx
// meanwhile. The driver reports a statement under which ctx ends as
// failed with ctx's error even if it ran to its end, and a COMMIT so
// reported has committed: its caller would roll back to no effect and
// report as failed a change the file holds. A cancel cuts short the work
// before the COMMIT, which is what takes time.
func commit(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
	return err
}

// execCommitting runs a statement that commits by itself (outside a
// transaction begun by BEGIN) as commit runs a COMMIT: to its end,
// whatever becomes of ctx once it has begun.
func execCommitting(ctx context.Context, conn *sql.Conn, query string, args ...any) (sql.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return conn.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func execAll(ctx context.Context, conn *sql.Conn, stmts ...string) error {
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", firstWords(s), err)
		}
	}
	return nil
}

func firstWords(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// sqliteCode returns the (extended) SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// mapErr wraps SQLite's corruption codes around [vector.ErrCorrupt], its
// lock codes around [ErrLocked] ("busy", another program holding the lock
// a statement needs, and "locking protocol", what a reader gets after
// some ten seconds of retries beside a writer stopped halfway through
// updating the log's index), and "full" and a log index that cannot grow
// around [ErrDiskFull].
func mapErr(err error) error {
	if err == nil || errors.Is(err, ErrLocked) || errors.Is(err, ErrDiskFull) {
		return err
	}
	code := sqliteCode(err)
	if code == sqlite3.SQLITE_IOERR_SHMSIZE {
		// The log's index (the "-shm" file) could not grow: SQLite
		// writes to it to make its pages, which a full disk refuses.
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	switch code & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %w", vector.ErrCorrupt, err)
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_PROTOCOL:
		return fmt.Errorf("%w: %w", ErrLocked, err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// fileErr classifies an error met while Open validates and loads a file:
// one that says the environment failed (I/O, permissions, memory, a full
// disk, a lock, an interrupt) passes through mapErr; any other SQLite error
// ("unsupported file format", "malformed database schema", ...) means the
// file is not one SQLite can use, and wraps [vector.ErrCorrupt].
func fileErr(err error) error {
	if errors.Is(err, ErrLocked) || errors.Is(err, vector.ErrCorrupt) {
		return err
	}
	code := sqliteCode(err)
	switch code & 0xff {
	case 0, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return mapErr(err)
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_ABORT:
		return mapErr(err)
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PROTOCOL:
		return lockErr(err)
	}
	return fmt.Errorf("%w: %w", vector.ErrCorrupt, err)
}

// scanErr classifies an error from Rows.Scan or Row.Scan: SQLite's own
// errors go through mapErr, and a value that cannot be converted to its
// column's Go type (a NULL name, text where an integer belongs) can only
// come from a damaged file, so it wraps [vector.ErrCorrupt].
func scanErr(err error) error {
	switch {
	case err == nil, errors.Is(err, sql.ErrNoRows), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case sqliteCode(err) != 0:
		return mapErr(err)
	}
	return fmt.Errorf("%w: %w", vector.ErrCorrupt, err)
}

// lockErr is mapErr that also turns SQLite's "table locked" into
// [ErrLocked]: for the statements that take the file's locks (BEGIN
// IMMEDIATE), where it means the lock is held elsewhere.
func lockErr(err error) error {
	if sqliteCode(err)&0xff == sqlite3.SQLITE_LOCKED && !errors.Is(err, ErrLocked) {
		return fmt.Errorf("%w: %w", ErrLocked, err)
	}
	return mapErr(err)
}
