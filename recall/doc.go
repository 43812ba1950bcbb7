// Package recall is cairn's yardstick: the benchmark data sets of
// DATASETS.md, exact ground truth, recall@k, the TEXMEX file formats
// (.fvecs, .ivecs, .bvecs) and .npy matrices, and the measurement of any
// [vector.Index] (build time, memory, recall, latency, throughput).
//
// # Data sets
//
// [Uniform] and [Clustered] generate the two synthetic families,
// deterministically for a seed: a base to index and queries drawn
// independently from the same distribution. Ids in an index built from a
// [Dataset] are positions in its Base.
//
// # Ground truth
//
// [GroundTruth] computes the exact k nearest neighbours in float64, on every
// core. It imports nothing but package vector's types: the ground truth must
// not share code with the indexes it judges, so it does not call the
// distance kernels or package flat. [At] scores one answer against it.
//
// # Concurrency
//
// The functions of this package are safe to call concurrently; a [Dataset]
// is read-only once made.
package recall
