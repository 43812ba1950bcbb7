// This file holds BenchmarkQueriesDuringRemeasure: the latency of queries
// on an Auto collection's scan while it measures its ways to the recall
// target again on the queries it answered, beside the latency with nothing
// running.

package cairn

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
)

// BenchmarkQueriesDuringRemeasure loads 10,000 uniform 128-d vectors into
// an Auto collection with a recall target of 0.95, where a scan wins the
// measurement on held-out vectors, and times queries (one client, back to
// back) during its two kinds of background measurement, each beside as
// many queries with nothing running: "queries", started by the last of
// hnsw.MinRealQueries distinct queries, and "doubled", started by the
// write that doubles the collection (10,000 more vectors, added before the
// timing). It reports p50 and p95 of each phase, the ratio of its p95 to
// the quiet p95 (1 means the measurement costs the queries nothing), and
// how long the measurement took. One iteration is the whole run (about a
// minute on 2 cores):
//
//	go test -run '^$' -bench BenchmarkQueriesDuringRemeasure -benchtime 1x .
func BenchmarkQueriesDuringRemeasure(b *testing.B) {
	ctx := context.Background()
	ds := recall.Uniform(20000, hnsw.MinRealQueries, 128, 21)
	for b.Loop() {
		db := OpenMemory(nil)
		c, err := db.CreateCollection(ctx, "u", CollectionConfig{Dim: ds.Dim, Index: Auto, HNSW: hnsw.Options{TargetRecall: 0.95}})
		if err != nil {
			b.Fatal(err)
		}
		load := func(lo, hi int) {
			for ; lo < hi; lo += 1000 {
				items := make([]Item, 0, 1000)
				for i := lo; i < lo+1000; i++ {
					items = append(items, Item{ID: fmt.Sprint(i), Embedding: ds.Base[i]})
				}
				if err := c.Add(ctx, items...); err != nil {
					b.Fatal(err)
				}
			}
		}
		load(0, 10000)
		c.WaitRoutedForTest() // the load's own measurements, at its doublings
		if info, _ := c.Info(ctx); info.Recall.Route == nil || info.Recall.Route.Index == HNSW {
			b.Skipf("the graph won on held-out vectors (route %+v): nothing to measure again", info.Recall.Route)
		}
		query := func(i int) time.Duration {
			t0 := time.Now()
			if _, err := c.Query(ctx, ds.Queries[i%len(ds.Queries)], 10, nil); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		// phase times queries while a measurement runs, then as many
		// with none, and reports them under name.
		phase := func(name string) {
			start := time.Now()
			var busy []time.Duration
			for i := 0; c.life.remeasuring.Load(); i++ {
				busy = append(busy, query(i))
			}
			took := time.Since(start)
			if len(busy) == 0 {
				b.Fatalf("%s: the measurement ended before a query was timed", name)
			}
			calm := make([]time.Duration, max(len(busy), 200))
			for i := range calm {
				calm[i] = query(i)
			}
			at := func(lat []time.Duration, p float64) float64 {
				s := slices.Clone(lat)
				slices.Sort(s)
				return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds())
			}
			b.ReportMetric(at(busy, 0.5), name+"-busy-p50-µs")
			b.ReportMetric(at(busy, 0.95), name+"-busy-p95-µs")
			b.ReportMetric(at(calm, 0.5), name+"-quiet-p50-µs")
			b.ReportMetric(at(calm, 0.95), name+"-quiet-p95-µs")
			b.ReportMetric(at(busy, 0.95)/at(calm, 0.95), name+"-p95-ratio")
			b.ReportMetric(took.Seconds(), name+"-s")
			info, _ := c.Info(ctx)
			b.Logf("%s: route after %+v, index %v", name, *info.Recall.Route, info.Index)
		}
		for i := range ds.Queries {
			query(i) // the last one starts the measurement
		}
		phase("queries")
		if info, _ := c.Info(ctx); info.Recall.Route.Queries == 0 {
			b.Fatalf("no measurement on queries ran: route %+v", *info.Recall.Route)
		}
		load(10000, 20000) // the last write starts the measurement
		phase("doubled")
		if info, _ := c.Info(ctx); info.Recall.Route.Len != 20000 {
			b.Fatalf("no measurement at 20,000 items ran: route %+v", *info.Recall.Route)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
