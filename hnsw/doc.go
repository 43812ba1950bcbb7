// Package hnsw is cairn's approximate nearest-neighbour index: a
// Hierarchical Navigable Small World graph (Yu. A. Malkov and D. A.
// Yashunin, "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", IEEE TPAMI 42(4), 2020;
// arXiv:1603.09320, 2016) over the vectors of a [vector.Store].
//
// # Model
//
// Every vector is a node of a layered graph. A node's top layer is drawn at
// random, ⌊−ln(U)·mL⌋, so each layer holds about 1/M of the nodes of the one
// below. A search starts at the entry point on the top layer, descends
// greedily through the upper layers to the node closest to the query, and
// ends with a beam search of width ef on layer 0, which holds every node.
// An insert runs the same search with ef = efConstruction to find a new
// node's neighbours on each of its layers, keeps M of them with the
// neighbour-selection heuristic (a candidate is kept only if it is closer to
// the new node than to every neighbour already kept), and links back from
// each, pruning a neighbour's list with the same heuristic when it is full.
//
// The paper's symbols and the fields of [Options]:
//
//	M               Options.M               links per node on layers ≥ 1 (default 16)
//	Mmax            Options.M               cap of a node's list on layers ≥ 1
//	Mmax0           2·Options.M             cap of a node's list on layer 0
//	efConstruction  Options.EfConstruction  beam width of inserts (default 200)
//	ef              Options.EfSearch        beam width of queries (default 64),
//	                SearchOptions.Ef        or per query
//	mL              Options.LevelMult       level multiplier (default 1/ln M)
//
// Layout: nodes are dense uint32 slots, apart from the external
// [vector.ID]s. Per-slot state lives in pages of 1,024 slots that never
// move: one row per node holding its layer-0 list (a count and 2·M links),
// a pointer to the node's upper lists (about one node in M has any), the
// id and the level. Over a store that numbers its vectors' slots
// ([vector.SlotStore]: [vector.MemStore], sqlitestore's collections) a
// node is its vector's slot in the store, and the walk finds a
// neighbour's vector at an address computed from the node, in the store's
// own memory: the graph keeps neither a copy of the vector nor a pointer
// to load first, and a deleted node holds its slot until it is unlinked.
// Against a copy of the vector in the row beside the list (hnswlib's
// data_level0_memory_) it saves dim·4 bytes a vector for 0.98–1.08 of the
// query time (BenchmarkSlotted). Over any other store, at dimension ≤ 512
// the row holds the graph's own copy of the vector before the list (taken
// from the store at insert and at [Index.ReadFrom], counted in
// [Stats].GraphBytes); above it, a pointer to the store's vector, resolved
// once at insert (a store's slice stays valid until the vector is
// deleted). Either way the search loop never goes through an interface, a
// map or an error. Ids
// map to slots through an open-addressing table of 4-byte cells, and list
// writes are guarded by 4,096 striped locks rather than a lock per node. At
// M = 16 and 768 dimensions the graph costs about 175 bytes a vector
// (Stats.BytesPerVector, n = 100,000), and a build over a
// [vector.MemStore] adds about 213 bytes a vector beyond the raw float32s,
// store included (vecbench's heap measurement; hnswlib 278). The visited
// set is reset by bumping a generation tag (hnswlib's visited_list_pool),
// and inserts and unfiltered queries keep their candidates in one sorted
// array (filtered queries in two typed binary heaps); a search allocates
// only its result slice. The walk gathers a node's unvisited neighbours,
// prefetches their vectors in one call and scores them four at a time; of
// its ef finalists, only those that can rank among the first k are scored
// again with the single kernel (see Index.rescoreLimit).
//
// Deletes tombstone a node: its id is free at once and searches stop
// returning it, but still walk through it (on its store slot, held, or on
// a copy of its vector, since the store may reuse the memory) until its
// batch is unlinked. Once
// tombstones make up an eighth of the graph, one pass unlinks them and
// repairs every node that linked to one, choosing its new links with the
// heuristic over its remaining links, the deleted nodes' links and its
// neighbours' links, and linking back from the new neighbours; the slots
// are then reused. Sharing the pass and the repairs among a batch makes a
// delete about 4× cheaper than unlinking each at once. After deleting half
// of clustered 768-d data (n = 10,000), recall@10 stays within 0.01 of a
// fresh build of the remaining vectors (BenchmarkDeleteHalf). The pass
// runs in short steps beside searches and inserts, done by the deletes
// that follow the batch's start, each its share (unlink.go), so no search
// waits for a repair; tombstones stay below 3/16 of the graph while
// deletes go on. [Index.Flush] repairs the pending ones at once.
// [Index.Update] is a delete and an add under one id.
//
// The heuristic can prune a node out of every list that linked to it,
// and then no search finds it: about one node in a thousand on real
// sets. Once the nodes inserted since the last check reach an eighth of
// the index, and at every [Index.Flush], one pass over the lists finds
// the nodes the entry point cannot reach and links each from the nearest
// reachable node that can take it (connect.go), as Lucene's HNSW builder
// does after a build.
//
// Large batches ([Index.AddBatch], [Index.Track]) at dimension 192 or more
// build on int8 codes: the first makes a code of every node, trained on
// the store, and their inserts walk the graph on the codes' estimates,
// then score the ef candidates they found exactly and choose neighbours
// among them as above. Only which candidates a walk finds can change,
// where an estimate misranks one at the edge of its beam; the links are
// chosen on exact distances. The codes last until the first search or
// [Index.Flush]. Under [QuantizeInt8] every insert walks the rows' codes
// once they are trained.
//
// Filtered search ([vector.SearchOptions].Filter) walks the graph as usual
// but only collects allowed nodes, so it returns k results whenever k
// allowed vectors are reachable; a small allow-list ([*vector.IDSet], see
// [FilterCrossover]) is scored exactly instead, which is both faster and
// exact at that size.
//
// # Recall targets
//
// Instead of a beam width, an index may be given the recall it should
// reach: [Options].TargetRecall (recall@TargetK, 10 by default). The index
// then measures itself ([Index.Calibrate]): it takes a sample of queries,
// scores them exactly against every indexed vector, and finds by doubling
// and bisection (to within 2%) the smallest ef whose searches reach the
// target on the sample. The sample is, by preference, the unfiltered
// queries the index answered since its last calibration (a reservoir of
// 400 on large indexes and up to 2,000 on small ones, whose exact
// neighbours cost less: as many as cost what 400 do at 100,000 × 768; a
// query asked again counts
// once; used alone from 200 distinct queries on, and again once half as
// many more have come in), else those there are topped up to 400 with
// indexed vectors, each searched for as if it were not in the graph (the
// walk never steps on its node), or one the caller passes. Queries answered
// another way (by the exact scan an index replaces) can join the sample
// through [Index.RecordQueries] (recorded into an empty index, they are
// what the calibration its first batch starts measures on), and
// [Index.WaitCalibration] waits for the one running. A calibration
// on indexed vectors alone is redone with the real queries once 50
// distinct ones have come in ([Calibration.RecalibratesOn]). If the index
// changes between the exact scan and the searches (a calibration beside a
// bulk load), the searches are confined to the vectors the scan scored, so
// that vectors added meanwhile do not count as misses.
// The index calibrates in the background when it first reaches
// [MinCalibrationLen] vectors, whenever it has doubled or halved since, and
// after deletes of a quarter of it, resting as long as it works so that it
// takes about half a core; queries and writes go on meanwhile with the
// previous choice. Below MinCalibrationLen, when no ef up to the index's
// size reaches the target, and when the ef that does makes each query score
// half of the vectors or more (a graph walk that scores that many costs
// more than scoring all of them in order, as on uniform data at high
// targets), queries are scored exactly: every vector of the store's arena
// through the batch kernels, split across cores, as package flat does (the
// same results, ties included). [Index.Calibration] reports the choice and
// what was measured, [Index.TargetSearches] which way the queries went.
//
// The estimate is a mean over the sample, and real queries see what it
// says only as far as they resemble it. Each estimate carries its standard
// error ([Calibration.StdErr]), and the ef chosen must meet the target less
// [RecallSlack] at a one-sided 95% bound as well as the target itself: with
// hundreds of real queries the error is a few thousandths and the bound
// changes nothing; with a few dozen it widens the beam a step. What it
// cannot cover is the spread of the queries still to come and the bias of
// held-out vectors as a proxy for them: on real embeddings they read
// easier than real queries on one set (bge-m3) and harder on another
// (Cohere: 0.950 at ef 10 where its queries reached 0.970), so the ef
// chosen before real queries come in can be a step or two off until a
// calibration on them replaces it. Calibrated on one random half of a
// set's real queries and measured on the other (vecbench --target-recall
// --splits), the other half reached the target less 0.01 in 85–100% of
// splits with 500 real queries (MiniLM, fashion-mnist, a 100-d text set)
// and in half of them or more with 50 (bge-m3, Cohere; 50 unseen queries
// have a standard error of about 0.014 at 0.9 themselves). Near 0.99, where recall rises by a few thousandths
// over a beam a third wider, the ef chosen moves by that third from one
// sample to another. Queries unlike the sample (another distribution, or
// filtered ones) can see less. BENCHMARKS.md has the figures.
//
// # Quantized traversal
//
// With [Options].Quantize = [QuantizeInt8] the graph keeps an int8 code of
// each vector (package vector/quant: d + 4 bytes) in the node's layer-0
// row, beside its links, instead of a float32 copy, and queries walk the
// codes' distance estimates; the finalists that may rank among the first
// k (by a bound on the estimates' error measured from the finalists
// scored so far) are then scored exactly from the store, so returned
// distances are exact. The graph is built with
// float32 as without the option. Codes are trained from the store and
// trained again as it grows or drifts; see [Quantize] for the rules and
// their cost. [QuantizeBinary] keeps 1-bit codes instead (a sign a
// dimension: 204 bytes a node at d = 1536), coarser, walked the same
// way; [Options].QuantizeDims makes either code hold only each vector's
// first components (Matryoshka truncation), the finalists still rescored
// on the whole vectors.
//
// # Concurrency
//
// An [Index] is safe for concurrent use. Searches and inserts (Add,
// AddBatch, Track) run in parallel: each node's neighbour lists are written
// under that node's lock with atomic stores and read with atomic loads, as
// in hnswlib, and a node's vector and layers are in place before any link
// to it is published. ReadFrom, Stats and Verify take the index
// exclusively: they wait for running searches and inserts and block new
// ones while they run. Delete, Untrack and Update take it exclusively only
// to tombstone their nodes (O(1) a node); the repairs that follow, like
// Flush's, run under the shared lock in steps of a few dozen nodes, one
// repairing goroutine at a time, with each new list written under its
// node's lock and merged with the links inserts added meanwhile; a
// batch's slots are freed under the exclusive lock, once no node links to
// them, so no search in flight can hold one. WriteTo flushes beside
// searches, then encodes exclusively. AddBatch and Track insert with
// [Options.Workers] goroutines (every core by default) and take the index
// per insert, so an exclusive call waits for one insert, not for a whole
// batch; until a batch has linked an id, Delete reports it not found.
// Builds check their context every 256 inserts per worker and searches
// every 256 expanded nodes.
//
// # Persistence
//
// [Index.WriteTo] writes the graph (options, entry point, levels, neighbour
// lists, slot → id map), not the vectors, which stay in the store. The
// stream starts with a magic string and a format version and ends with a
// CRC-32C. [Index.ReadFrom] checks the checksum and the structure of the
// graph and resolves every id against the store; a truncated or damaged
// stream gives [vector.ErrCorrupt], a newer format
// [vector.ErrUnsupportedVersion], and a graph that does not describe the
// store [ErrStoreMismatch] (which also wraps ErrCorrupt): rebuild it with
// [Index.Track] then. Loading is a linear decode with no distance
// computation, far cheaper than a rebuild (see BenchmarkLoad). An index
// with [QuantizeInt8] writes format version 2, which adds the option and
// the quantizer, and one with [QuantizeBinary] version 3, the same
// fields, which builds that know only int8 codes refuse as newer; loading encodes the codes again from the store (O(n·d)),
// and trains a quantizer from it for a version-1 graph read by an index
// with the option set. An index with a recall target that has calibrated
// writes version 4, which adds its latest [Calibration] (and the deletes
// counted since): loaded by an index with the same TargetRecall and
// TargetK, the graph answers at the beam width it chose from its first
// query, with no calibration at the load, which costs seconds at 100,000
// × 768. A calibration for another target, or a graph saved without one,
// is calibrated again in the background, as [Index.WaitCalibration] can
// wait for.
package hnsw
