package cairn

// This file holds the DB: its collections by name, created, loaded and
// deleted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// Options configure a [DB]. A nil *Options means the zero Options.
type Options struct {
	// Embedder turns text into embeddings for items added without an
	// embedding and for [Collection.QueryText]. Without one, those calls
	// return [ErrNoEmbedder].
	Embedder Embedder
	// SQLite configures the file of a store opened with [Open]
	// (durability, lock timeout, logging); nil for the defaults.
	SQLite *sqlitestore.Options
	// ReadOnly opens an existing file for reading only, beside its writer
	// if it has one (see [Open]). Every write returns an error wrapping
	// [sqlitestore.ErrReadOnly]; expired items are hidden from every read
	// but not removed; graphs built at open are not saved.
	ReadOnly bool
	// IndexWorkers is the number of goroutines that insert into an HNSW
	// graph (a write's batch, a build at open or at an Auto switch); 0 or
	// less means runtime.GOMAXPROCS(0). Background rebuilds use fewer. Like
	// IndexProgress, it applies to this process only: it is not stored
	// with any collection.
	IndexWorkers int
	// IndexProgress, if set, is called while a graph is built, with the
	// collection's name and how many of total vectors are in, as
	// [hnsw.Options].Progress is. It must not call the collection.
	IndexProgress func(collection string, done, total int)
	// TenantMemory bounds the memory of the tenants loaded (see
	// [Tenant]), in bytes, as estimated from their items: once it is
	// exceeded, the tenants no call is using are closed, least recently
	// used first, and load again on their next use. 0 means 256 MiB; a
	// negative budget keeps loaded only the tenants calls are using. An
	// in-memory DB keeps every tenant.
	TenantMemory int64
}

// DB is a memory store: a set of named [Collection]s of items, held in
// memory and, when opened with [Open], persisted in one SQLite file.
//
// A DB and its collections are safe for concurrent use by multiple
// goroutines.
type DB struct {
	emb     Embedder
	persist persister // nil for an in-memory DB

	// mu guards the fields below. It is never held while a collection
	// loads from the file, which can take long: a load in progress is
	// in loading, and callers wanting the same collection wait for it.
	mu      sync.RWMutex
	colls   map[string]*Collection
	loading map[string]*load
	closed  bool

	tenants *tenantCache // the collections' tenants in memory (tenantcache.go)
	// idle is the sweep of the tenants not loaded (idlesweep.go), nil
	// until a collection of a writable file is loaded or created.
	idle atomic.Pointer[idleSweep]

	// clock is the store's clock, time.Now but for tests, which move
	// time with it; set before any collection is made.
	clock func() time.Time
	// sweptHook, if set (by tests), is called after each background
	// sweep of expired items with its outcome.
	sweptHook func(coll string, removed int, err error)
	// idleSweptHook, if set (by tests), is called after each pass of the
	// sweep of idle tenants, with how many it loaded and its error.
	idleSweptHook func(swept int, err error)
	noSweeper     bool // set by tests: collections start no sweeper
	readOnly      bool // opened with Options.ReadOnly: no write, no save; sweepers only mark
	// workers and progress are Options.IndexWorkers and IndexProgress.
	workers  int
	progress func(collection string, done, total int)
}

// load is a collection being loaded from the file; done is closed when c
// or err is set.
type load struct {
	done chan struct{}
	c    *Collection
	err  error
}

// persister is the durable side of a DB: where collections and their items
// are created, loaded and dropped. The in-memory DB has none.
type persister interface {
	create(ctx context.Context, name string, cfg CollectionConfig) (backend, error)
	load(ctx context.Context, name string) (backend, CollectionConfig, error)
	names(ctx context.Context) ([]string, error)
	drop(ctx context.Context, name string) error
	close() error
}

// OpenMemory returns an empty store held in memory only: everything is
// lost on Close. It has the same API as a store opened with [Open], which
// makes it the store for tests and short-lived programs.
func OpenMemory(o *Options) *DB {
	db := &DB{colls: make(map[string]*Collection), loading: make(map[string]*load), clock: time.Now}
	var budget int64
	if o != nil {
		db.emb, db.workers, db.progress = o.Embedder, max(o.IndexWorkers, 0), o.IndexProgress
		budget = o.TenantMemory
	}
	db.tenants = newTenantCache(budget)
	return db
}

