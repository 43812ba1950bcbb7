// Package qflat is cairn's approximate flat index: every search scans the
// int8 codes of all vectors (package vector/quant), a quarter of the bytes
// of the float32 vectors, keeps the Rescore·k best estimates, and rescores
// them exactly from the [vector.Store], so the distances it returns are
// exact and only the choice of candidates is approximate. It is the index
// for data where graphs cannot pay, such as unstructured high-dimensional
// vectors: a scan bound by memory bandwidth reads four times less.
//
// It is a package of its own, not an option of package flat, because it
// keeps state that flat does not: codes, a quantizer and an id table,
// which must be told of every vector ([vector.Tracker]) and kept in step.
//
// # Codes
//
// The quantizer is trained from the store (see package vector/quant for the
// rule) by the first write, and trained again, with every code rebuilt,
// whenever [quant.Quantizer.Stale] says so: each time the index has
// doubled while the training sample was short of full, and when the data
// has drifted out of the trained ranges. A write that triggers a rebuild
// re-encodes every vector before it returns (O(n), O(1) a vector over
// time); searches go on with the old codes meanwhile. [Index.Retrain]
// rebuilds on demand. Nothing is persisted: an index opened over a store
// is built by [Index.Track], codes and all.
//
// # Speed and memory
//
// A code is Dim+4 bytes (784 bytes a vector at 768-d with the slot table,
// against 3,072 for the float32 vector, which the store keeps too). On the
// 2-core AMD EPYC of issue 12, uniform-100000, 768-d, k = 10, a search
// takes a third of the time of flat's exact scan at recall@10 1.000
// (BenchmarkSpeedup, flat and qflat alternating query by query, on a
// machine other jobs kept busy). Track of 100,000 vectors (training and
// encoding, on all cores) takes about a second.
//
// # Filters
//
// A small allow-list ([*vector.IDSet]) is scored exactly, id by id, as in
// package flat. Any other filter is applied during the scan, so the
// Rescore·k candidates are all allowed ones and k results come back
// whenever k allowed vectors exist.
//
// # Concurrency
//
// An [Index] is safe for concurrent use: any number of searches run
// alongside writes, which are serialised among themselves. A search scans
// the codes under a read lock, split across all cores, and rescores
// outside it; a vector deleted meanwhile is skipped. Context cancellation
// is checked every 4,096 codes.
package qflat
