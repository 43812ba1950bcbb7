// This file holds the benchmarks of the int8 traversal: the same graph
// walked on float32 vectors and on int8 codes, alternating, and one walk
// alone for instruction counts.

package hnsw_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// quantDims are the dimensions of the int8 benchmarks.
var quantDims = []int{100, 384, 768}

// quantPair returns the graph of ds (built once per process, or loaded
// from $HNSW_BENCH_CACHE) and the same graph loaded into an index that
// walks int8 codes, in that order.
func quantPair(b *testing.B, ds *recall.Dataset) [2]*hnsw.Index {
	built := cachedBuild(b, ds)
	benchData.Lock()
	defer benchData.Unlock()
	if ix, ok := benchData.ix[ds.Name+"/int8"]; ok {
		return [2]*hnsw.Index{built, ix}
	}
	var buf bytes.Buffer
	if _, err := built.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	o := built.Options()
	o.Quantize, o.Progress = hnsw.QuantizeInt8, nil
	ix, err := hnsw.New(built.Store(), &o)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.ReadFrom(&buf); err != nil {
		b.Fatal(err)
	}
	benchData.ix[ds.Name+"/int8"] = ix
	return [2]*hnsw.Index{built, ix}
}

// BenchmarkQuantized runs the queries of clustered data (n = 50,000 or
// $HNSW_BENCH_N, M = 16, EfConstruction = 200) on the float32 walk and the
// int8 walk of the same graph, alternating (see alternate), and reports
// int8/float32, the time of the int8 walk over the float32 one, each
// one's median latency, and each one's recall@10.
func BenchmarkQuantized(b *testing.B) {
	for _, dim := range quantDims {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			ds, truth := datasetDim(b, lowDimN(b), dim)
			ixs := quantPair(b, ds)
			alternateIndexes(b, ds, "int8/float32", ixs, func(b *testing.B, ef int) {
				for v, name := range []string{"recall-float32", "recall-int8"} {
					b.ReportMetric(meanRecall(b, ixs[v], ds, truth, 10, ef), name)
				}
			})
		})
	}
}

