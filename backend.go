package cairn

import (
	"context"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/vector"
)

// row is one item as a backend stores it: the numeric id the collection
// gave it, the caller's key, the vector (as given; the store prepares it),
// the text and the normalised metadata.
type row struct {
	id   vector.ID
	key  string
	vec  vector.Vector
	text string
	md   metadata
}

// backend is where a collection's items live: the vector.Store its index
// searches, plus the payload (key, text, metadata) for a persistent store.
// A collection calls it from concurrent writes, never two at once on the
// same id, and without holding its lock (so that a sqlitestore group
// commit gathers them); its store must allow reads alongside writes.
//
// Writes are all or nothing. The collection tells its index about changes
// itself (vector.Tracker), so a backend writes each vector exactly once.
type backend interface {
	store() vector.Store
	// insert stores rows whose ids are new.
	insert(ctx context.Context, rows []row) error
	// upsert stores rows, replacing those whose ids are present.
	upsert(ctx context.Context, rows []row) error
	// remove deletes ids, which are all present.
	remove(ctx context.Context, ids []vector.ID) error
	// load calls fn for every stored row, at open.
	load(ctx context.Context, fn func(row) error) error
	// saveGraph and loadGraph persist an index's graph; the in-memory
	// backend keeps none, and loadGraph reports vector.ErrNotFound.
	saveGraph(ctx context.Context, g graph) error
	loadGraph(ctx context.Context, g graph) error
	close() error
}

// graph is an index that can be written out and read back (hnsw.Index).
type graph interface {
	io.WriterTo
	io.ReaderFrom
}

// memBackend keeps a collection in a vector.MemStore; the payload lives
// only in the collection's maps.
type memBackend struct {
	s     *vector.MemStore
	clock *storeClock // nil but in benchmarks
}

// storeClock adds up the time a backend spends in its store's batch
// insert, so that a benchmark can split an Add between the store and the
// collection's own work on the very same calls.
type storeClock struct{ ns atomic.Int64 }

// time runs f and, if k is not nil, adds its duration to k.
func (k *storeClock) time(f func() error) error {
	if k == nil {
		return f()
	}
	t := time.Now()
	err := f()
	k.ns.Add(int64(time.Since(t)))
	return err
}

func newMemBackend(cfg CollectionConfig) (*memBackend, error) {
	s, err := vector.NewMemStore(cfg.Dim, cfg.Metric)
	if err != nil {
		return nil, err
	}
	return &memBackend{s: s}, nil
}

func (b *memBackend) store() vector.Store { return b.s }

func (b *memBackend) insert(ctx context.Context, rows []row) error {
	ids, vs := split(rows)
	return b.clock.time(func() error { return b.s.PutBatch(ctx, ids, vs) })
}

// upsert deletes the vectors being replaced, then puts the whole batch; if
// that fails it puts the old vectors back.
func (b *memBackend) upsert(ctx context.Context, rows []row) error {
	type old struct {
		id vector.ID
		v  vector.Vector
	}
	var olds []old
	for _, r := range rows {
		if v, err := b.s.Get(r.id); err == nil {
			olds = append(olds, old{r.id, slices.Clone(v)})
		}
	}
	for i, o := range olds {
		if err := b.s.Delete(ctx, o.id); err != nil {
			for _, p := range olds[:i] {
				b.s.Put(context.WithoutCancel(ctx), p.id, p.v)
			}
			return err
		}
	}
	ids, vs := split(rows)
	if err := b.s.PutBatch(ctx, ids, vs); err != nil {
		for _, o := range olds {
			b.s.Put(context.WithoutCancel(ctx), o.id, o.v)
		}
		return err
	}
	return nil
}

func (b *memBackend) remove(ctx context.Context, ids []vector.ID) error {
	for _, id := range ids {
		if err := b.s.Delete(context.WithoutCancel(ctx), id); err != nil {
			return err
		}
	}
	return nil
}

func (b *memBackend) load(context.Context, func(row) error) error { return nil }

func (b *memBackend) saveGraph(context.Context, graph) error { return nil }

func (b *memBackend) loadGraph(context.Context, graph) error { return vector.ErrNotFound }

func (b *memBackend) close() error { return b.s.Close() }

func split(rows []row) ([]vector.ID, []vector.Vector) {
	ids := make([]vector.ID, len(rows))
	vs := make([]vector.Vector, len(rows))
	for i, r := range rows {
		ids[i], vs[i] = r.id, r.vec
	}
	return ids, vs
}
