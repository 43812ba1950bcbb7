// This file holds the tests of an Auto collection measuring its ways to
// the recall target again on the queries a scan answered.

package cairn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/route"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// remeasureWait bounds how long a test waits for a background
// measurement: it guards against one that never ends, not against a slow
// one. Under -race, beside other packages' tests on two cores, one of a
// few thousand items took more than 30 s.
const remeasureWait = 5 * time.Minute

// waitRemeasured waits until no background measurement runs on c.
func waitRemeasured(t *testing.T, c *Collection) {
	t.Helper()
	for deadline := time.Now().Add(remeasureWait); c.life.remeasuring.Load(); {
		if time.Now().After(deadline) {
			t.Fatalf("the background measurement did not end within %v", remeasureWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ask queries c with qs, unfiltered, and checks each gets k results.
func ask(t *testing.T, c *Collection, qs []vector.Vector, o *QueryOptions) {
	t.Helper()
	for _, q := range qs {
		res, err := c.Query(context.Background(), q, 5, o)
		if err != nil || len(res) != 5 {
			t.Fatalf("query: %d results, %v", len(res), err)
		}
	}
}

// TestRouteOnQueries: an Auto collection whose scan won a measurement on
// held-out vectors keeps the unfiltered vector queries it answers, and once
// it holds hnsw.MinRealQueries distinct ones measures again on them, in the
// background: the graph it then switches to calibrated on those queries,
// and holds the items written while it was built. Queries asked again,
// filtered ones and keyword ones do not count.
func TestRouteOnQueries(t *testing.T) {
	ctx := context.Background()
	verdict, calls := Flat, 0
	stubRoute(t, &verdict, &calls)
	db, c := routedCollection(t, filepath.Join(t.TempDir(), "auto.db"), "c")
	defer db.Close()
	ds := recall.Clustered(800, hnsw.MinRealQueries+50, 16, 8)
	items := make([]Item, 700)
	for i := range items {
		items[i] = Item{ID: fmt.Sprint("k", i), Embedding: ds.Base[i], Metadata: map[string]any{"even": i%2 == 0}}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	info := mustInfo(t, c)
	if want := (Route{Index: Flat, Len: 700}); calls != 1 || info.Recall.Route == nil || *info.Recall.Route != want || nextMeasure(c) != 1400 {
		t.Fatalf("after 700 items, the scan winning: %d measurements, route %+v, want %+v", calls, info.Recall.Route, want)
	}
	few := ds.Queries[:hnsw.MinRealQueries-1]
	ask(t, c, few, nil)
	ask(t, c, few, nil) // asked again: no more distinct queries
	ask(t, c, ds.Queries[hnsw.MinRealQueries:], &QueryOptions{Filter: Eq("even", true)})
	if _, err := c.Query(ctx, nil, 5, &QueryOptions{Mode: KeywordMode, Keywords: "anything"}); err != nil {
		t.Fatal(err)
	}
	waitRemeasured(t, c)
	if calls != 1 {
		t.Fatalf("%d measurements after %d distinct unfiltered queries, want none more", calls-1, len(few))
	}

	// The graph wins on the queries; items written during its build are
	// in it once installed.
	verdict = HNSW
	rebuildHook = func() { addRange(t, c, ds.Base, 700, 800) }
	defer func() { rebuildHook = nil }()
	ask(t, c, ds.Queries[hnsw.MinRealQueries-1:hnsw.MinRealQueries], nil)
	waitRemeasured(t, c)
	info = mustInfo(t, c)
	if calls != 2 || info.Index != HNSW || info.Recall.Route == nil || info.Recall.Route.Index != HNSW ||
		info.Recall.Route.Queries != hnsw.MinRealQueries || info.Recall.Route.Len != 700 || nextMeasure(c) != 0 {
		t.Fatalf("after %d distinct queries, the graph winning: %d measurements, %+v, route %+v",
			hnsw.MinRealQueries, calls, info, info.Recall.Route)
	}
	if cal := info.Recall.Calibration; cal == nil || cal.Source != hnsw.SourceQueries || cal.RealQueries != hnsw.MinRealQueries {
		t.Fatalf("calibration of the graph measured on queries: %+v", cal)
	}
	c.mu.RLock()
	opts := c.idx.(*hnsw.Index).Options()
	c.mu.RUnlock()
	if opts.Workers != runtime.GOMAXPROCS(0) || opts.Progress != nil {
		t.Errorf("the graph built in the background inserts with %d workers (progress set: %v), want %d and none, as the collection's",
			opts.Workers, opts.Progress != nil, runtime.GOMAXPROCS(0))
	}
	if n, _ := c.Count(ctx); n != 800 {
		t.Fatalf("count %d after the writes beside the build, want 800", n)
	}
	for _, i := range []int{3, 750, 799} {
		res, err := c.Query(ctx, ds.Base[i], 1, &QueryOptions{Ef: 100})
		if err != nil || len(res) != 1 || res[0].ID != fmt.Sprint("k", i) {
			t.Fatalf("query for item %d after the switch: %v, %v", i, res, err)
		}
	}
}

// TestRouteOnQueriesKept: a scan that wins again on the queries stays,
// its route says it was measured on them, it is not measured again on more
// queries, and after a reopen it is remembered as measured on them; a graph
// that wins on queries replaces the stored scan, and a reopen keeps the
// graph and that verdict, measured on the queries.
func TestRouteOnQueriesKept(t *testing.T) {
	verdict, calls := QFlat, 0
	stubRoute(t, &verdict, &calls)
	path := filepath.Join(t.TempDir(), "auto.db")
	db, c := routedCollection(t, path, "q")
	ds := recall.Uniform(700, 3*hnsw.MinRealQueries, 16, 9)
	addRange(t, c, ds.Base, 0, 700)
	ask(t, c, ds.Queries[:hnsw.MinRealQueries], nil)
	waitRemeasured(t, c)
	want := Route{Index: QFlat, Len: 700, Queries: hnsw.MinRealQueries}
	if info := mustInfo(t, c); calls != 2 || info.Index != QFlat || info.Recall.Route == nil || *info.Recall.Route != want || nextMeasure(c) != 1400 {
		t.Fatalf("the scan winning on queries: %d measurements, %+v, route %+v, want %+v", calls, info, info.Recall.Route, want)
	}
	ask(t, c, ds.Queries[hnsw.MinRealQueries:], nil)
	waitRemeasured(t, c)
	if calls != 2 {
		t.Fatalf("measured %d more times on more queries after a measurement on queries", calls-2)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, c = routedCollection(t, path, "q")
	if info := mustInfo(t, c); calls != 2 || info.Index != QFlat || info.Recall.Route == nil || *info.Recall.Route != want || nextMeasure(c) != 1400 {
		t.Fatalf("reopened: %d measurements, %+v, route %+v, want %+v", calls, info, info.Recall.Route, want)
	}
	ask(t, c, ds.Queries[:hnsw.MinRealQueries], nil)
	waitRemeasured(t, c)
	if calls != 2 {
		t.Fatalf("reopened, measured %d more times on queries after a measurement on queries", calls-2)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A scan that won on held-out vectors, then the graph on queries.
	db, c = routedCollection(t, path, "g")
	verdict = Flat
	addRange(t, c, ds.Base, 0, 700)
	verdict = HNSW
	ask(t, c, ds.Queries[:hnsw.MinRealQueries], nil)
	waitRemeasured(t, c)
	if info := mustInfo(t, c); calls != 4 || info.Index != HNSW {
		t.Fatalf("the graph winning on queries: %d measurements, %+v", calls, info)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, c = routedCollection(t, path, "g")
	defer db.Close()
	if info := mustInfo(t, c); calls != 4 || info.Index != HNSW || info.Recall.Route == nil || info.Recall.Route.Index != HNSW ||
		info.Recall.Route.Queries != hnsw.MinRealQueries {
		t.Fatalf("reopened after the graph won: %d measurements, %+v, route %+v; want its verdict on %d queries kept",
			calls, info, info.Recall.Route, hnsw.MinRealQueries)
	}
}

// TestRouteOnQueriesClose: closing the collection while a measurement on
// queries runs ends it: Close returns, the measurement gives up, and the
// file reopens with the scan's verdict.
func TestRouteOnQueriesClose(t *testing.T) {
	verdict, calls := Flat, 0
	stubRoute(t, &verdict, &calls)
	path := filepath.Join(t.TempDir(), "auto.db")
	db, c := routedCollection(t, path, "c")
	ds := recall.Clustered(700, hnsw.MinRealQueries, 16, 10)
	addRange(t, c, ds.Base, 0, 700)
	started := make(chan struct{})
	chooseRouteFunc = func(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID, qo *qflat.Options, recorded [][]float32, _ bool) (route.Verdict, error) {
		close(started)
		<-ctx.Done() // a measurement that lasts until the collection closes
		return route.Verdict{}, ctx.Err()
	}
	ask(t, c, ds.Queries, nil)
	<-started
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	waitRemeasured(t, c)
	if _, err := c.Query(context.Background(), ds.Queries[0], 5, nil); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("query after close: %v, want ErrClosed", err)
	}
	db, c = routedCollection(t, path, "c")
	defer db.Close()
	if info := mustInfo(t, c); info.Index != Flat || info.Recall.Route == nil || info.Recall.Route.Queries != 0 {
		t.Fatalf("reopened after a measurement cut short: %+v, route %+v", info, info.Recall.Route)
	}
}

// TestRouteOnQueriesFails: a background measurement that fails keeps the
// queries it took for the next one, and the next starts only after a
// back-off; the one after it measures on those queries.
func TestRouteOnQueriesFails(t *testing.T) {
	verdict, calls := Flat, 0
	stubRoute(t, &verdict, &calls)
	measured := chooseRouteFunc
	failing := errors.New("the store failed")
	chooseRouteFunc = func(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID, qo *qflat.Options, recorded [][]float32, bg bool) (route.Verdict, error) {
		if bg {
			calls++
			return route.Verdict{}, failing
		}
		return measured(ctx, g, st, ids, qo, recorded, bg)
	}
	db, c := routedCollection(t, filepath.Join(t.TempDir(), "auto.db"), "c")
	defer db.Close()
	ds := recall.Clustered(700, hnsw.MinRealQueries+1, 16, 11)
	addRange(t, c, ds.Base, 0, 700)
	start := time.Now()
	ask(t, c, ds.Queries[:hnsw.MinRealQueries], nil)
	waitRemeasured(t, c)
	c.mu.RLock()
	kept, retry := c.life.queries.Len(), c.life.retry
	c.mu.RUnlock()
	if calls != 2 || kept != hnsw.MinRealQueries || retry.Wait != route.Backoff || retry.At.Before(start.Add(route.Backoff)) {
		t.Fatalf("after a failed measurement: %d measurements, %d queries kept, retry %+v; want 2, %d, and a back-off of %v",
			calls, kept, retry, hnsw.MinRealQueries, route.Backoff)
	}
	ask(t, c, ds.Queries[hnsw.MinRealQueries:], nil)
	waitRemeasured(t, c)
	if calls != 2 {
		t.Fatalf("measured again during the back-off")
	}

	// The back-off over, the next query starts a measurement, on the
	// queries the failed one took.
	chooseRouteFunc = measured
	verdict = HNSW
	c.mu.Lock()
	c.life.retry.At = time.Now()
	c.mu.Unlock()
	ask(t, c, ds.Queries[:1], nil)
	waitRemeasured(t, c)
	info := mustInfo(t, c)
	if calls != 3 || info.Index != HNSW || info.Recall.Route == nil || info.Recall.Route.Queries != hnsw.MinRealQueries+1 {
		t.Fatalf("after the back-off: %d measurements, %+v, route %+v; want the graph measured on %d queries",
			calls, info, info.Recall.Route, hnsw.MinRealQueries+1)
	}
	c.mu.RLock()
	retry = c.life.retry
	c.mu.RUnlock()
	if retry != (route.Retry{}) {
		t.Errorf("back-off %+v left after a measurement that came to a verdict", retry)
	}
}

// nextMeasure is the size at which c's scan is measured against the graph
// again, 0 once the graph has won or before the first measurement.
func nextMeasure(c *Collection) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.life.route == nil {
		return 0
	}
	return c.life.route.next
}
