package hnsw_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// hardIndex builds a deliberately weak graph (M=4, efConstruction=20) over
// uniform 32-d data, so that recall@10 moves over a wide range of ef and a
// target decides something.
func hardIndex(t *testing.T, n int, o hnsw.Options) (*hnsw.Index, *recall.Dataset) {
	t.Helper()
	ds := recall.Uniform(n, 800, 16, 7)
	o.M, o.EfConstruction = 4, 16
	ix := newIndex(t, memStore(t, 16, vector.Cosine), &o)
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	ix.WaitIdle()
	return ix, ds
}

// measured returns the recall@10 of plain Searches for queries, against
// exact ground truth.
func measured(t *testing.T, ix *hnsw.Index, ds *recall.Dataset, queries []vector.Vector) float64 {
	t.Helper()
	sub := &recall.Dataset{Dim: ds.Dim, Base: ds.Base, Queries: queries, Metric: ds.Metric}
	truth, err := recall.GroundTruth(context.Background(), sub, 10)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for i, q := range queries {
		got, err := ix.Search(context.Background(), q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum += recall.At(got, truth[i], 10)
	}
	return sum / float64(len(queries))
}

func TestTargetRecallOptions(t *testing.T) {
	s := memStore(t, 4, vector.Cosine)
	for _, o := range []hnsw.Options{
		{TargetRecall: -0.1}, {TargetRecall: 1.01}, {TargetRecall: math.NaN()},
		{TargetRecall: 0.9, EfSearch: 32}, {TargetRecall: 0.9, TargetK: -1},
	} {
		if _, err := hnsw.New(s, &o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
	ix := newIndex(t, s, nil)
	if _, err := ix.Calibrate(context.Background(), nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Calibrate without a target = %v, want ErrInvalidOptions", err)
	}
	ix = newIndex(t, s, &hnsw.Options{TargetRecall: 0.9})
	if _, err := ix.Calibrate(context.Background(), []vector.Vector{{1, 2}}); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("Calibrate with a 2-d query = %v, want ErrDimensionMismatch", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big, _ := hardIndex(t, 2000, hnsw.Options{TargetRecall: 0.9})
	if _, err := big.Calibrate(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Calibrate with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestTargetRecallSmall: below MinCalibrationLen a target means exact
// search, and the calibration says so.
func TestTargetRecallSmall(t *testing.T) {
	ix, ds := hardIndex(t, 400, hnsw.Options{TargetRecall: 0.95})
	if got := measured(t, ix, ds, ds.Queries[:50]); got != 1 {
		t.Errorf("recall of a small index with a target = %.4f, want 1 (exact)", got)
	}
	c, err := ix.Calibrate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Exact || c.Reason == "" || c.Len != 400 {
		t.Errorf("calibration of 400 vectors = %+v, want Exact with a reason", c)
	}
}

// TestTargetRecallMet: the chosen beam meets the target on queries the
// calibration did not see, grows with the target, and is within 5% of the
// smallest that does (a beam 5% narrower misses on the calibration sample).
func TestTargetRecallMet(t *testing.T) {
	ctx := context.Background()
	prev := 0
	targets := []float64{0.8, 0.9, 0.97}
	if raceEnabled {
		// One target under -race (the longest test there): the others
		// run the same code on other data, and whether the beam
		// grows with the target is no question for the race detector;
		// the plain run checks all three.
		targets = []float64{0.9}
	}
	for _, target := range targets {
		ix, ds := hardIndex(t, 4000, hnsw.Options{TargetRecall: target})
		c, err := ix.Calibrate(ctx, ds.Queries[:400])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("target %.2f: %+v", target, c)
		if c.Exact || c.Source != hnsw.SourceCaller || c.Queries != 400 || !meets(c.Recall, c.StdErr, target) || c.StdErr <= 0 {
			t.Fatalf("target %.2f: calibration %+v", target, c)
		}
		if c.Ef < prev {
			t.Errorf("target %.2f chose ef %d, below the %d of a lower target", target, c.Ef, prev)
		}
		prev = c.Ef
		// 400 queries of this weak graph measure recall to about ±0.015.
		if got := measured(t, ix, ds, ds.Queries[400:]); got < target-0.03 {
			t.Errorf("target %.2f: recall on unseen queries %.4f", target, got)
		}
		// A beam 5% narrower than the chosen one misses the target on the
		// sample, or its bound does.
		narrower := c.Ef - max(1, c.Ef*5/100)
		sub := &recall.Dataset{Dim: ds.Dim, Base: ds.Base, Queries: ds.Queries[:400], Metric: ds.Metric}
		truth, _ := recall.GroundTruth(ctx, sub, 10)
		if m, se := meanErr(recallsAt(t, ix, sub.Queries, truth, narrower), 10); c.Ef > 10 && meets(m, se, target) {
			t.Errorf("target %.2f: ef %d already reaches %.4f ± %.4f", target, narrower, m, se)
		}
	}
}

// meets reports whether a recall estimate m with standard error se meets
// target as a calibration's choice must: m reaches it, and m less 1.645 se
// reaches it less hnsw.RecallSlack.
func meets(m, se, target float64) bool {
	return m >= target && m-1.645*se >= target-hnsw.RecallSlack
}

// recallsAt returns the recall@10 of each of queries searched at ef,
// against truth.
func recallsAt(t *testing.T, ix *hnsw.Index, queries []vector.Vector, truth [][]int32, ef int) []float64 {
	t.Helper()
	rs := make([]float64, len(queries))
	for i, q := range queries {
		got, err := ix.SearchWith(context.Background(), q, 10, &hnsw.SearchOptions{Ef: ef})
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = recall.At(got, truth[i], 10)
	}
	return rs
}

// meanErr returns the mean of the per-query recalls@k rs and its standard
// error, the per-query variance floored at k draws' p(1−p)/k.
func meanErr(rs []float64, k int) (mean, se float64) {
	for _, r := range rs {
		mean += r
	}
	mean /= float64(len(rs))
	v := 0.0
	for _, r := range rs {
		v += (r - mean) * (r - mean)
	}
	v = max(v/float64(len(rs)-1), mean*(1-mean)/float64(k))
	return mean, math.Sqrt(v / float64(len(rs)))
}

// TestTargetRecallFewQueries: a calibration on a few dozen queries reports
// the wider error of its estimate, and the beam it chooses meets the
// target less RecallSlack at that estimate's 95% bound, not only the
// target at the estimate.
func TestTargetRecallFewQueries(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 4000, hnsw.Options{TargetRecall: 0.85})
	many, err := ix.Calibrate(ctx, ds.Queries[:400])
	if err != nil {
		t.Fatal(err)
	}
	few, err := ix.Calibrate(ctx, ds.Queries[400:430])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("400 queries: %+v", many)
	t.Logf("30 queries: %+v", few)
	if few.Exact || few.Queries != 30 || !meets(few.Recall, few.StdErr, 0.85) {
		t.Fatalf("calibration on 30 queries: %+v", few)
	}
	// 30 queries measure with about √(400/30) ≈ 3.7 times the error of 400.
	if few.StdErr < 2*many.StdErr {
		t.Errorf("standard error on 30 queries %.4f, on 400 %.4f: want about 3.7 times", few.StdErr, many.StdErr)
	}
	// The bound decided: a narrower beam reaches the target on the 30
	// queries, but not the bound.
	sub := &recall.Dataset{Dim: ds.Dim, Base: ds.Base, Queries: ds.Queries[400:430], Metric: ds.Metric}
	truth, _ := recall.GroundTruth(ctx, sub, 10)
	reached := 0
	for ef := 10; ef < few.Ef && reached == 0; ef++ {
		if m, se := meanErr(recallsAt(t, ix, sub.Queries, truth, ef), 10); m >= 0.85 {
			reached = ef
			if meets(m, se, 0.85) && ef < few.Ef*49/50 {
				t.Errorf("ef %d meets the target and its bound on the 30 queries (%.4f ± %.4f), below the ef %d chosen", ef, m, se, few.Ef)
			}
		}
	}
	if reached == 0 {
		t.Errorf("no beam narrower than the ef %d chosen reaches the target on the 30 queries: the bound decided nothing", few.Ef)
	}
}

// TestTargetRecallScanCheaper: when the beam width that meets the target
// makes each query score half of the vectors or more, the calibration
// chooses exact search, which then answers exactly.
func TestTargetRecallScanCheaper(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(1000, 400, 64, 3)
	ix := newIndex(t, memStore(t, 64, vector.Cosine), &hnsw.Options{M: 4, EfConstruction: 16, TargetRecall: 0.999})
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	c, err := ix.Calibrate(ctx, ds.Queries)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Exact || c.Recall != 1 || !strings.Contains(c.Reason, "an exact scan costs less") {
		t.Fatalf("calibration %+v, want exact search because the scan costs less", c)
	}
	if got := measured(t, ix, ds, ds.Queries); got != 1 {
		t.Errorf("recall after choosing exact search = %.4f, want 1", got)
	}
}

// TestTargetRecallBackground: the index calibrates by itself once it is
// large enough, first on held-out vectors, then on the queries it answers
// once it has a sample of them, and again when it has doubled; queries and
// writes run meanwhile.
func TestTargetRecallBackground(t *testing.T) {
	ctx := context.Background()
	ix, ds := hardIndex(t, 1500, hnsw.Options{TargetRecall: 0.9})
	c, ok := ix.Calibration()
	if !ok || c.Source != hnsw.SourceHeldOut || c.Len != 1500 || c.Exact {
		t.Fatalf("first calibration = %+v, %v; want held-out over 1500", c, ok)
	}
	search := func() {
		for _, q := range ds.Queries[:450] {
			if _, err := ix.Search(ctx, q, 10, nil); err != nil {
				t.Error(err)
				return
			}
		}
	}
	search()
	ix.WaitIdle()
	if c, _ = ix.Calibration(); c.Source != hnsw.SourceQueries || c.Queries < 400 || c.Queries > 450 || c.Recall < 0.9 {
		t.Fatalf("calibration after 450 queries = %+v, want one on the queries", c)
	}
	more := recall.Uniform(1600, 0, 16, 8).Base
	var wg sync.WaitGroup
	wg.Go(search)
	wg.Go(func() {
		for i, v := range more {
			if err := ix.Add(ctx, vector.ID(10000+i), v); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	ix.WaitIdle()
	c, _ = ix.Calibration()
	if c.Len < 3000 || c.Exact || c.Recall < 0.9 {
		t.Fatalf("calibration after doubling = %+v", c)
	}
	// Deleting more than half shrinks it below the last calibration's
	// half: it recalibrates again.
	for i := range 2000 {
		id := vector.ID(i)
		if i >= 1500 {
			id = vector.ID(10000 + i - 1500)
		}
		if err := ix.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ix.WaitIdle()
	if c2, _ := ix.Calibration(); c2.Len >= c.Len {
		t.Errorf("no recalibration after deletes: %+v", c2)
	}
}

// TestTargetRecallReload: a saved graph loads into an index with a target,
// which keeps its target and calibrates the loaded graph.
func TestTargetRecallReload(t *testing.T) {
	ix, _ := hardIndex(t, 1200, hnsw.Options{TargetRecall: 0.9})
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	again := newIndex(t, ix.Store(), &hnsw.Options{TargetRecall: 0.95, TargetK: 5})
	if _, err := again.ReadFrom(&buf); err != nil {
		t.Fatal(err)
	}
	again.WaitIdle()
	c, ok := again.Calibration()
	if o := again.Options(); o.TargetRecall != 0.95 || o.TargetK != 5 {
		t.Errorf("options after ReadFrom: %+v", o)
	}
	if !ok || c.Target != 0.95 || c.K != 5 || c.Len != 1200 || c.Recall < 0.95 {
		t.Errorf("calibration after ReadFrom = %+v, %v", c, ok)
	}
}
