package route

import (
	"context"
	"slices"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/hnswseam"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// probes is the number of queries each contender is timed on.
const probes = 64

// Choose takes the calibration of the freshly built graph g of an Auto
// collection with a recall target, builds the approximate flat scan over
// the same store, and times each way that meets the target against the
// exact scan on a sample of queries, alternating: the recorded queries
// given (real ones the collection answered, which were recorded into g
// before its build), topped up with the collection's own vectors. The
// graph meets the target if its calibration chose a beam width (it
// calibrated on the recorded queries, with held-out vectors if they are
// too few); the approximate scan if its recall@K on the probes (each
// stored vector's own id left out) reaches the target. It returns the
// fastest. ids are the collection's ids, which g and st hold while it
// runs. A paced measurement, for one that runs beside queries, calibrates
// resting as long as it works (hnswseam.CalibratePaced) if g has not.
func Choose(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID, qo *qflat.Options, recorded [][]float32, paced bool) (Verdict, error) {
	cal, err := Calibration(ctx, g, len(ids), len(recorded), paced)
	if err != nil {
		return Verdict{}, err
	}
	k := g.Options().TargetK
	var qs []vector.Vector
	var self []vector.ID // 0, never a collection's id, for a recorded query
	for _, q := range recorded[:min(len(recorded), probes)] {
		qs, self = append(qs, q), append(self, 0)
	}
	for i := 0; i < len(ids) && len(qs) < probes; i += max(1, len(ids)/probes) {
		v, err := st.Get(ids[i])
		if err != nil {
			return Verdict{}, err
		}
		qs, self = append(qs, v), append(self, ids[i])
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
	// The scan of codes takes at most quant.MaxDim components; beyond,
	// it is no contender (qflat.New would refuse the store, and so every
	// measurement, and the collection would build its graph again at
	// each write).
	if st.Dim() <= quant.MaxDim {
		qf, err := qflat.New(st, qo)
		if err != nil {
			return Verdict{}, err
		}
		if err := qf.Track(ctx, ids); err != nil {
			return Verdict{}, err
		}
		contenders = append(contenders, &contender{kind: QFlat, idx: qf, search: func(q vector.Vector) ([]vector.Result, error) { return qf.Search(ctx, q, k+1, nil) }})
	}

	total := 0
	for i, q := range qs {
		var truth []vector.ID
		for _, ct := range contenders {
			t0 := time.Now()
			res, err := ct.search(q)
			ct.times = append(ct.times, time.Since(t0))
			if err != nil {
				return Verdict{}, err
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
	return Verdict{Kind: best.kind, Index: best.idx}, nil
}

// Calibration returns the calibration of the graph g of n vectors with
// recorded queries in its sample: the one its build (or load) ended with,
// once it ends, if it measured the graph at its size on those queries, or
// else a new one, paced or not.
func Calibration(ctx context.Context, g *hnsw.Index, n, recorded int, paced bool) (hnsw.Calibration, error) {
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

// contender is one index Choose measures: how it searches, its latency on
// each probe, and how many of the exact neighbours it found.
type contender struct {
	kind   Kind
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

// median returns the middle of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