// CollectionInfo describes a collection, as listed by [DB.Collections].
//
// It is a snapshot value, owned by the caller.
type CollectionInfo struct {
	Name   string
	Config CollectionConfig
	Count  int       // number of items
	Index  IndexKind // the index in use: Flat, HNSW or QFlat
	// Recall says how the index meets the collection's recall target
	// (CollectionConfig.HNSW.TargetRecall); nil without one.
	Recall *IndexInfo
}

// IndexInfo is what a collection with a recall target has measured of the
// ways to it, as [CollectionInfo] reports it. A snapshot value.
type IndexInfo struct {
	// Route is an Auto collection's latest measurement of the ways to its
	// recall target: which won, at what size, on what sample. Nil for
	// other kinds, before the first, and after a reopen that kept a graph
	// until it measures again.
	Route *Route
	// Calibration is the latest measurement of the HNSW graph in use: the
	// ef it chose and the recall it measured. Nil while a scan is in use,
	// or before the first calibration finishes.
	Calibration *hnsw.Calibration
	// Searches counts, for the same graph, the searches under the target
	// by the way they went (graph or exact): what the queries did, beside
	// what the latest calibration says they should do. Nil when
	// Calibration is nil.
	Searches *hnsw.TargetSearches
}

// ErrCollectionExists is returned (wrapped) by [DB.CreateCollection] for
// a name already taken.
var ErrCollectionExists = errors.New("cairn: collection exists")

// errReadOnly is the error of every write to a store opened read-only.
var errReadOnly = fmt.Errorf("cairn: %w", sqlitestore.ErrReadOnly)

// errClosed is the error of every call on a closed DB or collection.
var errClosed = fmt.Errorf("cairn: %w", vector.ErrClosed)

// CreateCollection creates the collection name with the given
// configuration and returns it. It returns an error wrapping
// [ErrCollectionExists] if the name is taken and
// [vector.ErrInvalidOptions] if the name is empty or not valid UTF-8, or
// cfg is invalid (see [CollectionConfig.Validate]).
func (db *DB) CreateCollection(ctx context.Context, name string, cfg CollectionConfig) (*Collection, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, err)
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, errClosed
	}
	if err := ctx.Err(); err != nil { // as a file's store would fail
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, err)
	}
	if _, ok := db.colls[name]; ok || db.loading[name] != nil {
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, ErrCollectionExists)
	}
	var (
		be  backend
		err error
	)
	if db.persist != nil {
		be, err = db.persist.create(ctx, name, cfg)
	} else {
		be, err = newMemBackend(cfg)
	}
	if errors.Is(err, vector.ErrDuplicateID) { // in the file, not loaded yet
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, ErrCollectionExists)
	}
	if err != nil {
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, err)
	}
	c, err := newCollection(ctx, db, name, cfg, be)
	if err != nil {
		be.close()
		if db.persist != nil {
			db.persist.drop(context.WithoutCancel(ctx), name)
		}
		return nil, fmt.Errorf("cairn: create collection %q: %w", name, err)
	}
	db.colls[name] = c
	db.startIdleSweepLocked()
	return c, nil
}

// checkName returns an error wrapping [vector.ErrInvalidOptions] if name
// cannot name a new collection or tenant: if it is empty, or not valid
// UTF-8, which a name must be to pass through JSON (an export, MCP)
// unchanged: two names that differ only in invalid bytes would become
// one.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", vector.ErrInvalidOptions)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: the name is not valid UTF-8", vector.ErrInvalidOptions)
	}
	return nil
}

