// Package vector is the floor of cairn: the vector and id types, the
// distance metrics and their SIMD kernels, the sentinel errors every package
// returns, the two interfaces every store and index implements, and
// [MemStore], the in-memory store (or one paged from a temporary file,
// [NewPagedMemStore]).
//
// # Model
//
// A [Store] is the home of vectors: a collection of one dimension and one
// [Metric], keyed by numeric [ID]. An [Index] answers k-nearest-neighbour
// queries over a store and writes through to it. Indexes (package flat for
// exact search, package hnsw for approximate search) take a Store in their
// constructor, so any index runs over any store: [MemStore] here, or a
// SQLite-backed collection from package sqlitestore.
//
// Extra powers are small optional interfaces found by type assertion, in
// the manner of io/fs: [BatchPutter] and [BlockViewer] for stores,
// [BatchAdder] for indexes, and io.WriterTo, io.ReaderFrom and io.Closer
// where an implementation persists or holds resources.
//
// # Distances
//
// Every metric is a distance: smaller is closer, and results are sorted
// ascending, ties broken by ascending id. Cosine distance is 1 − cos (vectors
// are normalised once when stored and when queried), Dot distance is the
// negated inner product, and L2 is the squared Euclidean distance.
//
// The kernels ([InnerProduct], [SquaredL2], [Metric.BatchDistance]) are
// chosen once at start-up for the CPU: AVX-512 or AVX2+FMA assembly on
// amd64, a portable Go loop elsewhere or under the purego build tag. Like
// gonum's floats package they panic on vectors of unequal length: they are
// arithmetic, and everything that accepts user data validates it first.
//
// # Errors
//
// Input is validated once, at the API boundary, and bad input is reported
// with the sentinel errors of this package (wrapped with context), which
// callers test with errors.Is: [ErrDimensionMismatch], [ErrNonFinite], [ErrOutOfRange],
// [ErrZeroVector], [ErrEmptyID], [ErrDuplicateID], [ErrNotFound],
// [ErrInvalidK], [ErrInvalidOptions], [ErrClosed], [ErrCorrupt] and
// [ErrUnsupportedVersion]. A call that fails changes nothing.
//
// # Concurrency
//
// Every exported type documents what is safe to call concurrently. The
// stores and indexes of cairn allow any number of searches alongside writes.
package vector
