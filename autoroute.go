// This file holds the choice an Auto collection with a recall target makes
// between exact search, the approximate flat scan and its HNSW graph: by
// measuring them, on this machine, at the target.

package cairn

import (
	"context"
	"slices"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/hnswseam"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
)

// routeProbes is the number of queries each contender is timed on.
const routeProbes = 64

// route is the verdict of chooseRoute: the kind of index that meets the
// target fastest, and that index (the graph given, or the scan built for
// the measurement).
type route struct {
	kind IndexKind
	idx  vector.Index
}

// Route is an Auto collection's latest measurement of the ways to its
// recall target (the exact scan, the approximate scan and its graph), as
// [IndexInfo] reports it. A snapshot value.
//
// The collection measures when it first reaches its AutoThreshold (on the
// path of the write that reached it) and on reopen; while a scan wins, it
// measures again in the background, beside queries and writes, when it has
// doubled (2 × Len), and once a scan that won on held-out vectors has answered
// [hnsw.MinRealQueries] distinct queries. It measures on the queries it
// answered, if it has kept that many (queries with a filter, or in keyword
// or hybrid mode, are not kept), else on its own vectors held out, which on
// real embeddings read lower recall than real queries and so favour the
// scans. A background measurement builds its graph with one worker that
// rests as long as it works, about half of one core: seconds at 20,000
// items of 128 dimensions, minutes at 100,000 of 768; the scan answers
// meanwhile, and the writes made during it are added to the graph if it
// wins. A measurement that fails (a store error) keeps the queries it took
// for the next, which waits 10 seconds, twice as long after each failure in
// a row, up to 10 minutes.
type Route struct {
	// Index is the way that met the target fastest: Flat, QFlat or HNSW.
	Index IndexKind
	// Len is the number of items measured.
	Len int
	// Queries is how many distinct recorded queries the measurement used:
	// the graph's calibration measured on them (topped up with held-out
	// vectors below hnsw.MinRealQueries), and the ways were timed on them.
	// 0 when it measured on the collection's own vectors alone.
	Queries int
}

// measuredRoute is a Route as the collection keeps it: with next, the size
// at which a scan that won is measured against the graph again (0 once
// the graph has won).
type measuredRoute struct {
	Route
	next int
}

// onQueries reports whether r was measured on enough real queries that
// more of them would not measure better.
func (r *measuredRoute) onQueries() bool { return r != nil && r.Queries >= hnsw.MinRealQueries }

// chooseRouteFunc is chooseRoute, replaced by tests of the routing around
// it.
var chooseRouteFunc = chooseRoute

// chooseRoute takes the calibration of the freshly built graph g of an
// Auto collection with a recall target, builds the approximate flat scan
// over the same store, and times each way that meets the target against
// the exact scan on a sample of queries, alternating: the recorded queries
// given (real ones the collection answered, which were recorded into g
// before its build), topped up with the collection's own vectors. The
// graph meets the target if its calibration chose a beam width (it
// calibrated on the recorded queries, with held-out vectors if they are
// too few); the approximate scan if its recall@K on the probes (each
// stored vector's own id left out) reaches the target. It returns the
// fastest. ids are the collection's ids, which g and st hold while it
// runs. A paced measurement, for one that runs beside queries, calibrates
// resting as long as it works (hnswseam.CalibratePaced) if g has not.
func chooseRoute(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID, qo *qflat.Options, recorded [][]float32, paced bool) (route, error) {
	cal, err := buildCalibration(ctx, g, len(ids), len(recorded), paced)
	if err != nil {
		return route{}, err
	}
	k := g.Options().TargetK
	var probes []vector.Vector
	var self []vector.ID // 0, never a collection's id, for a recorded query
	for _, q := range recorded[:min(len(recorded), routeProbes)] {
		probes, self = append(probes, q), append(self, 0)
	}
	for i := 0; i < len(ids) && len(probes) < routeProbes; i += max(1, len(ids)/routeProbes) {
		v, err := st.Get(ids[i])
		if err != nil {
			return route{}, err
		}
		probes, self = append(probes, v), append(self, ids[i])
	}
	ex := flat.New(st)
	contenders := []*contender{{kind: Flat, idx: ex, search: func(q vector.Vector) ([]vector.Result, error) { return ex.Search(ctx, q, k+1, nil) }}}
	if !cal.Exact {
		// An explicit ef keeps the probes out of the graph's sample of
		// real queries.
		contenders = append(contenders, &contender{kind: HNSW, idx: g, search: func(q vector.Vector) ([]vector.Result, error) {
			return g.SearchWith(ctx, q, k+1, &hnsw.SearchOptions{Ef: max(cal.Ef, k+1)})
		}})
	}
	qf, err := qflat.New(st, qo)
	if err != nil {
		return route{}, err
	}
	if err := qf.Track(ctx, ids); err != nil {
		return route{}, err
	}
	contenders = append(contenders, &contender{kind: QFlat, idx: qf, search: func(q vector.Vector) ([]vector.Result, error) { return qf.Search(ctx, q, k+1, nil) }})

	total := 0
	for i, q := range probes {
		var truth []vector.ID
		for _, ct := range contenders {
			t0 := time.Now()
			res, err := ct.search(q)
			ct.times = append(ct.times, time.Since(t0))
			if err != nil {
				return route{}, err
			}
			got := neighboursExcept(res, self[i], k)
			if ct.kind == Flat {
				truth = got
				total += len(truth)
			}
			for _, id := range got {
				if slices.Contains(truth, id) {
					ct.hits++
				}
			}
		}
	}
	best := contenders[0] // the exact scan always meets the target
	for _, ct := range contenders[1:] {
		// The graph's recall was measured by its calibration; the scan's
		// is measured here.
		if ct.kind == QFlat && total > 0 && float64(ct.hits)/float64(total) < g.Options().TargetRecall {
			continue
		}
		if median(ct.times) < median(best.times) {
			best = ct
		}
	}
	return route{kind: best.kind, idx: best.idx}, nil
}

// buildCalibration returns the calibration of the graph g of n vectors
// with recorded queries in its sample: the one its build (or load) ended
// with, once it ends, if it measured the graph at its size on those
// queries, or else a new one, paced or not.
func buildCalibration(ctx context.Context, g *hnsw.Index, n, recorded int, paced bool) (hnsw.Calibration, error) {
	cal, ok, err := g.WaitCalibration(ctx)
	if err != nil {
		return hnsw.Calibration{}, err
	}
	if ok && cal.Len == n && cal.RealQueries >= recorded && cal.Source != hnsw.SourceCaller {
		return cal, nil
	}
	if paced {
		if err := hnswseam.CalibratePaced(ctx, g); err != nil {
			return hnsw.Calibration{}, err
		}
		cal, _ := g.Calibration()
		return cal, nil
	}
	return g.Calibrate(ctx, nil)
}

// contender is one index chooseRoute measures: how it searches, its
// latency on each probe, and how many of the exact neighbours it found.
type contender struct {
	kind   IndexKind
	idx    vector.Index
	search func(q vector.Vector) ([]vector.Result, error)
	times  []time.Duration
	hits   int
}

// neighboursExcept returns the ids of res other than self, at most k of
// them.
func neighboursExcept(res []vector.Result, self vector.ID, k int) []vector.ID {
	out := make([]vector.ID, 0, k)
	for _, r := range res {
		if r.ID != self && len(out) < k {
			out = append(out, r.ID)
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
