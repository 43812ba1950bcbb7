// This file holds the benchmarks of huge pages (internal/hugepage) and the
// interleaved build harness: the same build with the store's and the
// graph's large arrays on huge pages and on small ones, in one process.
// (Builds one after the other cannot compare the two: a build on small
// pages reuses heap memory a build on huge pages left, huge pages and all.)
package hnsw_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/hugepage"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkRowsHugePages isolates what huge pages buy the walk: the
// distances from a query to 16 random rows at a time (a node's neighbour
// list) of 100,000 rows of $HNSW_BENCH_DIMS floats, with the rows in an
// array on huge pages and in one on small pages, alternating blocks of
// 256 lists; it reports the ratio of their times, on over off.
func BenchmarkRowsHugePages(b *testing.B) {
	for _, dim := range lowDims {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			const rows = 100000
			defer hugepage.SetEnabled(true)
			var arr [2][]float32
			for v := range arr {
				hugepage.SetEnabled(v == 1)
				arr[v] = hugepage.Float32s(rows * dim)
				for i := range arr[v] {
					arr[v][i] = float32(i%7) * 0.01
				}
			}
			q := arr[0][:dim]
			rng := rand.New(rand.NewPCG(1, 2))
			ptrs := make([]*float32, 16)
			out := make([]float32, 16)
			var total [2]time.Duration
			i := 0
			for b.Loop() {
				v := (i / 256) % 2
				a := arr[v]
				start := time.Now()
				for j := range ptrs {
					ptrs[j] = &a[rng.IntN(rows)*dim]
				}
				vector.InnerProductGather(q, ptrs, out)
				total[v] += time.Since(start)
				i++
			}
			if total[0] > 0 && total[1] > 0 {
				b.ReportMetric(float64(total[1])/float64(total[0]), "on/off")
			}
		})
	}
}

// BenchmarkInterleavedHugePages builds two graphs of the same data in one
// goroutine, one with its store's and graph's arrays on small pages and
// one on huge pages (see interleavedBuild).
func BenchmarkInterleavedHugePages(b *testing.B) {
	defer hugepage.SetEnabled(true)
	interleavedBuild(b, "on/off", func(v int) { hugepage.SetEnabled(v == 1) })
}

// BenchmarkInterleavedExperiment is BenchmarkInterleavedHugePages for the
// two variants of hnsw's experiment knob (0 and 1).
func BenchmarkInterleavedExperiment(b *testing.B) {
	defer hnsw.SetExperiment(0)
	interleavedBuild(b, "v1/v0", func(v int) { hnsw.SetExperiment(v) })
}

// interleavedBuild builds two graphs of the same data in one goroutine,
// variant 0 and variant 1 (set selects one before each of its blocks),
// inserting alternating blocks of 64 vectors into each (which goes first
// alternating too), so that load from other work on the machine falls on
// both alike; it reports the ratio of their insert times, variant 1 over
// variant 0, under the name ratio, and each graph's recall@10 at ef = 64.
// The data are clustered, of $HNSW_BENCH_DIMS and $HNSW_BENCH_N.
func interleavedBuild(b *testing.B, ratio string, set func(v int)) {
	for _, dim := range lowDims {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			ds, truth := datasetDim(b, lowDimN(b), dim)
			const block = 64
			for b.Loop() {
				var ixs [2]*hnsw.Index
				for v := range ixs {
					set(v)
					s, err := vector.NewMemStore(ds.Dim, ds.Metric)
					if err != nil {
						b.Fatal(err)
					}
					if ixs[v], err = hnsw.New(s, nil); err != nil {
						b.Fatal(err)
					}
				}
				var total [2]time.Duration
				ctx := context.Background()
				for lo := 0; lo < len(ds.Base); lo += block {
					hi := min(lo+block, len(ds.Base))
					for k := range 2 {
						v := k ^ (lo / block % 2)
						set(v)
						start := time.Now()
						for i := lo; i < hi; i++ {
							if err := ixs[v].Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
								b.Fatal(err)
							}
						}
						total[v] += time.Since(start)
					}
				}
				b.ReportMetric(float64(total[1])/float64(total[0]), ratio)
				set(0)
				b.ReportMetric(buildRecall(b, ixs[0], ds, truth), "recall-0")
				set(1)
				b.ReportMetric(buildRecall(b, ixs[1], ds, truth), "recall-1")
			}
		})
	}
}
