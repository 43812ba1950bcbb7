// This file holds DB, the memory-store API over a Weaviate cluster: its
// collections are classes, listed, created and deleted through the schema.

package weaviate

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// DB is a connection to a Weaviate cluster that serves the memory-store
// API: it satisfies [cairn.MemoryStore], and its collections
// [cairn.MemoryCollection]. It holds no data of its own, so any number of
// DBs, in any number of processes, may use one cluster.
//
// A DB and its collections are safe for concurrent use by multiple
// goroutines. Writes from one DB that name a common id run one after the
// other; see the package documentation for what holds across DBs.
type DB struct {
	cl     *client
	rpc    *rpc // nil when Options.Transport is REST
	opt    Options
	closed atomic.Bool

	seed  maphash.Seed
	locks [nLocks]chan struct{} // writes hold the stripes of their ids, each a token

	shards     sync.Map // class → shard count, from its definition
	factors    sync.Map // class → replication factor, from its definition
	shardNames sync.Map // class → []string, every shard, as last seen all reachable
}

// nLocks is the number of lock stripes that writes of one DB take by id.
const nLocks = 256

// Open connects to the cluster whose nodes listen at addrs ("host:port"
// of each node's HTTP API, or URLs), checks that it answers, over gRPC
// too unless o.Transport is REST, and returns the DB. Requests go to the
// nodes in turn; a node that does not answer is skipped for a while. It
// fails with an error wrapping [ErrUnavailable] if no node answers within
// o.Timeout.
func Open(ctx context.Context, addrs []string, o *Options) (*DB, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no node addresses", errInvalid)
	}
	opt, err := o.withDefaults(len(addrs))
	if err != nil {
		return nil, err
	}
	cl, err := newClient(addrs, opt)
	if err != nil {
		return nil, err
	}
	db := &DB{cl: cl, opt: opt, seed: maphash.MakeSeed()}
	for i := range db.locks {
		db.locks[i] = make(chan struct{}, 1)
	}
	if opt.Transport == GRPC {
		gaddrs, err := grpcAddrs(addrs, opt)
		if err != nil {
			return nil, err
		}
		if db.rpc, err = newRPC(cl, gaddrs, opt, strings.HasPrefix(cl.nodes[0], "https://")); err != nil {
			return nil, err
		}
	}
	var meta struct {
		Version string `json:"version"`
	}
	_, err = cl.call(ctx, http.MethodGet, "/v1/meta", nil, &meta)
	if err == nil && meta.Version == "" {
		err = fmt.Errorf("%w: /v1/meta gives no version", ErrNotWeaviate)
	}
	if errors.Is(err, ErrNotWeaviate) { // a server that answers, but is no Weaviate
		err = fmt.Errorf("%w: %w", errInvalid, err)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("weaviate: open: %w", err)
	}
	if db.rpc != nil {
		if err := db.rpc.health(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("weaviate: open: %w (Options.GRPCAddrs or GRPCPort, or Transport REST)", err)
		}
	}
	return db, nil
}

// Retries returns how many requests (and batch rounds) were retried since
// Open: a measure of how often the cluster was failing.
func (db *DB) Retries() int64 { return db.cl.retries.Load() }

func (db *DB) usable() error {
	if db.closed.Load() {
		return vector.ErrClosed
	}
	return nil
}

// Close releases the DB's connections. Later calls return
// vector.ErrClosed; the cluster's data stays. Close is idempotent.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	db.cl.closed.Store(true)
	if db.opt.HTTPClient == nil {
		db.cl.hc.CloseIdleConnections()
	}
	if db.rpc != nil {
		db.rpc.close()
	}
	return nil
}

// CreateCollection creates the collection name: a class of
// o.Shards shards with o.Replication replicas each. It returns an error
// wrapping cairn.ErrCollectionExists if the name is taken and
// vector.ErrInvalidOptions if the name is empty or cfg is invalid.
func (db *DB) CreateCollection(ctx context.Context, name string, cfg cairn.CollectionConfig) (cairn.MemoryCollection, error) {
	if err := db.usable(); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fmt.Errorf("weaviate: create collection: %w: empty name", vector.ErrInvalidOptions)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("weaviate: create collection %q: %w", name, err)
	}
	if cfg.TTL != 0 {
		return nil, fmt.Errorf("weaviate: create collection %q: %w: a TTL is not supported by the cluster store", name, vector.ErrInvalidOptions)
	}
	if cfg.KeepHistory != nil {
		return nil, fmt.Errorf("weaviate: create collection %q: %w: a history (KeepHistory) is not kept by the cluster store", name, vector.ErrInvalidOptions)
	}
	cfg = filled(cfg)
	cls, err := className(name)
	if err != nil {
		return nil, err
	}
	cl := db.newClass("collection", name, cls, cfg)
	if err := db.createClass(ctx, cl); err != nil {
		if errors.Is(err, vector.ErrDuplicateID) {
			return nil, fmt.Errorf("weaviate: create collection %q: %w", name, cairn.ErrCollectionExists)
		}
		return nil, fmt.Errorf("weaviate: create collection %q: %w", name, err)
	}
	st, _, _ := describe(cl, "collection")
	return db.newCollection(name, cls, cfg, st.Made, nil), nil
}

