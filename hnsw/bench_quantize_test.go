// This file holds the benchmarks of the int8 traversal: the same graph
// walked on float32 vectors and on int8 codes, alternating, and one walk
// alone for instruction counts.

package hnsw_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
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
			for _, ef := range []int{16, 64, 256} {
				b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
					o := &hnsw.SearchOptions{Ef: ef}
					on := func(ix *hnsw.Index) func([]float32) error {
						return func(q []float32) error {
							_, err := ix.SearchWith(context.Background(), q, 10, o)
							return err
						}
					}
					alternate(b, ds, ef, "int8/float32", [2]func([]float32) error{on(ixs[0]), on(ixs[1])})
					for v, name := range []string{"recall-float32", "recall-int8"} {
						b.ReportMetric(meanRecall(b, ixs[v], ds, truth, 10, ef), name)
					}
				})
			}
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
