package vector

import "context"

// Store is the home of vectors: a collection of a fixed dimension and
// metric, keyed by [ID]. Indexes read their vectors from a Store and write
// through to it; once a store is handed to an index, write to it only through
// that index, or the index will not know of the change.
//
// A store validates every vector it is given ([Check]) and keeps it in its
// prepared form ([Prepare]: unit length under Cosine). Put never replaces:
// an id that is present gives [ErrDuplicateID], so a replacement is a Delete
// then a Put.
//
// Implementations document what is safe to call concurrently; all of
// cairn's allow any number of readers alongside writers.
type Store interface {
	// Dim returns the dimension of every vector in the store.
	Dim() int
	// Metric returns the metric vectors are prepared for.
	Metric() Metric
	// Len returns the number of stored vectors.
	Len() int
	// Get returns the stored (prepared) vector of id, or an error wrapping
	// [ErrNotFound]. The slice is read-only and stays valid until id is
	// deleted or the store is closed.
	Get(id ID) (Vector, error)
	// Put stores a copy of v under id.
	Put(ctx context.Context, id ID, v Vector) error
	// Delete removes id, or returns an error wrapping [ErrNotFound].
	Delete(ctx context.Context, id ID) error
	// ForEach calls fn for every stored vector, in no particular order,
	// and stops at the first error fn returns, returning it. fn must not
	// write to the store.
	ForEach(fn func(ID, Vector) error) error
}

// BatchPutter is an optional [Store] capability: storing many vectors at
// once, all or nothing. Nothing is stored if any vector or id is invalid.
//
// What is safe to call concurrently is the implementation's to document,
// as for [Store].
type BatchPutter interface {
	PutBatch(ctx context.Context, ids []ID, vs []Vector) error
}

// Block is a run of consecutive slots of a store's arena. Data holds
// len(IDs) prepared vectors, row-major; slot i is live only if Live[i].
// Blocks are read-only views into the store.
type Block struct {
	IDs  []ID
	Live []bool
	Data []float32
}

// BlockViewer is an optional [Store] capability: direct read access to the
// arena, so that exact scans stream vectors without a call per vector.
//
// What is safe to call concurrently is the implementation's to document,
// as for [Store].
type BlockViewer interface {
	// ViewBlocks calls fn with every block of the arena. The blocks stay
	// valid and unchanged until fn returns (the store holds its read lock);
	// fn must not retain them or write to the store.
	ViewBlocks(fn func(blocks []Block) error) error
}

// Index answers k-nearest-neighbour queries over the vectors of a [Store].
// Implementations document what is safe to call concurrently; all of
// cairn's allow searches to run alongside writes.
type Index interface {
	// Add stores v under id and indexes it. It returns an error wrapping
	// [ErrDuplicateID] if id is present, and the validation errors of
	// [Check]; on error nothing changes.
	Add(ctx context.Context, id ID, v Vector) error
	// Delete removes id from the index and its store, or returns an
	// error wrapping [ErrNotFound].
	Delete(ctx context.Context, id ID) error
	// Search returns up to k results nearest to q, closest first (ties by
	// ascending id). opts may be nil for the defaults. It returns
	// [ErrInvalidK] for k <= 0 and the validation errors of [Check] for q.
	// Fewer than k results come back only when fewer than k vectors (that
	// the filter allows) exist.
	Search(ctx context.Context, q Vector, k int, opts *SearchOptions) ([]Result, error)
	// Len returns the number of indexed vectors.
	Len() int
}

// BatchAdder is an optional [Index] capability: adding many vectors at once,
// using every core where the index can. Validation is all or nothing: if
// any id or vector is invalid, nothing is added.
//
// What is safe to call concurrently is the implementation's to document,
// as for [Index].
type BatchAdder interface {
	AddBatch(ctx context.Context, ids []ID, vs []Vector) error
}

// Tracker is an optional [Index] capability for owners that write to the
// store themselves (to put a vector and its payload in one transaction, or
// to load a store that already holds vectors): Track indexes vectors already
// in the store, and Untrack removes ids from the index but leaves them in the
// store. Track returns an error wrapping [ErrNotFound] for an id the store
// lacks and [ErrDuplicateID] for one already indexed; Untrack returns
// [ErrNotFound] for an id not indexed. An index that keeps no state of its
// own (package flat) does not implement Tracker: every vector in its store is
// searchable, so writing to the store is all it takes.
//
// What is safe to call concurrently is the implementation's to document,
// as for [Index].
type Tracker interface {
	Track(ctx context.Context, ids []ID) error
	Untrack(ctx context.Context, ids []ID) error
}

// SearchOptions are per-call options common to every index. Options that
// only one index understands (such as HNSW's ef) live on that index's own
// search options type, which embeds this one.
//
// A search only reads it, so one value may serve many concurrent
// searches.
type SearchOptions struct {
	// Filter, if non-nil, restricts results to the ids it allows. Indexes
	// still return k results whenever k allowed vectors exist. An [*IDSet]
	// also tells the index how many ids it allows, which lets an
	// approximate index switch to an exact scan of a small allow-list.
	Filter Filter
}

// Filter decides which ids a search may return. Allow must be safe to call
// from several goroutines at once, and fast: it may be called for every
// vector an index visits.
type Filter interface {
	Allow(id ID) bool
}

// FilterFunc adapts an ordinary function to a [Filter].
//
// It is as safe for concurrent use as the function is, which [Filter]
// requires.
type FilterFunc func(ID) bool

// Allow returns f(id).
func (f FilterFunc) Allow(id ID) bool { return f(id) }

// IDSet is an allow-list [Filter]: a set of ids. A nil *IDSet allows
// nothing. Reads (Allow, Len, Contains, All) are safe to call concurrently;
// Add is not safe alongside any other call.
type IDSet struct {
	m map[ID]struct{}
}

// NewIDSet returns a set holding ids.
func NewIDSet(ids ...ID) *IDSet {
	s := &IDSet{m: make(map[ID]struct{}, len(ids))}
	for _, id := range ids {
		s.m[id] = struct{}{}
	}
	return s
}

// IDSetOf returns a set backed by m itself, without copying it: building
// a set from a map the caller already has costs nothing. The caller must
// not modify m while the set is in use (by a search, say), and must not
// call Add on the set while m is in use elsewhere.
func IDSetOf(m map[ID]struct{}) *IDSet {
	return &IDSet{m: m}
}

// Add puts id in the set.
func (s *IDSet) Add(id ID) {
	if s.m == nil {
		s.m = make(map[ID]struct{})
	}
	s.m[id] = struct{}{}
}

// Allow reports whether id is in the set.
func (s *IDSet) Allow(id ID) bool {
	if s == nil {
		return false
	}
	_, ok := s.m[id]
	return ok
}

// Len returns the number of ids in the set.
func (s *IDSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.m)
}

// All calls yield for every id in the set, in no particular order, until
// it returns false. It has the shape of an iter.Seq[ID].
func (s *IDSet) All(yield func(ID) bool) {
	if s == nil {
		return
	}
	for id := range s.m {
		if !yield(id) {
			return
		}
	}
}
