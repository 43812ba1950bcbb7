// Package recall is cairn's yardstick: two synthetic benchmark data sets,
// exact ground truth, recall@k, the TEXMEX file formats
// (.fvecs, .ivecs, .bvecs), .npy matrices and ann-benchmarks' HDF5 files, and the measurement of any
// [vector.Index] (build time, memory, recall, latency, throughput).
//
// # Data sets
//
// [Uniform] and [Clustered] generate the two synthetic families (uniform
// on the unit sphere, and 500 tight Gaussian clusters on it: the worst
// case and a shape like real embeddings'), deterministically for a seed: a base to index and queries drawn
// independently from the same distribution. Every chunk of 256 vectors has
// its own random stream, so generation uses every core, the first n vectors
// of a larger set are the vectors of a smaller one, and the base does not
// depend on the number of queries. Ids in an index built from a [Dataset]
// are positions in its Base.
//
// # Ground truth
//
// [GroundTruth] computes the exact k nearest neighbours in float64, on every
// core, holding tiles of base vectors in cache while the queries stream
// past. It imports nothing but package vector's types: the ground truth must
// not share code with the indexes it judges, so it calls neither the SIMD
// kernels nor package flat. Exact float64 ties are broken by position and
// there is no tolerance for near-ties: an index is credited only with the
// true top k. [CachedGroundTruth] keeps the top 100 beside the data as an
// .ivecs file, checks it before reuse, and recomputes it when it does not
// fit. [At] scores one answer.
//
// # Measurement
//
// [Build] adds a data set's base to an index and measures time and memory;
// [Measure] runs its queries and reports recall@1, @k and @100, the
// latency distribution of one query at a time on one goroutine after a
// warm-up (median, p95, p99, mean), and queries per second on one goroutine
// and on all cores. Latency percentiles are indexed as the usual C++
// harnesses index them (the element at ⌊n·p⌋ of the sorted times), so the
// figures compare with hnswlib's, faiss's and usearch's.
//
// # Files
//
// [FvecsReader], [IvecsReader] and [BvecsReader] stream TEXMEX files;
// [ReadFvecs], [ReadIvecs], [ReadBvecs] and [ReadNpy] read whole files, and
// the Write functions write them. [LoadHDF5] reads ann-benchmarks' HDF5
// files (train, test, neighbors and the distance attribute, see
// [MetricOf]), and [CheckTruth] compares a sample of a ground truth given
// with the data with the exact one. Truncated files, dimensions that change
// from one record to the next or are out of range, and malformed .npy
// headers give errors wrapping [vector.ErrCorrupt]; no input makes a reader
// panic or allocate far beyond the input's size. [WriteFile] writes
// atomically.
//
// # Concurrency
//
// The functions of this package are safe to call concurrently; a [Dataset]
// is read-only once made. The streaming readers are not safe for concurrent
// use.
package recall
