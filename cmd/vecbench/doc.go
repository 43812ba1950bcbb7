// Vecbench measures cairn's indexes the way people tune them: recall@k
// against exact ground truth, latency of one query at a time, throughput,
// build time and memory, on the synthetic data sets of DATASETS.md or on
// your own vectors.
//
// Usage:
//
//	vecbench                        memory search: exact top 5 over 1,000, 10,000
//	                                and 50,000 clustered items, in memory and
//	                                from a SQLite file
//	vecbench --indexes [--clustered] flat and HNSW at 10,000, 50,000, 100,000
//	vecbench --sweep                HNSW over a grid of M × efConstruction × ef,
//	                                with the Pareto front and recommendations
//	vecbench --peers                the index table plus github.com/coder/hnsw
//	vecbench --quick                every report at small sizes (CI smoke run)
//	vecbench --data base.fvecs --queries query.fvecs [--gt gt.ivecs] [--metric cosine|dot|l2]
//	vecbench --export DIR           write NAME.base.fvecs, NAME.query.fvecs and
//	                                NAME.gt.ivecs, for ../shared/peers/run
//
// Run vecbench --help for every flag. Tables go to stdout as Markdown; --json
// FILE writes every figure with the machine (field names as
// ../shared/peers/run prints them, so the two join on dataset, n, M,
// ef_construction and ef), and --plot FILE.svg or FILE.png draws recall@k
// against queries per second.
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
// the base file as NAME.gt.ivecs and recomputed when older than the data.
//
// # What is measured
//
// Build time is the wall time of adding the base (in batches, on every core
// where the index supports it); memory is the growth of the live Go heap
// across the build, store included, as hnswlib's harness counts resident
// memory. Latency is the wall time of one Search call, one query at a time
// on one goroutine after 50 warm-up queries; QPS is the same pass's rate,
// and "QPS ×N" the rate of N goroutines sharing the queries.
//
// # Running
//
// Progress goes to stderr for any stage longer than a second, as a bar on a
// terminal and as a line every five seconds otherwise; --quiet silences it.
// Ctrl-C stops the run: the tables printed so far stand, --json and --plot
// are written with what was measured, and the exit status is 130. A bad
// flag or file prints one line and exits with status 2 or 1.
package main
