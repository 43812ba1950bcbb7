// This file holds the instruction-count harness: a benchmark whose query
// and insert loops are functions of their own, for valgrind's callgrind to
// count (see BenchmarkCount).
package hnsw_test

import (
	"context"
	"os"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkCountQueries runs countQueries (the 200 queries of clustered
// d = 100, n = $HNSW_BENCH_N (50,000), at ef = 64) once, for callgrind to
// count its instructions. The graph comes from $HNSW_BENCH_CACHE: build it
// there natively first (one run without valgrind). Go under valgrind needs
// asynchronous preemption off:
//
//	go test -c -o /tmp/hnsw.test ./hnsw
//	HNSW_BENCH_CACHE=/tmp/hc /tmp/hnsw.test -test.run '^$' -test.bench CountQueries -test.benchtime 1x
//	GODEBUG=asyncpreemptoff=1 HNSW_BENCH_CACHE=/tmp/hc valgrind --tool=callgrind \
//	    --toggle-collect='*countQueries' /tmp/hnsw.test -test.run '^$' -test.bench CountQueries -test.benchtime 1x
//
// and divide the total by 200.
func BenchmarkCountQueries(b *testing.B) {
	if os.Getenv("HNSW_BENCH_CACHE") == "" {
		b.Skip("HNSW_BENCH_CACHE not set")
	}
	ds, _ := datasetDim(b, lowDimN(b), 100)
	ix := cachedBuild(b, ds)
	for b.Loop() {
		countQueries(b, ix, ds, 64)
	}
}

// BenchmarkCountInserts runs countInserts (clustered d = 100, the same
// vectors as BenchmarkCountQueries', inserted one by one, one goroutine:
// 5,000 of them, or $HNSW_BENCH_N) once, for callgrind as
// BenchmarkCountQueries (with --toggle-collect='*countInserts'; divide by
// the number inserted).
func BenchmarkCountInserts(b *testing.B) {
	n := 5000
	if os.Getenv("HNSW_BENCH_N") != "" {
		n = lowDimN(b)
	}
	ds := recall.Clustered(n, 200, 100, 1)
	for b.Loop() {
		countInserts(b, ds, n)
	}
}

//go:noinline
func countQueries(b *testing.B, ix *hnsw.Index, ds *recall.Dataset, ef int) {
	o := &hnsw.SearchOptions{Ef: ef}
	for _, q := range ds.Queries {
		if _, err := ix.SearchWith(context.Background(), q, 10, o); err != nil {
			b.Fatal(err)
		}
	}
}

//go:noinline
func countInserts(b *testing.B, ds *recall.Dataset, n int) {
	s, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := hnsw.New(s, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i, v := range ds.Base[:n] {
		if err := ix.Add(context.Background(), vector.ID(i), v); err != nil {
			b.Fatal(err)
		}
	}
}
