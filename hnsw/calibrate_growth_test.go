package hnsw_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/hnswseam"
	"github.com/cairndb/cairn/internal/reservoir"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestCalibrateWhileGrowing: an index that triples between a calibration's
// exact scan and its measurements (a bulk load beside a background
// calibration) still calibrates to a beam width. The vectors added meanwhile
// are not in the scan's truth; counted as misses they held the measured
// recall near a third at every ef, and the calibration chose exact search
// for a graph that meets the target at a small beam (the Auto collection of
// vecbench's target report on clustered-100000 answered exactly for that).
func TestCalibrateWhileGrowing(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(1800, 200, 16, 11)
	ix := newIndex(t, memStore(t, 16, vector.Cosine), &hnsw.Options{TargetRecall: 0.9})
	add := func(lo, hi int) {
		ids := make([]vector.ID, hi-lo)
		for i := range ids {
			ids[i] = vector.ID(lo + i)
		}
		if err := ix.AddBatch(ctx, ids, ds.Base[lo:hi]); err != nil {
			t.Fatal(err)
		}
	}
	add(0, 600)
	ix.WaitIdle()
	grown := false
	old := hnsw.SetCalibrationTruthHook(func() {
		if !grown {
			grown = true
			add(600, 1800)
		}
	})
	defer hnsw.SetCalibrationTruthHook(old)
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calibration across growth: %+v", c)
	if !grown || c.Exact || c.Recall < 0.9 || c.Len != 600 {
		t.Fatalf("calibration across growth from 600 to 1800 vectors = %+v, want a beam width", c)
	}
	// The beam it chose for 600 vectors is close to what 1800 need; the
	// next calibration (the index has doubled) measures it again.
	ix.WaitIdle()
	if got := measured(t, ix, ds, ds.Queries); got < 0.85 {
		t.Errorf("recall at the calibrated beam on 1800 vectors = %.4f", got)
	}
}

// TestCalibrateWhileDeleting: a third of the index deleted between a
// calibration's exact scan and its measurements. The deleted vectors were
// in the scan's truth; counted as misses they held the measured recall
// near two thirds, and the calibration chose exact search for a graph
// that meets the target at its default beam. The deletes made meanwhile
// also count towards the next calibration, which they call for (a
// quarter of the index deleted), where the one running used to forget
// them.
func TestCalibrateWhileDeleting(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(2000, 200, 16, 12)
	ix := newIndex(t, memStore(t, 16, vector.Cosine), &hnsw.Options{TargetRecall: 0.9})
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	ix.WaitIdle()
	deleted := false
	old := hnsw.SetCalibrationTruthHook(func() {
		if !deleted {
			deleted = true
			for i := 0; i < len(ids); i += 3 {
				if err := ix.Delete(ctx, ids[i]); err != nil {
					t.Error(err)
				}
			}
		}
	})
	defer hnsw.SetCalibrationTruthHook(old)
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calibration across deletes: %+v", c)
	if !deleted || c.Exact || c.Recall < 0.9 || c.Len != 2000 {
		t.Fatalf("calibration across deletes of a third = %+v, want a beam width", c)
	}
	ix.WaitIdle()
	if c2, _ := ix.Calibration(); c2.Len != ix.Len() {
		t.Errorf("after deletes of a third during a calibration, the latest calibration is of %d vectors, want a new one of %d", c2.Len, ix.Len())
	}
}

// TestTargetSearchesCount: TargetSearches counts each search under the
// target by the way it went, and not the searches given an Ef.
func TestTargetSearchesCount(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 300, hnsw.Options{TargetRecall: 0.9})
	for _, q := range ds.Queries[:5] {
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: 20}); err != nil {
			t.Fatal(err)
		}
	}
	// Below MinCalibrationLen every search under the target is exact.
	if got := ix.TargetSearches(); got != (hnsw.TargetSearches{Exact: 5}) {
		t.Errorf("TargetSearches at 300 vectors = %+v, want 5 exact", got)
	}
	big, ds := hardIndex(t, 2000, hnsw.Options{TargetRecall: 0.8})
	if c, _ := big.Calibration(); c.Exact {
		t.Fatalf("calibration %+v, want a beam width", c)
	}
	for _, q := range ds.Queries[:7] {
		if _, err := big.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := big.TargetSearches(); got != (hnsw.TargetSearches{Graph: 7}) {
		t.Errorf("TargetSearches at 2000 vectors = %+v, want 7 through the graph", got)
	}
}

