// This file holds the seam between an application and where its memory
// lives: the MemoryStore and MemoryCollection interfaces, which a local DB
// (through Local) and a remote cluster (package
// github.com/cairndb/cairn/weaviate) both satisfy.

package cairn

import "context"

// MemoryStore is the memory-store API without the choice of where the
// items live: a set of named collections. [Local] gives one over a [DB];
// package github.com/cairndb/cairn/weaviate gives one over a Weaviate
// cluster. An application written against MemoryStore and
// [MemoryCollection] moves from one to the other by changing only how it
// opens the store:
//
//	var store cairn.MemoryStore = cairn.Local(cairn.OpenMemory(nil))
//	// or: store, err := weaviate.Open(ctx, []string{"10.0.0.1:8080", ...}, nil)
//
// Every method returns the sentinel errors of package vector, wrapped, for
// the same bad input, whichever store it is. Implementations are safe for
// concurrent use by multiple goroutines; what a concurrent reader sees of a
// write is the store's own contract (for a local DB, each write at one
// instant; for a cluster, see its package documentation).
type MemoryStore interface {
	// CreateCollection creates the collection name, as
	// [DB.CreateCollection] does.
	CreateCollection(ctx context.Context, name string, cfg CollectionConfig) (MemoryCollection, error)
	// Collection returns the collection name, or an error wrapping
	// vector.ErrNotFound.
	Collection(ctx context.Context, name string) (MemoryCollection, error)
	// Collections lists every collection, sorted by name.
	Collections(ctx context.Context) ([]CollectionInfo, error)
	// DeleteCollection removes the collection name and its items, or
	// returns an error wrapping vector.ErrNotFound.
	DeleteCollection(ctx context.Context, name string) error
	// Close releases the store; later calls return vector.ErrClosed.
	Close() error
}

// MemoryCollection is the API of one collection of a [MemoryStore]: the
// methods of [*Collection], with the same meaning; *Collection satisfies
// it.
//
// Implementations are safe for concurrent use by multiple goroutines, as
// MemoryStore's are.
type MemoryCollection interface {
	// Name returns the collection's name.
	Name() string
	// Config returns the collection's configuration, defaults filled in.
	Config() CollectionConfig
	// Count returns the number of items.
	Count(ctx context.Context) (int, error)
	// Add stores items; see [Collection.Add].
	Add(ctx context.Context, items ...Item) error
	// Upsert stores or replaces items; see [Collection.Upsert].
	Upsert(ctx context.Context, items ...Item) error
	// Get returns items by id; see [Collection.Get].
	Get(ctx context.Context, ids ...string) ([]Item, error)
	// Delete removes items by id; see [Collection.Delete].
	Delete(ctx context.Context, ids ...string) error
	// DeleteWhere removes the items a filter matches; see
	// [Collection.DeleteWhere].
	DeleteWhere(ctx context.Context, f *Filter) (int, error)
	// Find lists the items a filter matches; see [Collection.Find].
	Find(ctx context.Context, f *Filter, limit int) ([]Item, error)
	// Query returns the k items nearest to an embedding; see
	// [Collection.Query].
	Query(ctx context.Context, embedding []float32, k int, o *QueryOptions) ([]Result, error)
	// QueryText returns the k items nearest to a text; see
	// [Collection.QueryText].
	QueryText(ctx context.Context, text string, k int, o *QueryOptions) ([]Result, error)
}

// Local returns db as a [MemoryStore]. The store and its collections are
// views of db: they are as safe for concurrent use as db itself, and
// closing the store closes db.
func Local(db *DB) MemoryStore { return localStore{db} }

type localStore struct{ db *DB }

func (s localStore) CreateCollection(ctx context.Context, name string, cfg CollectionConfig) (MemoryCollection, error) {
	c, err := s.db.CreateCollection(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s localStore) Collection(ctx context.Context, name string) (MemoryCollection, error) {
	c, err := s.db.Collection(ctx, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s localStore) Collections(ctx context.Context) ([]CollectionInfo, error) {
	return s.db.Collections(ctx)
}

func (s localStore) DeleteCollection(ctx context.Context, name string) error {
	return s.db.DeleteCollection(ctx, name)
}

func (s localStore) Close() error { return s.db.Close() }

// *Collection is the local MemoryCollection.
var _ MemoryCollection = (*Collection)(nil)
