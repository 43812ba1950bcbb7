package cairn

// This file holds the backend interface, through which a collection
// stores its items, and the in-memory backend.

import (
	"context"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// row is one version of an item as a backend stores it: its id, the
// caller's key, the vector (as given; the store prepares it), the text,
// the normalised metadata and its times (Unix nanoseconds, noTime for
// none).
type row struct {
	id   vector.ID
	key  string
	vec  vector.Vector
	text string
	md   metadata

	created, updated, expires int64
}

// fault says what makes r a version that no write stores (no id, a
// reserved row id, an id or text not valid UTF-8, an update before its
// creation), or "" if nothing does: the rule of the loader, the history's
// reader and Check. An id or text that is not valid UTF-8 is no fault in
// a row without a creation time: one written before the store kept times
// (schema version 1), when the first builds stored them as given.
func (r *row) fault() string {
	legacy := r.created == noTime
	switch {
	case r.key == "" || !legacy && keyFault(r.key) != "":
		return keyFault(r.key)
	case reservedID(r.id):
		return "has a reserved row id"
	case !utf8.ValidString(r.text) && !legacy:
		return "has a text that is not valid UTF-8"
	case r.created != noTime && r.updated != noTime && r.updated < r.created:
		return "was updated before it was created"
	}
	return ""
}

// keyFault is the part of [row.fault] about the id alone.
func keyFault(key string) string {
	switch {
	case key == "":
		return "has no id"
	case !utf8.ValidString(key):
		return "has an id that is not valid UTF-8"
	}
	return ""
}

// backend is where a collection's items live: the vector.Store its index
// searches, plus the payload (key, text, metadata) for a persistent store.
// A collection calls it from concurrent writes, never two at once on the
// same id, and without holding its lock (so that a sqlitestore group
// commit gathers them); its store must allow reads alongside writes.
//
// Every write stores versions under ids never used before and deletes
// others, so a backend never replaces a vector in place. The collection
// tells its index about changes itself (vector.Tracker), so a backend
// writes each vector exactly once.
type backend interface {
	store() vector.Store
	// write stores rows and deletes the versions drop, all or nothing,
	// durably if the backend keeps a file, and keeps prior in the
	// history (history.go), which a collection without one passes nil.
	// The vectors of drop stay in the store until evict.
	write(ctx context.Context, rows []row, drop []vector.ID, prior []prior) error
	// past is where the collection's history is kept.
	past() pastStore
	// file is the file's collection the backend keeps (a tenant's too),
	// which holds each vector as it was written; nil in memory.
	file() *sqlitestore.Collection
	// evict removes from the store the vectors of ids, versions that
	// write has deleted or that were never published.
	evict(ctx context.Context, ids []vector.ID) error
	// volatile reports whether a write can be undone without trace (by
	// evict), which lets a write store its vectors before it has
	// reserved its keys.
	volatile() bool
	// load calls fn for every stored row, at open.
	load(ctx context.Context, fn func(row) error) error
	// saveGraph and loadGraph persist an index's graph; the in-memory
	// backend keeps none, and loadGraph reports vector.ErrNotFound.
	saveGraph(ctx context.Context, g graph) error
	loadGraph(ctx context.Context, g graph) error
	// route and saveRoute keep an Auto collection's last routing verdict
	// across reopen: route returns nil if none is kept. The in-memory
	// backend keeps none.
	route() *measuredRoute
	saveRoute(ctx context.Context, r *measuredRoute) error
	close() error
}

// graph is an index that can be written out and read back (hnsw.Index).
type graph interface {
	io.WriterTo
	io.ReaderFrom
}

// memBackend keeps a collection in a vector.MemStore; the payload lives
// only in the collection's catalog.
type memBackend struct {
	s  *vector.MemStore
	vs *viewedStore // s as the index sees it
	// putBatch is s.PutBatch, a seam through which a benchmark times the
	// store's own work within an Add.
	putBatch func(ctx context.Context, ids []vector.ID, vs []vector.Vector) error
	hist     memPast
}

func newMemBackend(cfg CollectionConfig) (*memBackend, error) {
	s, err := vector.NewMemStore(cfg.Dim, cfg.Metric)
	if err != nil {
		return nil, err
	}
	return &memBackend{s: s, vs: &viewedStore{MemStore: s}, putBatch: s.PutBatch}, nil
}

// viewedStore is a MemStore whose block views (the exact scans of a flat
// index, each a long read) and the evictions of a write exclude each
// other as wholes: an evict of many vectors waits for the scan in
// progress once, not once per vector, and the next scan waits for the
// evict. Everything else goes to the MemStore as it is.
type viewedStore struct {
	*vector.MemStore
	mu sync.RWMutex
}

// ViewBlocks is the MemStore's, under the shared lock.
func (s *viewedStore) ViewBlocks(fn func([]vector.Block) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.MemStore.ViewBlocks(fn)
}

func (b *memBackend) store() vector.Store { return b.vs }

// write puts the rows; the versions of drop are removed by evict.
func (b *memBackend) write(ctx context.Context, rows []row, _ []vector.ID, prior []prior) error {
	if len(prior) > 0 {
		if err := b.hist.keep(b.s, prior); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	ids := make([]vector.ID, len(rows))
	vs := make([]vector.Vector, len(rows))
	for i, r := range rows {
		ids[i], vs[i] = r.id, r.vec
	}
	return b.putBatch(ctx, ids, vs)
}

func (b *memBackend) evict(ctx context.Context, ids []vector.ID) error {
	b.vs.mu.Lock()
	defer b.vs.mu.Unlock()
	var first error
	for _, id := range ids {
		if err := b.s.Delete(context.WithoutCancel(ctx), id); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (b *memBackend) volatile() bool { return true }

func (b *memBackend) past() pastStore { return &b.hist }

func (b *memBackend) file() *sqlitestore.Collection { return nil }

func (b *memBackend) load(context.Context, func(row) error) error { return nil }

func (b *memBackend) saveGraph(context.Context, graph) error { return nil }

func (b *memBackend) loadGraph(context.Context, graph) error { return vector.ErrNotFound }

func (b *memBackend) route() *measuredRoute { return nil }

func (b *memBackend) saveRoute(context.Context, *measuredRoute) error { return nil }

func (b *memBackend) close() error { return b.s.Close() }