// GetOrCreateCollection returns the collection name, creating it with cfg
// if there is none, so that a program can run it at every start. An
// existing collection is returned as it is, whatever cfg's index settings;
// if its dimension or metric differ from cfg's (once cfg's defaults are
// filled in), it returns an error wrapping [vector.ErrInvalidOptions]. It
// returns the errors of [DB.CreateCollection] and [DB.Collection]
// otherwise.
func (db *DB) GetOrCreateCollection(ctx context.Context, name string, cfg CollectionConfig) (*Collection, error) {
	for {
		c, err := db.Collection(ctx, name)
		if err == nil {
			want := cfg.withDefaults()
			if got := c.Config(); got.Dim != want.Dim || got.Metric != want.Metric {
				return nil, fmt.Errorf("cairn: get or create collection %q: %w: it exists with dimension %d and metric %v, not %d and %v",
					name, vector.ErrInvalidOptions, got.Dim, got.Metric, want.Dim, want.Metric)
			}
			return c, nil
		}
		if !errors.Is(err, vector.ErrNotFound) {
			return nil, err
		}
		c, err = db.CreateCollection(ctx, name, cfg)
		if !errors.Is(err, ErrCollectionExists) {
			return c, err
		}
		// Created by another goroutine since we looked: get it.
	}
}

// Collection returns the collection name, or an error wrapping
// [vector.ErrNotFound]. A persistent collection is loaded from the file on
// first use (its index rebuilt if no up-to-date one was saved and, with a
// recall target, calibrated, which takes seconds at 100,000 vectors of
// 768 dimensions; a saved graph brings its calibration back instead,
// unless an older build saved it), which can take a while for a large
// collection; later calls return the same value.
// A load holds up no other call on the DB; calls for the collection being
// loaded wait for that one load (or for ctx to end).
func (db *DB) Collection(ctx context.Context, name string) (*Collection, error) {
	for {
		db.mu.Lock()
		if db.closed {
			db.mu.Unlock()
			return nil, errClosed
		}
		if c, ok := db.colls[name]; ok {
			db.mu.Unlock()
			return c, nil
		}
		if db.persist == nil {
			db.mu.Unlock()
			return nil, fmt.Errorf("cairn: collection %q: %w", name, vector.ErrNotFound)
		}
		l := db.loading[name]
		if l == nil {
			l = &load{done: make(chan struct{})}
			db.loading[name] = l
			db.mu.Unlock()
			db.loadCollection(ctx, name, l)
			return l.c, l.err
		}
		db.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("cairn: collection %q: %w", name, ctx.Err())
		}
		// A load that failed only because its caller's ctx ended is
		// tried again, with ours.
		if l.err == nil || ctx.Err() != nil || !(errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded)) {
			return l.c, l.err
		}
	}
}

// loadCollection loads the collection name from the file into l, without
// db.mu, and enters it in db.colls unless db has closed meanwhile.
func (db *DB) loadCollection(ctx context.Context, name string, l *load) {
	be, cfg, err := db.persist.load(ctx, name)
	var c *Collection
	if err == nil {
		if c, err = newCollection(ctx, db, name, cfg, be); err != nil {
			be.close()
		}
	}
	db.mu.Lock()
	delete(db.loading, name)
	switch {
	case err != nil:
		l.err = fmt.Errorf("cairn: collection %q: %w", name, err)
	case db.closed:
		c.closeWith(errClosed, false)
		l.err = errClosed
	default:
		db.colls[name] = c
		l.c = c
		db.startIdleSweepLocked()
	}
	db.mu.Unlock()
	close(l.done)
}

// Collections lists every collection, sorted by name. For a persistent
// store this loads every collection.
func (db *DB) Collections(ctx context.Context) ([]CollectionInfo, error) {
	colls, err := db.loadAll(ctx)
	if err != nil {
		return nil, err
	}
	// Info waits for a write in progress; db's lock is not held meanwhile.
	out := make([]CollectionInfo, 0, len(colls))
	for _, c := range colls {
		info, err := c.Info(ctx)
		if errors.Is(err, errDropped) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b CollectionInfo) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}

// loadAll loads every collection and returns them.
func (db *DB) loadAll(ctx context.Context) ([]*Collection, error) {
	db.mu.RLock()
	closed := db.closed
	db.mu.RUnlock()
	if closed {
		return nil, errClosed
	}
	if db.persist != nil {
		names, err := db.persist.names(ctx)
		if err != nil {
			return nil, fmt.Errorf("cairn: list collections: %w", err)
		}
		for _, n := range names {
			if _, err := db.Collection(ctx, n); err != nil && !errors.Is(err, vector.ErrNotFound) {
				return nil, err // one deleted since the listing is no error
			}
		}
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, errClosed
	}
	colls := make([]*Collection, 0, len(db.colls))
	for _, c := range db.colls {
		colls = append(colls, c)
	}
	return colls, nil
}

