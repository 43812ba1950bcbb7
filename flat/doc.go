// Package flat is cairn's exact index: every search scores every vector of
// its [vector.Store] and returns the true k nearest, ties broken by
// ascending id. It keeps no state of its own, so it is always in step with
// its store, builds in no time, and is the right choice below a few tens of
// thousands of vectors or wherever an approximate answer will not do.
//
// # Speed
//
// Over a store that implements [vector.BlockViewer] (both of cairn's stores
// do), a search streams the arena block by block through the SIMD batch
// kernels of package vector, split across all cores: each worker takes
// blocks from a shared counter and keeps its own bounded top-k, and the
// workers' results are merged at the end, so no lock is taken per vector.
// The scan is bound by memory bandwidth for one query; [Index.SearchBatch]
// scores many queries against each block while it is in cache, which is
// how ground truth and other bulk work should call it.
//
// Other stores are scanned through [vector.Store.ForEach], one vector at a
// time.
//
// # Concurrency
//
// An [Index] is safe for concurrent use by multiple goroutines exactly as
// far as its store is; over cairn's stores, any number of searches may run
// alongside writes. Context cancellation is checked every 4,096 vectors.
package flat
