// Package hdf5 reads the part of HDF5 that ann-benchmarks' data files use:
// the datasets (train, test, neighbors, distances) and the attributes
// (distance, dimension, ...) at the root of a file written by h5py, in pure
// Go and without dependencies.
//
// It reads superblocks 0 to 3, object headers 1 and 2 (with continuation
// blocks), old-style groups (a symbol table: B-tree version 1, symbol table
// nodes and a local heap) and compact new-style groups (link messages),
// dataspaces, the integer, float and string datatypes (fixed-length and
// variable-length strings, whose bytes sit in a global heap), attributes
// (message versions 1 to 3), and datasets of the compact, contiguous and
// chunked layouts (layout message versions 3 and 4). Chunks are found
// through a version 1 B-tree, or for layout 4 through the single-chunk,
// implicit and fixed-array indexes; they may be filtered with deflate
// (gzip) and shuffle. That is what h5py writes by default and with
// libver="latest", chunks=..., compression="gzip" and shuffle=True for a
// dataset of fixed size.
//
// Anything else (dense link or attribute storage in fractal heaps, the
// extensible-array and version 2 B-tree chunk indexes of resizable
// datasets, other filters, committed or shared datatypes, compound and
// other datatype classes, chunks left unwritten) gives an error wrapping
// [ErrUnsupported]; a version number this package does not know,
// [vector.ErrUnsupportedVersion]; bytes that contradict the format
// (truncated structures, addresses outside the file, impossible sizes,
// cycles), [vector.ErrCorrupt]; a missing dataset or attribute,
// [vector.ErrNotFound]. The checksums of version 2 and later metadata
// (superblock, object header chunks, fixed arrays) are verified; the raw
// data has none unless written with the fletcher32 filter. No input makes the reader panic,
// and what it allocates is bounded by the size of the file (a deflated
// chunk may expand by at most deflate's ratio limit), whatever sizes the
// file claims.
//
// # Concurrency
//
// A [File] is immutable once opened: its methods, and those of the
// [Dataset] and [Attribute] values it returns, are safe for concurrent use
// as long as the underlying [io.ReaderAt] is (an [os.File] is).
package hdf5
