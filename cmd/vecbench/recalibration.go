// This file holds the recalibration part of the target-recall report:
// query latency while an index recalibrates in the background, beside the
// latency with no calibration running, and what a calibration allocates.

package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// recalibrationReport loads graph into a fresh index with the recall
// target, which starts a background calibration on held-out vectors, and
// times queries at beam width ef while it runs and then with none running;
// it then feeds the index a full sample of real queries, which starts a
// second background calibration, and times both phases again. It ends
// with one calibration called directly, to report what it allocates.
func (b *bench) recalibrationReport(ctx context.Context, ds, eval *recall.Dataset, store vector.Store, graph []byte, target float64, ef int) error {
	k := b.c.k
	if len(ds.Base) < hnsw.MinCalibrationLen {
		return nil // an index this small never calibrates: it scores exactly
	}
	hx, err := hnsw.New(store, &hnsw.Options{TargetRecall: target, TargetK: k, Workers: b.c.threads})
	if err != nil {
		return err
	}
	// An explicit ef keeps the probes out of the index's sample of real
	// queries, so they do not start calibrations of their own.
	probe := func(i int) (time.Duration, error) {
		t0 := time.Now()
		_, err := hx.SearchWith(ctx, eval.Queries[i%len(eval.Queries)], k, &hnsw.SearchOptions{Ef: ef})
		return time.Since(t0), err
	}
	// during times probes until the calibration running ends (done
	// reports it), for at most maxProbes probes or probeTime, then waits
	// for it; quiet times as many with none running.
	during := func(done func() bool) ([]time.Duration, error) {
		var lat []time.Duration
		start := time.Now()
		for i := 0; !done() && len(lat) < maxProbes && time.Since(start) < probeTime; i++ {
			d, err := probe(i)
			if err != nil {
				return nil, err
			}
			lat = append(lat, d)
		}
		for !done() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if time.Since(start) > calibrationWait {
				return nil, fmt.Errorf("the background calibration of %s did not finish within %v", ds.Name, calibrationWait)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return lat, nil
	}
	quiet := func(n int) ([]time.Duration, error) {
		lat := make([]time.Duration, max(n, 200))
		for i := range lat {
			d, err := probe(i)
			if err != nil {
				return nil, err
			}
			lat[i] = d
		}
		return lat, nil
	}
	t := newTable(b.out, fmt.Sprintf("## Queries during a background recalibration: %s, target %.3g, ef %d, one client", ds.Name, target, ef),
		"<phase", "queries", "p50", "p95", "p95 / quiet p95", "<calibration")
	defer t.close()
	// p95 returns the 95th percentile of lat, as every report takes it.
	p95 := func(lat []time.Duration) time.Duration {
		slices.Sort(lat)
		return concurrentStats{lat: lat}.at(0.95)
	}
	row := func(phase string, lat, base []time.Duration, note string) {
		if len(lat) == 0 { // the calibration ended before a probe
			t.row(phase, "0", "–", "–", "–", note)
			return
		}
		ratio := "–"
		if base != nil {
			ratio = fmt.Sprintf("%.2f×", float64(p95(lat))/float64(p95(base)))
		}
		t.row(phase, fmtInt(len(lat)), fmtDur(concurrentStats{lat: lat}.at(0.5)), fmtDur(p95(lat)), ratio, note)
	}

	if _, err := hx.ReadFrom(bytes.NewReader(graph)); err != nil {
		return err
	}
	busy1, err := during(func() bool { _, ok := hx.Calibration(); return ok })
	if err != nil {
		return err
	}
	c1, _ := hx.Calibration()
	calm1, err := quiet(len(busy1))
	if err != nil {
		return err
	}
	row("recalibrating (held-out sample)", busy1, calm1, fmt.Sprintf("%s, %s", c1.Source, fmtDur(c1.Took)))
	row("none running", calm1, nil, "")

	// A full reservoir of real queries makes the index recalibrate on them.
	// A query asked again counts once, so past the first pass over a small
	// query set each repeat is moved a little (see jittered).
	jr := rand.New(rand.NewPCG(2, uint64(len(eval.Queries))))
	for i := range hnsw.CalibrationQueries + 1 {
		q := eval.Queries[i%len(eval.Queries)]
		if i >= len(eval.Queries) {
			q = jittered(q, jr)
		}
		if _, err := hx.Search(ctx, q, k, nil); err != nil {
			return err
		}
	}
	busy2, err := during(func() bool { c, _ := hx.Calibration(); return c.Source == hnsw.SourceQueries })
	if err != nil {
		return err
	}
	c2, _ := hx.Calibration()
	calm2, err := quiet(len(busy2))
	if err != nil {
		return err
	}
	row("recalibrating (real queries)", busy2, calm2, fmt.Sprintf("%s, %s", c2.Source, fmtDur(c2.Took)))
	row("none running", calm2, nil, "")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c3, err := hx.Calibrate(ctx, nil)
	if err != nil {
		return err
	}
	runtime.ReadMemStats(&after)
	t.row("Calibrate called directly", "–", "–", "–", "–",
		fmt.Sprintf("%s, %s, allocated %s in all (the sample itself: %s)", c3.Source, fmtDur(c3.Took),
			fmtBytes(int64(after.TotalAlloc-before.TotalAlloc)), fmtBytes(int64(c3.Queries*ds.Dim*4))))
	return nil
}

// maxProbes and probeTime bound the queries timed during one background
// calibration, which under the race detector or on a loaded machine can
// run for minutes;
// calibrationWait is how long the report waits for one to end.
const (
	maxProbes       = 20_000
	probeTime       = 10 * time.Second
	calibrationWait = 10 * time.Minute
)

// jittered returns a copy of q with each component moved by a random
// 0.1% of q's mean absolute component: another query, as near to q as
// queries on one topic are.
func jittered(q vector.Vector, r *rand.Rand) vector.Vector {
	mean := 0.0
	for _, x := range q {
		mean += math.Abs(float64(x))
	}
	mean /= float64(max(1, len(q)))
	out := make(vector.Vector, len(q))
	for i, x := range q {
		out[i] = x + float32(1e-3*mean*r.NormFloat64())
	}
	return out
}
