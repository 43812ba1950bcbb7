// Vecbench measures cairn's indexes the way people tune them: recall@k
// against exact ground truth, latency of one query at a time, throughput,
// build time and memory, on synthetic data sets (500 Gaussian clusters on
// the unit sphere, like real embeddings, or uniform on it) or on your own
// vectors.
//
// Usage:
//
//	vecbench                        memory search: exact top 5 over 1,000, 10,000
//	                                and 50,000 clustered items, in memory and
//	                                from a SQLite file
//	vecbench --indexes [--clustered] flat, HNSW and qflat at 10,000, 50,000, 100,000
//	vecbench --sweep                HNSW over a grid of M × efConstruction × ef,
//	                                with the Pareto front and recommendations
//	vecbench --sweep --quantize int8|binary
//	                                the same, and each graph walked again on
//	                                int8 or 1-bit codes (hnsw.QuantizeInt8,
//	                                hnsw.QuantizeBinary) in a table of its
//	                                own, each ef float32 then on the codes
//	vecbench --peers                the index table plus github.com/coder/hnsw
//	vecbench --filtered 0.01,0.99   filtered search, as VectorDBBench's 1% and
//	                                99% cases: flat and HNSW, through the
//	                                index's allow-list and the memory store's
//	                                metadata filter
//	vecbench --clients 1,2,4,8,16   QPS and p50/p95/p99 with that many
//	                                goroutines querying at once, and the load
//	                                duration (insert + build)
//	vecbench --target-recall 0.9,0.95,0.99
//	                                HNSW given a recall target, as it calibrates
//	                                itself, beside the best fixed ef for it
//	vecbench --quick                every report at small sizes (CI smoke run)
//	vecbench --data base.fvecs --queries query.fvecs [--gt gt.ivecs] [--metric cosine|dot|l2]
//	vecbench --data glove-100-angular.hdf5   an ann-benchmarks file
//	vecbench --export DIR           write NAME.base.fvecs, NAME.query.fvecs,
//	                                NAME.gt.ivecs and NAME.metric (of generated
//	                                data or of --data), for other systems'
//	                                harnesses and bench/peers.sh
//
// Run vecbench --help for every flag. Tables go to stdout as Markdown; --json
// FILE writes every figure with the machine (see "The JSON report"), and
// --plot FILE.svg or FILE.png draws them (see "Plots").
//
// # The --queries flag
//
// --queries is a number (how many queries to generate; default 1,000, or
// 200 under --quick) unless --data is given, when it is the file of query
// vectors. A value that does not parse as a number is taken for a file, and
// is an error without --data.
//
// # Data and ground truth
//
// Generated data sets are named like "clustered-10000" (with "-d32" for a
// dimension other than 768, "-s7" for a seed other than 1, and "-q200" in
// file names for a query count other than 1,000). Their exact top-100
// ground truth is computed once and kept in the user's cache directory
// (--cache to choose another, --export DIR to keep it beside the exported
// vectors); a cached file is checked against a fresh computation for a few
// queries before it is trusted. For --data without --gt, it is kept beside
// the base file as NAME.gt.ivecs (when that directory is writable) and
// recomputed when older than the data.
//
// # ann-benchmarks files
//
// --data FILE.hdf5 (or .h5) reads an ann-benchmarks data file with a pure-Go
// HDF5 reader (internal/hdf5): train is the base, test the queries,
// neighbors the ground truth, and the root attribute distance the metric
// ("angular" is cosine, "euclidean" L2, "dot" or "ip" the inner product;
// --metric, --queries and --gt are refused). The file's neighbors are
// checked against cairn's exact float64 top k on 100 queries spread over
// the test set, and the outcome is printed above the tables: ann-benchmarks
// computes them in float32, so a near-tie may differ; many mismatches mean
// a wrong distance attribute. A file without neighbors gets the computed
// ground truth.
//
// --export DIR with --data and no report writes the set as TEXMEX files
// (NAME.base.fvecs, NAME.query.fvecs, NAME.gt.ivecs: the ground truth in
// use) and NAME.metric, one line naming the metric (cosine, dot or l2),
// which bench/peers.sh reads to run hnswlib under the same metric, and
// --data reads in place of --metric (a --metric it contradicts is
// refused). A --gt file is checked as an HDF5 file's neighbors are, and
// refused if its ids overlap the exact top k by less than half: the
// ground truth of other queries or another metric.
//
// # What is measured
//
// Build time is the wall time of adding the base (in batches, on every core
// where the index supports it); memory is the growth of the live Go heap
// across the build, store included, as hnswlib's harness counts resident
// memory. The sweep also prints "counted", the bytes the store and the
// graph count in what they hold (vector.MemStore.Memory, hnsw.Stats.Memory),
// and "RSS", the process's resident-memory growth across the build, which
// is what the C++ peers report as index_bytes. Latency is the wall time of one Search call, one query at a time
// on one goroutine after 50 warm-up queries; QPS is the same pass's rate,
// and "QPS ×N" the rate of N goroutines sharing the queries.
//
// # Filtered search
//
// --filtered gives every item a label per fraction f: the items are ranked
// by a permutation drawn from --seed, and the filter of f keeps the
// round(f·n) items of lowest rank, so the same flags label the same items
// on every run and the filters of several fractions nest. Recall is
// measured against the exact top k among the kept items (from the top-100
// ground truth where it holds k of them, otherwise computed afresh over
// the kept items). Each index (flat, and HNSW at its defaults) is searched
// three ways at each fraction: with the kept ids as an allow-list
// (*vector.IDSet), letting the index choose its strategy by its crossover
// rule (flat: exact scoring of the list below max(n/64, 256) ids, a
// filtered scan above; HNSW: exact scoring while s² ≤ 14·ef·n, the
// filtered graph walk above, see hnsw.FilterCrossover); with the other
// strategy forced (the walk or scan by handing the index the list as a
// plain filter, exact scoring by a loop over the list that scores each
// stored vector); and through a memory-store collection (cairn.OpenMemory)
// of the same index kind, whose items carry the labels as metadata
// ("keep_0.01": true), queried with cairn.Eq. Every fraction must keep at
// least k items.
//
// # Concurrent clients
//
// --clients loads flat and HNSW (at its defaults): the vectors are put
// into a memory store (insert), then HNSW's graph is built over them with
// every core (build; nothing for flat). Then, for each level, that many
// goroutines take the queries from a shared counter until each query has
// run once (after 50 warm-up queries); QPS is the queries over the wall
// time of the pass, and p50/p95/p99 are of the single queries' times.
//
// # Recall targets
//
// --target-recall builds one HNSW graph (at its defaults) per data set and,
// for each target, loads it into an index with hnsw.Options.TargetRecall,
// answers half of the queries, drawn at random (which the index keeps as
// its calibration sample), calibrates, and measures the other half: the
// recall the target reached on queries it did not calibrate on, with
// p50/p95 and QPS. Beside it, the smallest ef of a fine ladder (10 to
// 2,048) that reaches the target on that same half, the exact scan, the
// approximate scan (qflat at its defaults), an in-memory Auto collection
// with the same target (which chooses among the three by measuring them
// as it grows), and, when it searches a graph, that collection queried at
// the smallest ef of the ladder reaching the target on its own graph
// (QueryOptions.Ef: what its user would copy from a sweep). All are timed
// in turns of 50 ms, each round starting with another, until each has had
// 1.25 s and five turns; QPS is the median of the turns', p50/p95 are of
// all its queries. "QPS / best" divides by the fastest of the best ef, the
// exact scan and the approximate scan if it meets the target. "exact" in place of
// an ef means the index chose to score every vector (too small, no ef
// reached the target, or the ef that does scores half of the vectors a
// query). A second table times queries while the index recalibrates in the
// background (on held-out vectors after a load, then on a full sample of
// real queries) against the same queries with no calibration running, and
// reports what one calibration allocates.
//
// One split of the queries is one draw: the ef a calibration chooses
// depends on the queries it happened to measure on, most at high targets,
// where recall rises slowly with ef. --splits N calibrates each target
// again on N other random halves (recorded as the queries it answered,
// so that it measures on them as it would, topped up with held-out vectors
// below 200) and reports
// the spread: the ef chosen and the best ef of the ladder on the other
// half (5th, 50th and 95th percentiles), the calibration's estimate of its
// recall less the recall reached on the other half, the estimate's own
// standard error (hnsw.Calibration.StdErr), the recall reached,
// and the QPS at the ef chosen over that at the other half's best ef (or
// the exact scan, where it chose that or no ef of the ladder reaches the
// target), each beam width timed once, in turns, on all the queries.
// Beside them it gives the ef a calibration would choose on all the
// queries at once (the smallest whose recall over the whole query file
// reaches the target) and how many splits that ef keeps within the two
// bars on their other half: the spread that is the measured half's own,
// which no calibration on a sample of the same queries can avoid.
//
// # Plots
//
// --plot draws the sweep as recall@k against queries per second: the
// recall axis is spaced by 1 − recall on a log scale (0.9, 0.99 and 0.999
// equally apart; recall 1 at its right end), QPS on a log axis; one series
// per index and build setting, each with its own marker, its Pareto front
// joined by a line and its dominated settings faint; the index table's
// rows of the same data join in, and so do --peers-json's lines that
// measured the same n, dimension and k. The title and subtitle name the
// data set, k, the machine, the commit and the date. Without --sweep,
// --plot draws the index table as build time and memory against the
// number of items, one series per index; with both, that figure goes to
// FILE-build.svg (or .png).
//
// # The JSON report
//
// --json FILE writes one object, whose field names are kept stable:
//
//	machine          cpu, cores, go, commit, kernel (distance kernels), os,
//	                 threads (used), date (UTC, 2006-01-02); commit is the
//	                 revision go build stamped, else git describe of the
//	                 working directory or of the source tree at run time
//	                 (exact under go run, which builds from the tree)
//	command          the command line
//	results          one object per measured row (below)
//	recommendations  the sweep's, one per target recall (below)
//
// Every result has dataset, n, dim, metric, store ("memory", "sqlite" or,
// for the memory store, "memory-store"), index ("flat", "hnsw", "qflat",
// "coder-hnsw"), params (M, ef_construction, ef, overfetch, rescore, quantize; empty
// for flat), build_s, index_bytes, k, recall (at k), p50_us, p95_us, p99_us,
// qps (one goroutine, or for "clients" all of them) — named as
// the C++ peers' harnesses print them (bench/peers.sh), so the two join on dataset, n, M,
// ef_construction and ef — and report ("memory", "indexes", "peers",
// "sweep", "filtered", "clients" or "target"), queries, mean_us, recall_at_1,
// qps_all_cores (0 when not measured), threads, and rss_bytes (the
// resident-memory growth across the build, as the peers report
// index_bytes, where the row's index was built in this process; else 0).
// Some reports add:
//
//	memory    open_s: the time to reopen the SQLite file
//	sweep     pareto: true on the Pareto front of recall against QPS;
//	          accounted_bytes and memory_parts (the store's and the
//	          graph's count by part: "store.vectors", "graph.links0", …
//	          and "total")
//	filtered  filter_fraction, filter_items (kept), filter_route
//	          ("allow-list" or "metadata"), filter_strategy ("exact",
//	          "walk" or "scan"), filter_chosen_by ("rule": the index's
//	          crossover rule chose it; "forced": the other strategy)
//	clients   clients (goroutines), insert_s, load_s (insert + build;
//	          build_s is the build alone)
//	target    target_recall, chosen_index ("hnsw" or "exact"), chosen_ef
//	          (0 for exact); recall is measured on the half of the queries
//	          the index did not calibrate on
//
// A recommendation has dataset, k, target_recall, found (false when no
// setting of the grid reaches the target, and then nothing else is set),
// params, recall, p50_us, qps, and the setting as Go: hnsw_options (an
// hnsw.Options literal) and collection_config (a cairn.CollectionConfig
// literal for a memory-store collection). cmd/vecbench/testdata/
// json-shape.golden lists every field; a test fails when one changes.
//
// # Running
//
// Progress goes to stderr for any stage longer than a second, as a bar on a
// terminal and as a line every five seconds otherwise; --quiet silences it.
// Ctrl-C stops the run: the tables printed so far stand, --json and --plot
// are written with what was measured, and the exit status is 130. A bad
// flag or file prints one line and exits with status 2 or 1.
package main
