package qflat_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// The search benchmarks put qflat beside flat's exact scan on the same
// store, in one process, as sibling sub-benchmarks: with -count 6 the two
// alternate, so their ratio survives a noisy machine. The bar of issue 12
// is qflat's single-query QPS ≥ 2.5× flat's on uniform-100000, 768-d, at
// recall@10 ≥ 0.99 (reported as a metric beside the times):
//
//	go test -run '^$' -bench 'Search/n=100000' -count 6 ./qflat/   (about 90 s)
//
// go test's -count repeats each sub-benchmark back to back rather than in
// turn, so BenchmarkSpeedup alternates the two within one loop, query by
// query, and reports the ratio of their total times: the figure for the
// bar on a machine that is not quiet.
//
//	go test -run '^$' -bench Speedup -benchtime 200x ./qflat/   (about 40 s)
//
// Measured so on the 2-core AMD EPYC of issue 12 while other jobs kept its
// load average at 4–6 (so a floor, not the figure): speedup 3.04, recall@10
// 1.000. The scan prefetches two groups of codes ahead (int8_amd64.s):
// without that its reads ran at half flat's bandwidth and the speedup was
// 1.6–1.8.

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "qps")
}

// BenchmarkSearch compares flat and qflat single-query search (k = 10, all
// cores) at 10,000 and 100,000 uniform 768-d vectors, and qflat at one
// core, and reports qflat's recall@10 against flat.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		ds := recall.Uniform(n, 200, 768, 1)
		s := memStore(b, 768, vector.Cosine)
		if err := s.PutBatch(context.Background(), seq(n), ds.Base); err != nil {
			b.Fatal(err)
		}
		ex := flat.New(s)
		q := newIndex(b, s, nil)
		if err := q.Track(context.Background(), seq(n)); err != nil {
			b.Fatal(err)
		}
		rec := measure(b, q, ex, ds.Queries[:50], 10, nil)
		run := func(name string, idx vector.Index, procs int) {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				b.ReportAllocs()
				ctx := context.Background()
				var lat []time.Duration
				i := 0
				for b.Loop() {
					t0 := time.Now()
					if _, err := idx.Search(ctx, ds.Queries[i%len(ds.Queries)], 10, nil); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					i++
				}
				reportLatency(b, lat)
				if idx == vector.Index(q) {
					b.ReportMetric(rec, "recall@10")
				}
			})
		}
		all := runtime.GOMAXPROCS(0)
		run("flat", ex, all)
		run("qflat", q, all)
		run("qflat/procs=1", q, 1)
		b.Run(fmt.Sprintf("n=%d/qflat/track", n), func(b *testing.B) {
			for b.Loop() {
				idx := newIndex(b, s, nil)
				if err := idx.Track(context.Background(), seq(n)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(q.Stats().CodeBytes)/float64(n), "code-bytes/vector")
		})
	}
}

// BenchmarkSpeedup alternates one flat and one qflat search of the same
// query (k = 10, uniform-100000, 768-d, all cores) and reports flat's time
// over qflat's ("speedup", the bar is 2.5) with both QPS figures
// and qflat's recall@10.
func BenchmarkSpeedup(b *testing.B) {
	const n = 100000
	ds := recall.Uniform(n, 200, 768, 1)
	s := memStore(b, 768, vector.Cosine)
	if err := s.PutBatch(context.Background(), seq(n), ds.Base); err != nil {
		b.Fatal(err)
	}
	ex := flat.New(s)
	q := newIndex(b, s, nil)
	if err := q.Track(context.Background(), seq(n)); err != nil {
		b.Fatal(err)
	}
	rec := measure(b, q, ex, ds.Queries[:50], 10, nil)
	ctx := context.Background()
	var tf, tq time.Duration
	i := 0
	for b.Loop() {
		query := ds.Queries[i%len(ds.Queries)]
		t0 := time.Now()
		if _, err := ex.Search(ctx, query, 10, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := q.Search(ctx, query, 10, nil); err != nil {
			b.Fatal(err)
		}
		tf += t1.Sub(t0)
		tq += time.Since(t1)
		i++
	}
	b.ReportMetric(float64(tf)/float64(tq), "speedup")
	b.ReportMetric(float64(i)/tf.Seconds(), "flat-qps")
	b.ReportMetric(float64(i)/tq.Seconds(), "qflat-qps")
	b.ReportMetric(rec, "recall@10")
}