// TestCalibrateMixedSample: with fewer real queries than it trusts alone,
// a calibration measures on all of them topped up with held-out vectors,
// and once a full reservoir of queries has come in, the index recalibrates
// on them.
func TestCalibrateMixedSample(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	for _, q := range ds.Queries[:30] {
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != hnsw.SourceMixed || c.Queries != hnsw.CalibrationQueries || c.Exact || c.Recall < 0.9 {
		t.Fatalf("calibration after 30 queries = %+v, want one on them and held-out vectors", c)
	}
	for _, q := range ds.Queries[30:450] {
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	ix.WaitIdle()
	if c, _ = ix.Calibration(); c.Source != hnsw.SourceQueries || c.Queries < hnsw.CalibrationQueries || c.Queries > 420 {
		t.Fatalf("calibration after 450 queries = %+v, want one on the queries", c)
	}
}

// TestRepeatedQueriesDoNotRecalibrate: a small set of queries asked again
// and again is no better a sample than it was the first time, so it must
// not replace a calibration topped up with held-out vectors (before
// queries were counted distinct, 400 copies of 50 queries recalibrated as
// a sample of 400).
func TestRepeatedQueriesDoNotRecalibrate(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	few := ds.Queries[:50]
	for _, q := range few {
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	before, err := ix.Calibrate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if before.Source != hnsw.SourceMixed {
		t.Fatalf("calibration after 50 queries = %+v, want one on them and held-out vectors", before)
	}
	for range 3 * hnsw.CalibrationQueries / len(few) {
		for _, q := range few {
			if _, err := ix.Search(ctx, q, 10, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	ix.WaitIdle()
	if after, _ := ix.Calibration(); after != before {
		t.Fatalf("after %d repeats of the same %d queries the index recalibrated: %+v, was %+v",
			3*hnsw.CalibrationQueries, len(few), after, before)
	}
}

// TestRecalibrationCountsDistinctQueries: once the reservoir holds enough
// distinct queries the index recalibrates on them, and the sample it
// reports is the distinct ones, not the copies.
func TestRecalibrationCountsDistinctQueries(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	if c, _ := ix.Calibration(); c.Source != hnsw.SourceHeldOut {
		t.Fatalf("calibration before any query = %+v, want one on held-out vectors", c)
	}
	const n = 250 // distinct queries, at least MinRealQueries
	asked := append(slices.Clone(ds.Queries[:n]), ds.Queries[:hnsw.CalibrationQueries+1-n]...)
	for _, q := range asked {
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	ix.WaitIdle()
	c, _ := ix.Calibration()
	if c.Source != hnsw.SourceQueries || c.Queries > n || c.Queries < hnsw.MinRealQueries {
		t.Fatalf("calibration after %d queries, %d distinct = %+v, want one on the distinct queries", len(asked), n, c)
	}
}

// TestHeldOutThenMixed: a calibration on held-out vectors alone is
// measured again, topped up with real queries, once MinMixedQueries
// distinct ones have come in, and on real queries alone once
// MinRealQueries have; the same queries asked again start nothing, nor
// do fewer than MinRealQueries.
func TestHeldOutThenMixed(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	if c, _ := ix.Calibration(); c.Source != hnsw.SourceHeldOut || c.RealQueries != 0 {
		t.Fatalf("calibration before any query = %+v, want one on held-out vectors", c)
	}
	ask := func(qs []vector.Vector, times int) {
		t.Helper()
		for range times {
			for _, q := range qs {
				if _, err := ix.Search(ctx, q, 10, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		ix.WaitIdle()
	}
	few := ds.Queries[:hnsw.MinMixedQueries]
	ask(few, hnsw.CalibrationQueries/len(few)+1)
	mixed, _ := ix.Calibration()
	if mixed.Source != hnsw.SourceMixed || mixed.RealQueries != len(few) {
		t.Fatalf("calibration after %d distinct queries = %+v, want one on them and held-out vectors", len(few), mixed)
	}
	ask(few, hnsw.CalibrationQueries/len(few)+1)
	if c, _ := ix.Calibration(); c != mixed {
		t.Fatalf("the same %d queries asked again recalibrated: %+v, was %+v", len(few), c, mixed)
	}
	more := ds.Queries[:hnsw.MinRealQueries-1]
	ask(more, hnsw.CalibrationQueries/len(more)+1)
	if c, _ := ix.Calibration(); c != mixed {
		t.Fatalf("%d distinct queries recalibrated: %+v, was %+v", len(more), c, mixed)
	}
	more = ds.Queries[:hnsw.MinRealQueries]
	ask(more, hnsw.CalibrationQueries/len(more)+1)
	if c, _ := ix.Calibration(); c.Source != hnsw.SourceQueries || c.RealQueries != len(more) || c.Queries != len(more) {
		t.Fatalf("calibration after %d distinct queries = %+v, want one on them", len(more), c)
	}
	if kept, counted := ix.ReservoirDistinct(); kept != counted {
		t.Fatalf("the reservoir's distinct queries: kept count %d, counted %d", kept, counted)
	}
}

// TestReservoirDistinctCount: the count of distinct queries the index
// keeps as the reservoir fills, is resized and replaces its queries at
// random matches a count over the reservoir itself.
func TestReservoirDistinctCount(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		// Mostly a few hot queries, sometimes a new one.
		q := ds.Queries[r.IntN(20)]
		if r.IntN(4) == 0 {
			q = ds.Queries[r.IntN(len(ds.Queries))]
		}
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
		if i%997 == 0 {
			if kept, counted := ix.ReservoirDistinct(); kept != counted {
				t.Fatalf("after %d queries: kept count %d, counted %d", i+1, kept, counted)
			}
		}
	}
	ix.WaitIdle()
	if kept, counted := ix.ReservoirDistinct(); kept != counted || kept == 0 {
		t.Fatalf("kept count %d, counted %d", kept, counted)
	}
}

// TestReservoirKeepsOneCopy: a query the reservoir holds is not kept
// again, so that queries asked again do not take the places of others:
// 2,500 distinct queries recorded twice in one batch fill a reservoir of
// 2,000 with 2,000 distinct ones.
func TestReservoirKeepsOneCopy(t *testing.T) {
	ix, _ := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	size := reservoir.Size(1500, 16)
	qs := recall.Uniform(1, size+size/4, 16, 9).Queries
	if err := ix.RecordQueries(append(slices.Clone(qs), qs...)); err != nil {
		t.Fatal(err)
	}
	ix.WaitIdle()
	kept, counted := ix.ReservoirDistinct()
	if n := ix.ReservoirLen(); n != size || kept != n || counted != n {
		t.Fatalf("reservoir of %d after %d distinct queries recorded twice: %d held, %d distinct (kept count %d)", size, len(qs), n, counted, kept)
	}
}

// TestReservoirKeepsQueriesAlike: queries that differ only past their
// first components (images whose top rows are blank) are distinct queries,
// each kept once, and a calibration measures on all of them.
func TestReservoirKeepsQueriesAlike(t *testing.T) {
	const n, dim, blank = 1500, 64, 32
	ds := recall.Uniform(n, hnsw.MinRealQueries+100, dim, 12)
	for _, q := range ds.Queries {
		clear(q[:blank])
	}
	ix := newIndex(t, memStore(t, dim, vector.L2), &hnsw.Options{M: 8, EfConstruction: 32, TargetRecall: 0.9})
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.RecordQueries(append(slices.Clone(ds.Queries), ds.Queries...)); err != nil {
		t.Fatal(err)
	}
	kept, counted := ix.ReservoirDistinct()
	if want := len(ds.Queries); kept != want || counted != want || ix.ReservoirLen() != want {
		t.Fatalf("%d distinct queries alike in their first %d components, each recorded twice: %d held, %d distinct (kept count %d), want %d",
			want, blank, ix.ReservoirLen(), counted, kept, want)
	}
	// Recorded into the empty index, they are what the calibration its
	// first batch starts measures on.
	if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	c, ok, err := ix.WaitCalibration(context.Background())
	if err != nil || !ok || c.Source != hnsw.SourceQueries || c.RealQueries != len(ds.Queries) {
		t.Fatalf("calibration %+v (%v, %v), want one on the %d queries recorded", c, ok, err, len(ds.Queries))
	}
}

// TestRecalibratesOn: the rule by which a reservoir of distinct queries
// replaces each kind of calibration.
func TestRecalibratesOn(t *testing.T) {
	for _, tc := range []struct {
		c        hnsw.Calibration
		distinct int
		want     bool
	}{
		{hnsw.Calibration{Source: hnsw.SourceHeldOut, Queries: 400}, hnsw.MinMixedQueries - 1, false},
		{hnsw.Calibration{Source: hnsw.SourceHeldOut, Queries: 400}, hnsw.MinMixedQueries, true},
		{hnsw.Calibration{Source: hnsw.SourceMixed, Queries: 400, RealQueries: 60}, hnsw.MinRealQueries - 1, false},
		{hnsw.Calibration{Source: hnsw.SourceMixed, Queries: 400, RealQueries: 60}, hnsw.MinRealQueries, true},
		{hnsw.Calibration{Source: hnsw.SourceQueries, Queries: 400, RealQueries: 400}, 599, false},
		{hnsw.Calibration{Source: hnsw.SourceQueries, Queries: 400, RealQueries: 400}, 600, true},
		{hnsw.Calibration{Source: hnsw.SourceCaller, Queries: 100}, 2000, false},
	} {
		if got := tc.c.RecalibratesOn(tc.distinct); got != tc.want {
			t.Errorf("%s calibration (%d real of %d) on %d distinct queries: %v, want %v",
				tc.c.Source, tc.c.RealQueries, tc.c.Queries, tc.distinct, got, tc.want)
		}
	}
}

// TestLargerSampleOnSmallIndex: a small index keeps more recent queries
// than CalibrationQueries for its calibrations, because their exact
// neighbours cost little (held-out vectors stay CalibrationQueries).
func TestLargerSampleOnSmallIndex(t *testing.T) {
	ctx := context.Background()
	ix, _ := hardIndex(t, 800, hnsw.Options{TargetRecall: 0.8})
	if c, _ := ix.Calibration(); c.Source != hnsw.SourceHeldOut || c.Queries != hnsw.CalibrationQueries {
		t.Fatalf("held-out calibration of 800 vectors = %+v, want %d held-out vectors", c, hnsw.CalibrationQueries)
	}
	for _, q := range recall.Uniform(1, 1300, 16, 9).Queries {
		if _, err := ix.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Recalibrations on queries ran at 401 of them and again once half as
	// many again had come in (when the first had ended, if it was still
	// running): the reservoir has kept more than CalibrationQueries.
	ix.WaitIdle()
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != hnsw.SourceQueries || c.Queries <= hnsw.CalibrationQueries {
		t.Fatalf("calibration after 1,300 distinct queries = %+v, want one on more than %d", c, hnsw.CalibrationQueries)
	}
}

// TestRecordQueries: queries answered elsewhere and handed to
// RecordQueries are what the next calibration measures on, as queries the
// index answered would be: alone from MinRealQueries distinct ones, topped
// up with held-out vectors below. No search counts them, and a bad query or
// an index without a target is refused.
func TestRecordQueries(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	n := hnsw.MinRealQueries + 50
	// Each query twice: distinct ones count once.
	if err := ix.RecordQueries(append(slices.Clone(ds.Queries[:n]), ds.Queries[:n]...)); err != nil {
		t.Fatal(err)
	}
	c, err := ix.Calibrate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != hnsw.SourceQueries || c.Queries != n || c.RealQueries != n {
		t.Fatalf("calibration after recording %d distinct queries = %+v, want one on them", n, c)
	}
	if s := ix.TargetSearches(); s != (hnsw.TargetSearches{}) {
		t.Errorf("TargetSearches = %+v after recording, want none", s)
	}

	// Under -race the first calibration alone (the longest test there):
	// the two below record and calibrate through the same code, one after
	// the other, and only the source they pick differs, which the plain
	// run checks (see race_test.go).
	if !raceEnabled {
		// A batch of more than CalibrationQueries is kept whole, and the
		// next calibration measures on all of it.
		big, bds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
		many := hnsw.CalibrationQueries + 100
		if err := big.RecordQueries(bds.Queries[:many]); err != nil {
			t.Fatal(err)
		}
		if c, err = big.Calibrate(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if c.Source != hnsw.SourceQueries || c.Queries != many {
			t.Fatalf("calibration after recording %d distinct queries at once = %+v, want one on all of them", many, c)
		}

		fresh, _ := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
		few := hnsw.MinMixedQueries
		if err := fresh.RecordQueries(ds.Queries[:few]); err != nil {
			t.Fatal(err)
		}
		if c, err = fresh.Calibrate(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if c.Source != hnsw.SourceMixed || c.RealQueries != few {
			t.Fatalf("calibration after recording %d queries = %+v, want them topped up with held-out vectors", few, c)
		}
	}

	bad := slices.Clone(ds.Queries[0])
	bad[3] = float32(math.NaN())
	if err := ix.RecordQueries([]vector.Vector{ds.Queries[1], bad}); !errors.Is(err, vector.ErrNonFinite) {
		t.Errorf("RecordQueries with a NaN = %v, want ErrNonFinite", err)
	}
	if err := ix.RecordQueries([]vector.Vector{ds.Queries[1][:3]}); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("RecordQueries with a short query = %v, want ErrDimensionMismatch", err)
	}
	plain := newIndex(t, memStore(t, 16, vector.Cosine), nil)
	if err := plain.RecordQueries(ds.Queries[:1]); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("RecordQueries without a target = %v, want ErrInvalidOptions", err)
	}
}

// TestWaitCalibration: queries recorded into an empty index are what the
// calibration its first batch starts measures on, and WaitCalibration
// returns that calibration once it ends; a context that ends first ends
// the wait with its error.
func TestWaitCalibration(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(1200, hnsw.MinRealQueries, 16, 13)
	ix := newIndex(t, memStore(t, 16, vector.Cosine), &hnsw.Options{TargetRecall: 0.9, M: 4, EfConstruction: 16})
	if _, ok, err := ix.WaitCalibration(ctx); ok || err != nil {
		t.Fatalf("WaitCalibration on a new index: ok %v, %v; want none, nil", ok, err)
	}
	if err := ix.RecordQueries(ds.Queries); err != nil {
		t.Fatal(err)
	}
	// Every calibration waits at the hook until hold closes (one an
	// earlier test left running may come by too).
	hold, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	old := hnsw.SetCalibrationTruthHook(func() { once.Do(func() { close(held) }); <-hold })
	defer hnsw.SetCalibrationTruthHook(old)
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	<-held // the calibration the batch started is running
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := ix.WaitCalibration(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitCalibration while one runs, context ending first: %v, want DeadlineExceeded", err)
	}
	close(hold)
	c, ok, err := ix.WaitCalibration(ctx)
	if err != nil || !ok {
		t.Fatalf("WaitCalibration: ok %v, %v", ok, err)
	}
	if c.Len != len(ds.Base) || c.Source != hnsw.SourceQueries || c.RealQueries != len(ds.Queries) {
		t.Errorf("calibration after the first batch = %+v, want one of %d vectors on the %d recorded queries", c, len(ds.Base), len(ds.Queries))
	}
}

// TestCalibratePaced: a paced calibration measures what an unpaced one
// does on the same sample (it only rests between its steps), and refuses
// what Calibrate refuses.
func TestCalibratePaced(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	sample := ds.Queries[:300]
	fast, err := ix.Calibrate(ctx, sample)
	if err != nil {
		t.Fatal(err)
	}
	paced, err := ix.CalibratePaced(ctx, sample)
	if err != nil {
		t.Fatal(err)
	}
	if paced.Ef != fast.Ef || paced.Recall != fast.Recall || paced.Exact != fast.Exact || paced.Source != hnsw.SourceCaller {
		t.Errorf("paced calibration %+v, unpaced %+v: want the same measurement", paced, fast)
	}
	if _, err := ix.CalibratePaced(ctx, []vector.Vector{ds.Queries[0][:2]}); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("paced calibration on a short query = %v, want ErrDimensionMismatch", err)
	}
}

// TestSetBuild: hnswseam.SetBuild changes the workers and the progress report of
// the inserts that follow, 0 workers meaning every core.
func TestSetBuild(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(600, 0, 16, 12)
	ix := newIndex(t, memStore(t, 16, vector.Cosine), &hnsw.Options{Workers: 1})
	reports := 0
	hnswseam.SetBuild(ix, 3, func(done, total int) { reports++ })
	if o := ix.Options(); o.Workers != 3 || o.Progress == nil {
		t.Fatalf("after SetBuild(3, f): Workers %d, progress set %v", o.Workers, o.Progress != nil)
	}
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	if reports == 0 {
		t.Error("no progress reported by AddBatch after SetBuild")
	}
	hnswseam.SetBuild(ix, 0, nil)
	if o := ix.Options(); o.Workers != runtime.GOMAXPROCS(0) || o.Progress != nil {
		t.Errorf("after SetBuild(0, nil): Workers %d, progress set %v", o.Workers, o.Progress != nil)
	}
}
