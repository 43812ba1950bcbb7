package vector

import "errors"

// The sentinel errors of cairn. Every package in the module returns these
// (wrapped with context using %w), so callers test for them with [errors.Is]
// whatever index or store produced them.
var (
	// ErrDimensionMismatch is returned when a vector's length differs from
	// the dimension of the store or index it is given to.
	ErrDimensionMismatch = errors.New("vector: dimension mismatch")

	// ErrNonFinite is returned when a vector holds a NaN or an infinity.
	ErrNonFinite = errors.New("vector: non-finite value (NaN or Inf)")

	// ErrOutOfRange is returned when a finite vector is so long that a
	// distance between it and another accepted vector could overflow
	// float32: under Dot and L2 its squared norm exceeds [MaxSquaredNorm].
	ErrOutOfRange = errors.New("vector: magnitude out of range")

	// ErrZeroVector is returned when a vector of norm zero is given under
	// the Cosine metric, where its direction is undefined.
	ErrZeroVector = errors.New("vector: zero vector under cosine metric")

	// ErrEmptyID is returned when an item has an empty identifier.
	ErrEmptyID = errors.New("vector: empty id")

	// ErrDuplicateID is returned when an id is added that is already stored.
	ErrDuplicateID = errors.New("vector: duplicate id")

	// ErrNotFound is returned when an id (or a named collection) does not exist.
	ErrNotFound = errors.New("vector: not found")

	// ErrInvalidK is returned when a search asks for k <= 0 results.
	ErrInvalidK = errors.New("vector: k must be positive")

	// ErrInvalidOptions is returned when options or parameters are out of range.
	ErrInvalidOptions = errors.New("vector: invalid options")

	// ErrClosed is returned when a store or index is used after Close.
	ErrClosed = errors.New("vector: closed")

	// ErrCorrupt is returned when persisted data fails a structural check or
	// its checksum: a truncated or damaged file or stream.
	ErrCorrupt = errors.New("vector: corrupt data")

	// ErrUnsupportedVersion is returned when persisted data was written in a
	// format version newer than this build understands.
	ErrUnsupportedVersion = errors.New("vector: unsupported format version")
)