// BenchmarkQuantizedQuery runs one walk alone at ef = 64 on clustered
// data (n = 50,000 or $HNSW_BENCH_N), without ground truth: for counting
// instructions a query with callgrind (see the int8 note's commands).
func BenchmarkQuantizedQuery(b *testing.B) {
	for _, dim := range []int{100, 768} {
		for v, walk := range []string{"float32", "int8"} {
			b.Run(fmt.Sprintf("d=%d/%s", dim, walk), func(b *testing.B) {
				ds := recall.Clustered(lowDimN(b), 200, dim, 1)
				ix := quantPair(b, ds)[v]
				o := &hnsw.SearchOptions{Ef: 64}
				i := 0
				for b.Loop() {
					if _, err := ix.SearchWith(context.Background(), ds.Queries[i%len(ds.Queries)], 10, o); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// countEfs are the beam widths of the walk instruction counts.
var countEfs = []int{10, 16, 64, 200, 320}

// walkSet is a data set of the walk counts: a name, its vectors and its
// ground truth (nil until asked for).
type walkSet struct {
	name  string
	ds    *recall.Dataset
	truth [][]int32
}

// walkSets returns the sets of BenchmarkCountWalks and BenchmarkWalkRecall:
// clustered data (n = $HNSW_BENCH_N, 50,000) at d = 100 and 768, or, if
// $HNSW_BENCH_SET names DIR/NAME, the real set of DIR/NAME.base.fvecs,
// .query.fvecs, .gt.ivecs and .metric (as bench/peers.sh takes it; the
// ground truth is read only when withTruth).
func walkSets(b *testing.B, withTruth bool) []walkSet {
	path := os.Getenv("HNSW_BENCH_SET")
	if path == "" {
		var sets []walkSet
		for _, dim := range []int{100, 768} {
			name := fmt.Sprintf("d=%d", dim)
			if withTruth {
				ds, truth := datasetDim(b, lowDimN(b), dim)
				sets = append(sets, walkSet{name, ds, truth})
			} else {
				sets = append(sets, walkSet{name, recall.Clustered(lowDimN(b), 200, dim, 1), nil})
			}
		}
		return sets
	}
	benchData.Lock()
	defer benchData.Unlock()
	key := "set:" + path
	ds, ok := benchData.ds[key]
	if !ok {
		base, err := recall.LoadVectors(path + ".base.fvecs")
		if err != nil {
			b.Fatal(err)
		}
		queries, err := recall.LoadVectors(path + ".query.fvecs")
		if err != nil {
			b.Fatal(err)
		}
		m := vector.Cosine
		if raw, err := os.ReadFile(path + ".metric"); err == nil {
			if m, err = vector.ParseMetric(strings.TrimSpace(string(raw))); err != nil {
				b.Fatal(err)
			}
		}
		ds = &recall.Dataset{Name: filepath.Base(path), Dim: len(base[0]), Metric: m, Base: base, Queries: queries}
		benchData.ds[key] = ds
	}
	set := walkSet{name: ds.Name, ds: ds}
	if withTruth {
		truth, err := recall.LoadIvecs(path + ".gt.ivecs")
		if err != nil {
			b.Fatal(err)
		}
		set.truth = truth
	}
	return []walkSet{set}
}

// BenchmarkCountWalks runs countQueries (200 queries, k = 10) once on the
// float32 walk or the int8 walk of the same graph, for each set of
// walkSets and each ef of countEfs, for callgrind to count as
// BenchmarkCountQueries (one sub-benchmark a run,
// --toggle-collect='*countQueries', divide by 200):
//
//	HNSW_BENCH_CACHE=/tmp/hc /tmp/hnsw.test -test.run '^$' -test.bench 'CountWalks' -test.benchtime 1x
//	GODEBUG=asyncpreemptoff=1 HNSW_BENCH_CACHE=/tmp/hc valgrind --tool=callgrind \
//	    --toggle-collect='*countQueries' /tmp/hnsw.test -test.run '^$' \
//	    -test.bench 'CountWalks/d=100/int8/ef=64$' -test.benchtime 1x
//
// It reads no ground truth (BenchmarkWalkRecall reports the recall).
func BenchmarkCountWalks(b *testing.B) {
	if os.Getenv("HNSW_BENCH_CACHE") == "" {
		b.Skip("HNSW_BENCH_CACHE not set")
	}
	for _, set := range walkSets(b, false) {
		ds := *set.ds
		ds.Queries = ds.Queries[:min(200, len(ds.Queries))]
		for v, walk := range []string{"float32", "int8"} {
			for _, ef := range countEfs {
				b.Run(fmt.Sprintf("%s/%s/ef=%d", set.name, walk, ef), func(b *testing.B) {
					ix := quantPair(b, set.ds)[v]
					// No collection of the loaded graphs during the
					// count: its assists would be counted as the
					// queries'.
					runtime.GC()
					for b.Loop() {
						countQueries(b, ix, &ds, ef)
					}
				})
			}
		}
	}
}

// BenchmarkWalkRecall reports the recall@10 of the float32 and the int8
// walks of the same graph (the sets of walkSets, the efs of countEfs and
// more) and their difference, int8 − float32, the int8 walk's finalists
// rescored per query, and its recall and rescored finalists with the
// rescoring stopped by the strict error bound instead of the measured one;
// it times nothing (the figures are deterministic for a given graph).
func BenchmarkWalkRecall(b *testing.B) {
	for _, set := range walkSets(b, true) {
		for _, ef := range []int{10, 12, 16, 24, 32, 64, 128, 200, 320, 400} {
			b.Run(fmt.Sprintf("%s/ef=%d", set.name, ef), func(b *testing.B) {
				ixs := quantPair(b, set.ds)
				for b.Loop() {
				}
				f := meanRecall(b, ixs[0], set.ds, set.truth, 10, ef)
				q := meanRecall(b, ixs[1], set.ds, set.truth, 10, ef)
				b.ReportMetric(f, "recall-float32")
				b.ReportMetric(q, "recall-int8")
				b.ReportMetric(q-f, "delta")
				b.ReportMetric(ixs[1].MeanRescored(set.ds.Queries, 10, ef), "rescored-int8")
				defer hnsw.SetRescoreStrict(hnsw.SetRescoreStrict(true))
				b.ReportMetric(meanRecall(b, ixs[1], set.ds, set.truth, 10, ef), "recall-strict")
				b.ReportMetric(ixs[1].MeanRescored(set.ds.Queries, 10, ef), "rescored-strict")
			})
		}
	}
}

// BenchmarkWalkRescore alternates the int8 walk's queries between the
// rescoring stopped by the strict error bound and by the measured one
// (the sets of walkSets; ef 64 and 200) and reports measured/strict, the
// ratio of their times.
func BenchmarkWalkRescore(b *testing.B) {
	for _, set := range walkSets(b, false) {
		for _, ef := range []int{64, 200} {
			b.Run(fmt.Sprintf("%s/ef=%d", set.name, ef), func(b *testing.B) {
				ix := quantPair(b, set.ds)[1]
				defer hnsw.SetRescoreStrict(hnsw.SetRescoreStrict(false))
				o := &hnsw.SearchOptions{Ef: ef}
				on := func(strict bool) func([]float32) error {
					return func(q []float32) error {
						hnsw.SetRescoreStrict(strict)
						_, err := ix.SearchWith(context.Background(), q, 10, o)
						return err
					}
				}
				alternate(b, set.ds, ef, "measured/strict", [2]func([]float32) error{on(true), on(false)})
			})
		}
	}
}