// filled returns cfg with the defaults the local store fills in.
func filled(cfg cairn.CollectionConfig) cairn.CollectionConfig {
	if cfg.Metric == 0 {
		cfg.Metric = vector.Cosine
	}
	if cfg.AutoThreshold == 0 {
		cfg.AutoThreshold = cairn.DefaultAutoThreshold
	}
	return cfg
}

// Collection returns the collection name, or an error wrapping
// vector.ErrNotFound.
func (db *DB) Collection(ctx context.Context, name string) (cairn.MemoryCollection, error) {
	c, err := db.collection(ctx, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (db *DB) collection(ctx context.Context, name string) (*Collection, error) {
	if err := db.usable(); err != nil {
		return nil, err
	}
	cls, err := className(name)
	if err != nil {
		return nil, fmt.Errorf("weaviate: collection %q: %w", name, vector.ErrNotFound)
	}
	c, err := db.getClass(ctx, cls)
	if err != nil {
		return nil, fmt.Errorf("weaviate: collection %q: %w", name, err)
	}
	st, cfg, ok := describe(c, "collection")
	if !ok {
		return nil, fmt.Errorf("weaviate: collection %q: %w: class %s is not a cairn collection", name, vector.ErrNotFound, cls)
	}
	return db.newCollection(name, cls, cfg, st.Made, metaTypes(c)), nil
}

// Collections lists every collection of the cluster (the classes this
// package created), sorted by name, each with its count.
func (db *DB) Collections(ctx context.Context) ([]cairn.CollectionInfo, error) {
	if err := db.usable(); err != nil {
		return nil, err
	}
	classes, err := db.classes(ctx)
	if err != nil {
		return nil, fmt.Errorf("weaviate: list collections: %w", err)
	}
	var out []cairn.CollectionInfo
	for _, c := range classes {
		st, cfg, ok := describe(c, "collection")
		if !ok {
			continue
		}
		n, err := db.count(ctx, c.Class)
		if err != nil {
			if _, gone := db.getClass(ctx, c.Class); errors.Is(gone, vector.ErrNotFound) {
				continue // deleted meanwhile
			}
			return nil, fmt.Errorf("weaviate: list collections: count of %q: %w", st.Name, err)
		}
		kind := cfg.Index
		if kind == cairn.Auto {
			kind = cairn.HNSW
		}
		out = append(out, cairn.CollectionInfo{Name: st.Name, Config: cfg, Count: n, Index: kind})
	}
	slices.SortFunc(out, func(a, b cairn.CollectionInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteCollection removes the collection name and all its items, or
// returns an error wrapping vector.ErrNotFound.
func (db *DB) DeleteCollection(ctx context.Context, name string) error {
	c, err := db.collection(ctx, name)
	if err != nil {
		return fmt.Errorf("weaviate: delete collection: %w", err)
	}
	if err := db.deleteClass(ctx, c.class); err != nil {
		return fmt.Errorf("weaviate: delete collection %q: %w", name, err)
	}
	return nil
}

// lockIDs takes the stripes of keys (ids within cls) and returns the
// function that gives them back. Stripes are taken in ascending order, so
// concurrent writes cannot deadlock. A write waits for another one of the
// same stripes within its own bound, ctx: past it, it fails with
// ErrUnavailable (or ctx's error, if ctx was canceled), having taken none.
func (db *DB) lockIDs(ctx context.Context, cls string, keys []string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, stripeErr(err)
	}
	var want [nLocks]bool
	for _, k := range keys {
		var h maphash.Hash
		h.SetSeed(db.seed)
		h.WriteString(cls)
		h.WriteByte(0)
		h.WriteString(k)
		want[h.Sum64()%uint64(len(want))] = true
	}
	var held []int
	unlock := func() {
		for _, i := range held {
			<-db.locks[i]
		}
	}
	for i, w := range want {
		if !w {
			continue
		}
		select {
		case db.locks[i] <- struct{}{}:
			held = append(held, i)
		case <-ctx.Done():
			unlock()
			return nil, stripeErr(ctx.Err())
		}
	}
	return unlock, nil
}

// stripeErr is the error of a write whose context ended (err) before it
// took its stripes.
func stripeErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("weaviate: waiting for another write of the same ids: %w", err)
	}
	return fmt.Errorf("%w: waiting for another write of the same ids: %w", ErrUnavailable, err)
}