// DeleteCollection removes the collection name and all its items, or
// returns an error wrapping [vector.ErrNotFound]. It waits for the writes
// in flight on the collection, which complete before it takes effect;
// every call on a handle to it returns an error wrapping
// [vector.ErrNotFound] from then on. ctx counts until the delete begins
// (a load of the collection in progress is waited for first); once begun,
// with the collection's loaded tenants closed, it goes to its end. If the
// file refuses it (a full or failing disk), the collection is left as it
// was, though calls in flight on its tenants may have failed as if it
// had gone. On a store opened read-only it returns an error wrapping
// [sqlitestore.ErrReadOnly], having touched nothing.
// Its tenants and the history of it and of them go with it: a collection
// created again under the name starts empty, whatever its configuration,
// and its history begins at its creation.
func (db *DB) DeleteCollection(ctx context.Context, name string) error {
	db.mu.Lock()
	for l := db.loading[name]; l != nil; l = db.loading[name] {
		db.mu.Unlock()
		select { // a load of it in progress finishes first
		case <-l.done:
		case <-ctx.Done():
			return fmt.Errorf("cairn: delete collection %q: %w", name, ctx.Err())
		}
		db.mu.Lock()
	}
	defer db.mu.Unlock()
	if db.closed {
		return errClosed
	}
	if db.readOnly {
		// Refused before its tenants are closed: the drop would fail,
		// and the calls in flight on them would have met a deletion.
		return fmt.Errorf("cairn: delete collection %q: %w", name, errReadOnly)
	}
	if err := ctx.Err(); err != nil { // as a file's store would fail
		return fmt.Errorf("cairn: delete collection %q: %w", name, err)
	}
	c, ok := db.colls[name]
	if !ok && db.persist == nil {
		return fmt.Errorf("cairn: delete collection %q: %w", name, vector.ErrNotFound)
	}
	// Begun: an end of ctx now would leave the tenants closed below for a
	// collection kept.
	begun := context.WithoutCancel(ctx)
	drop := func() error {
		if db.persist == nil {
			return nil
		}
		return db.persist.drop(begun, name)
	}
	var err error
	if ok {
		// Its tenants first, then it: closed, then dropped, under one
		// hold of its locks: no write in flight meets a store deleted
		// under it.
		db.tenants.closeParent(c, errDropped, false)
		err = c.dropWith(drop)
		db.tenants.reopenParent(c) // deleted, c refuses them itself
	} else {
		err = drop()
	}
	if err != nil {
		return fmt.Errorf("cairn: delete collection %q: %w", name, err)
	}
	delete(db.colls, name)
	return nil
}

// Close saves what needs saving (the search graphs of persistent HNSW
// collections written to since they were loaded, so that the next Open
// need not rebuild them; nothing for a collection only read), releases
// memory and closes the file. Every later call on the DB or its
// collections returns an error wrapping [vector.ErrClosed]. Close is
// idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	// The sweep of idle tenants stops now, and is waited for once db.mu
	// is free (it takes it to list the collections); meanwhile it meets
	// a closing DB as a call in flight does.
	idle := db.idle.Load()
	if idle != nil {
		idle.stop()
	}
	first := db.closeLocked()
	db.mu.Unlock()
	if idle != nil {
		<-idle.done
	}
	return first
}

// closeLocked closes the tenants, the collections and the file. db.mu
// is held.
func (db *DB) closeLocked() error {
	first := db.tenants.closeParent(nil, errClosed, !db.readOnly)
	for _, c := range db.colls {
		if err := c.closeWith(errClosed, !db.readOnly); err != nil && first == nil {
			first = err
		}
	}
	db.colls = nil
	if db.persist != nil {
		if err := db.persist.close(); err != nil && first == nil {
			first = fmt.Errorf("cairn: close: %w", err)
		}
	}
	return first
}
