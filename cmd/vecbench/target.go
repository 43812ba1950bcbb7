// This file holds the target-recall report (--target-recall): HNSW given a
// recall target instead of an ef, as it calibrates itself on the queries
// it answers, beside the best fixed ef a sweep finds for the same target.

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func init() {
	var list string
	flagGroups = append(flagGroups, flagGroup{
		usage: `  --target-recall 0.9,0.95,0.99
                    recall targets: HNSW given each target (hnsw.Options
                    TargetRecall) calibrates on a random half of the
                    queries and is measured on the other half, beside the
                    smallest fixed ef reaching the same target there, the
                    exact and approximate scans and an Auto collection;
                    then query latency during background recalibrations
                    (uniform data, 10,000/50,000/100,000 items)
  --splits N        with --target-recall: also calibrate each target on
                    N other random halves of the queries, and report the
                    spread of the ef chosen, the recall reached on the
                    other half and the speed against that half's best ef
`,
		define: func(fs *flag.FlagSet, c *config) {
			fs.StringVar(&list, "target-recall", "", "")
			fs.IntVar(&c.splits, "splits", 0, "")
		},
		check: func(c *config, set map[string]bool) error {
			if c.splits < 0 || set["splits"] && !set["target-recall"] {
				return usagef("--splits: a number of splits ≥ 0, with --target-recall")
			}
			if !set["target-recall"] {
				return nil
			}
			t, err := targetList(list)
			c.targets = t
			return err
		},
		quick: func(c *config) { c.targets = []float64{0.9} },
		asked: func(c *config) bool { return len(c.targets) > 0 },
		run:   (*bench).targetReport,
	})
}

// targetList parses "0.9,0.95,0.99" into targets in (0, 1], sorted and
// without repeats.
func targetList(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0 && x <= 1) {
			return nil, usagef("--target-recall: %q is not a recall in (0, 1]", f)
		}
		out = append(out, x)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// targetLadder is the beam widths the sweep beside a target tries, finer
// than the --ef grid so that "best" is close to the true optimum.
var targetLadder = []int{10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 2048}

// halves splits ds's queries and truth at random, in two halves of the
// same distribution (a query file may be ordered, by topic or by source):
// the first half calibrates, the second is measured. The split is the same
// on every run.
func halves(ds *recall.Dataset, truth [][]int32) (calib []vector.Vector, eval *recall.Dataset, evalTruth [][]int32) {
	perm := shuffled(len(ds.Queries), 1)
	h := len(perm) / 2
	e := *ds
	e.Queries = nil
	for _, i := range perm[:h] {
		calib = append(calib, ds.Queries[i])
	}
	for _, i := range perm[h:] {
		e.Queries = append(e.Queries, ds.Queries[i])
		evalTruth = append(evalTruth, truth[i])
	}
	return calib, &e, evalTruth
}

// shuffled returns 0..n-1 in the random order of seed, the same on every
// run.
func shuffled(n int, seed uint64) []int {
	return rand.New(rand.NewPCG(seed, uint64(n))).Perm(n)
}

// ladder returns the beam widths of targetLadder from k up to n, the size
// of the data set.
func ladder(k, n int) []int {
	var out []int
	for _, ef := range targetLadder {
		if ef >= k && ef <= n {
			out = append(out, ef)
		}
	}
	return out
}

// targetReport builds one HNSW graph per data set and, for each target,
// loads it into an index with that TargetRecall, lets it calibrate on the
// first half of the queries, and measures it on the second half beside
// the smallest ef of targetLadder that reaches the target there, timed in
// turns with the other ways of targetRows (timeWays).
func (b *bench) targetReport(ctx context.Context) error {
	family := b.c.familyFor("target")
	k := b.c.k
	for _, n := range b.c.sizesFor("target") {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		calib, eval, evalTruth := halves(ds, truth)
		l, store, err := b.load(ctx, ds, "hnsw")
		if err != nil {
			return err
		}
		var graph bytes.Buffer
		if _, err := l.idx.(*hnsw.Index).WriteTo(&graph); err != nil {
			store.Close()
			return err
		}
		t := newTable(b.out, fmt.Sprintf("## Recall targets: %s, %d-d %s, k=%d, calibrated on %s queries, measured on the other %s",
			ds.Name, ds.Dim, ds.Metric, k, fmtInt(len(calib)), fmtInt(len(eval.Queries))),
			"target", "<setting", "ef", fmt.Sprintf("recall@%d", k), "p50", "p95", "QPS", "QPS / best", "<calibration")
		recalTarget, recalEf := b.c.targets[len(b.c.targets)/2], 64
		if slices.Contains(b.c.targets, 0.95) {
			recalTarget = 0.95
		}
		for _, target := range b.c.targets {
			cal, err := b.targetRows(ctx, t, ds, eval, evalTruth, calib, store, graph.Bytes(), l.p, target)
			if err != nil {
				t.close()
				store.Close()
				return err
			}
			if target == recalTarget && !cal.Exact {
				recalEf = cal.Ef
			}
		}
		t.close()
		if b.c.splits > 0 {
			if err := b.splitsReport(ctx, ds, truth, store, graph.Bytes()); err != nil {
				store.Close()
				return err
			}
		}
		err = b.recalibrationReport(ctx, ds, eval, store, graph.Bytes(), recalTarget, max(recalEf, k))
		store.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// targetRows measures one target as the rows of t: the index calibrated
// to it, the sweep's best fixed ef, the exact scan, the approximate scan
// (qflat at its defaults), an Auto collection with the target, and that
// collection at its own best fixed ef. It returns the index's calibration.
func (b *bench) targetRows(ctx context.Context, t *table, ds, eval *recall.Dataset, evalTruth [][]int32,
	calib []vector.Vector, store vector.Store, graph []byte, p params, target float64) (hnsw.Calibration, error) {
	k := b.c.k
	hx, err := hnsw.New(store, &hnsw.Options{TargetRecall: target, TargetK: k, Workers: b.c.threads})
	if err != nil {
		return hnsw.Calibration{}, err
	}
	if _, err := hx.ReadFrom(bytes.NewReader(graph)); err != nil {
		return hnsw.Calibration{}, err
	}
	// The first half of the queries, answered as a user's would be, is
	// the sample the index recalibrates on. The load starts a calibration
	// on held-out vectors: it is let finish first, or its start would
	// empty the sample partway through the half (463 of MiniLM's 500
	// calibration queries were kept).
	cb := b.p.begin(fmt.Sprintf("calibrate %.3g %s", target, ds.Name))
	if hx.Len() >= hnsw.MinCalibrationLen {
		if err := waitCalibrated(ctx, hx.Calibration); err != nil {
			b.p.end()
			return hnsw.Calibration{}, err
		}
	}
	for _, q := range calib {
		if _, err := hx.Search(ctx, q, k, nil); err != nil {
			b.p.end()
			return hnsw.Calibration{}, err
		}
	}
	// An index recalibrates in the background once it has answered
	// hnsw.CalibrationQueries queries, on those, and the rest of the half
	// then replaces some of them in its sample (MiniLM's calibration
	// measured 416 of its 500): once that calibration ends, the half is
	// recorded whole, so that the calibration below measures on all of it.
	if _, _, err := hx.WaitCalibration(ctx); err != nil {
		b.p.end()
		return hnsw.Calibration{}, err
	}
	if err := hx.RecordQueries(calib); err != nil {
		b.p.end()
		return hnsw.Calibration{}, err
	}
	cal, err := hx.Calibrate(ctx, nil)
	if err == nil {
		cal, err = settle(ctx, calib, k, hx.Search, func() (hnsw.Calibration, bool) { return hx.Calibration() }, cal)
	}
	cb(1, 1)
	b.p.end()
	if err != nil {
		return hnsw.Calibration{}, err
	}
	auto := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		return hx.Search(ctx, q, k, nil)
	}
	fixed := func(ef int) recall.SearchFunc {
		return func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
			return hx.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: ef})
		}
	}
	// The sweep: the smallest ef of the ladder reaching the target on
	// the measured half (0 if none does).
	b.p.begin(fmt.Sprintf("sweep %.3g %s", target, ds.Name))
	best, err := smallestEf(ctx, eval, evalTruth, k, len(ds.Base), target, fixed)
	b.p.end()
	if err != nil {
		return hnsw.Calibration{}, err
	}
	db, coll, err := b.autoCollection(ctx, ds, target)
	if err != nil {
		return hnsw.Calibration{}, err
	}
	defer db.Close()
	// The Auto collection answers the calibration half too, as a user's
	// queries, and settles as the index did.
	collCal := func() (hnsw.Calibration, bool) {
		info, err := coll.Info(ctx)
		if err != nil || info.Recall.Calibration == nil {
			return hnsw.Calibration{}, false
		}
		return *info.Recall.Calibration, true
	}
	collSearch := func(ctx context.Context, q vector.Vector, k int, _ *vector.SearchOptions) ([]vector.Result, error) {
		return collectionSearch(coll, nil)(ctx, q, k)
	}
	for _, q := range calib {
		if _, err := collSearch(ctx, q, k, nil); err != nil {
			return hnsw.Calibration{}, err
		}
	}
	// A scan that won on held-out vectors measures the ways again on
	// the queries it answered, in the background: its verdict is let in
	// first.
	if err := waitRouted(ctx, coll, len(calib)); err != nil {
		return hnsw.Calibration{}, err
	}
	if c, ok := collCal(); ok {
		if _, err := settle(ctx, calib, k, collSearch, collCal, c); err != nil {
			return hnsw.Calibration{}, err
		}
	}
	info, err := coll.Info(ctx)
	if err != nil {
		return hnsw.Calibration{}, err
	}
	exact := flat.New(store)
	scan := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		return exact.Search(ctx, q, k, nil)
	}
	qf, err := qflat.New(store, nil)
	if err != nil {
		return hnsw.Calibration{}, err
	}
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := qf.Track(ctx, ids); err != nil {
		return hnsw.Calibration{}, err
	}
	qscan := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		return qf.Search(ctx, q, k, nil)
	}
	// What the Auto collection's path costs on top of the index it
	// searches is told by the same index without the collection: the bare
	// graph at the beam width the collection searches with (this run's
	// graph of the same data and parameters: the collection built its
	// own), or the bare scan it chose.
	collEf := 0
	bareAtCollEf := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		return hx.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: collEf})
	}
	collWay := func() {
		collEf = 0
		if i, err := coll.Info(ctx); err == nil && i.Index == cairn.HNSW && i.Recall.Calibration != nil && !i.Recall.Calibration.Exact {
			collEf = max(i.Recall.Calibration.Ef, k)
		}
	}
	collWay()
	// The collection's own best fixed ef: the smallest of the ladder
	// reaching the target on the measured half through the collection
	// (QueryOptions.Ef), the setting its user would copy from a sweep.
	// The collection built its own graph, so it may differ from the
	// bare index's best.
	collBest := 0
	if info.Index == cairn.HNSW {
		b.p.begin(fmt.Sprintf("sweep the collection %.3g %s", target, ds.Name))
		collBest, err = smallestEf(ctx, eval, evalTruth, k, len(ds.Base), target, func(ef int) recall.SearchFunc {
			return collectionSearch(coll, &cairn.QueryOptions{Ef: ef})
		})
		b.p.end()
		if err != nil {
			return hnsw.Calibration{}, err
		}
	}
	// The index with the target, the sweep's best ef, the exact scan, the
	// Auto collection, the approximate scan, the bare graph at the
	// collection's ef and the collection at its own best fixed ef, timed
	// in turns (timeWays).
	ways := []recall.SearchFunc{auto, fixed(best), scan, collectionSearch(coll, nil), qscan, bareAtCollEf,
		collectionSearch(coll, &cairn.QueryOptions{Ef: collBest})}
	var runs [][]concurrentStats
	rounds := func() (err error) {
		runs, err = timeWays(ctx, eval, evalTruth, k, ways, func(i int) bool {
			return i == 1 && best == 0 || i == 5 && collEf == 0 || i == 6 && collBest == 0
		})
		return err
	}
	// The rounds time the steady state: if a calibration started during
	// them (the measured queries count as queries answered, and its
	// sample of recent queries holds some of them, as a deployed index's
	// would), it competed with them, and they run again once it has
	// finished. The row of the index that recalibrated says so.
	calState := func() (hnsw.Calibration, hnsw.Calibration) {
		a, _ := hx.Calibration()
		c, _ := collCal()
		return a, c
	}
	idx0, coll0 := calState()
	if err := rounds(); err != nil {
		return hnsw.Calibration{}, err
	}
	const retimed = "; recalibrated during the first timed rounds, on a sample holding measured queries; timed again after"
	idxMoved, collMoved := false, false
	if idx1, coll1 := calState(); idx1 != idx0 || coll1 != coll0 {
		idxMoved, collMoved = idx1 != idx0, coll1 != coll0
		time.Sleep(500 * time.Millisecond) // one more may still be running: let it end
		collWay()
		if err := rounds(); err != nil {
			return hnsw.Calibration{}, err
		}
	}
	chosen, chosenEf := "hnsw", cal.Ef
	if cal.Exact {
		chosen, chosenEf = "exact", 0
	}
	if c, ok := hx.Calibration(); ok {
		cal = c // the calibration the timed rounds ran with
	}
	calNote := calibrationNote(cal)
	if idxMoved {
		calNote += retimed
	}
	// The best setting is the fastest of the sweep's best ef, the exact
	// scan and the approximate scan if it meets the target.
	tq, sq, qq := medianStats(runs[0]), medianStats(runs[2]), medianStats(runs[4])
	bestQPS := sq.qps()
	if best > 0 {
		bestQPS = max(bestQPS, medianStats(runs[1]).qps())
	}
	if qq.recall >= target {
		bestQPS = max(bestQPS, qq.qps())
	}
	ratio := func(st concurrentStats) string { return fmt.Sprintf("%.2f×", st.qps()/bestQPS) }
	b.targetRow(t, ds, eval, p, target, "target "+chosen, chosen, chosenEf, tq, ratio(tq), calNote)
	if best > 0 {
		bq := medianStats(runs[1])
		b.targetRow(t, ds, eval, p, target, "best fixed ef", "hnsw", best, bq, ratio(bq), "")
	} else {
		t.row(fmt.Sprintf("%.3g", target), "best fixed ef", "–", "no ef of the ladder reaches it", "", "", "", "", "")
	}
	b.targetRow(t, ds, eval, p, target, "exact scan", "exact", 0, sq, ratio(sq), "")
	b.targetRow(t, ds, eval, p, target, "approximate scan", "qflat", 0, qq, ratio(qq), fmt.Sprintf("qflat, rescore %d", qflat.DefaultRescore))
	aq := medianStats(runs[3])
	// What the Auto collection's queries did: its calibration may have
	// changed during the runs (a background one finishing, or one on the
	// queries it answered), so the note reports the state after them.
	after, err := coll.Info(ctx)
	if err != nil {
		return hnsw.Calibration{}, err
	}
	autoIndex, autoEf, autoNote := "exact", 0, fmt.Sprintf("Auto collection: %s", after.Index)
	if r := after.Recall.Route; r != nil {
		sample := "held-out vectors"
		if r.Queries > 0 {
			sample = fmt.Sprintf("%s queries", fmtInt(r.Queries))
		}
		autoNote += fmt.Sprintf(" (routed at %s items, on %s)", fmtInt(r.Len), sample)
	}
	switch after.Index {
	case cairn.QFlat:
		autoIndex = "qflat"
	case cairn.HNSW:
		autoIndex = "hnsw"
		if c := after.Recall.Calibration; c != nil {
			autoEf = c.Ef
			if c.Exact {
				autoIndex, autoEf = "exact", 0
			}
			autoNote += fmt.Sprintf(", %s", calibrationNote(*c))
			if c0 := info.Recall.Calibration; c0 != nil && (c0.Ef != c.Ef || c0.Exact != c.Exact) {
				autoNote += fmt.Sprintf(" (before the runs: %s)", calibrationNote(*c0))
			}
		}
		if s := after.Recall.Searches; s != nil {
			autoNote += fmt.Sprintf("; %s searches through the graph, %s exact", fmtInt(int(s.Graph)), fmtInt(int(s.Exact)))
		}
	}
	if collMoved {
		autoNote += retimed
	}
	var cq concurrentStats
	if collBest > 0 {
		cq = medianStats(runs[6])
		if autoIndex == "hnsw" {
			autoNote += fmt.Sprintf("; %.2f× the collection at its best fixed ef", aq.qps()/cq.qps())
		}
	}
	autoNote += collectionShare(aq, autoIndex, collEf, runs[5], sq, qq)
	if autoIndex == "hnsw" && chosen == "hnsw" && collEf == max(chosenEf, k) {
		// The index with the target searched at the same beam width, and
		// kept the same books (its sample of real queries): the
		// difference is the collection's alone.
		autoNote += fmt.Sprintf(", %.2f× the index with the target's (the same ef)", aq.qps()/tq.qps())
	}
	b.targetRow(t, ds, eval, p, target, "Auto collection", autoIndex, autoEf, aq, ratio(aq), autoNote)
	if collBest > 0 {
		b.targetRow(t, ds, eval, p, target, "collection, best fixed ef", "hnsw", collBest, cq, ratio(cq),
			"the Auto collection queried with QueryOptions.Ef: the smallest of the ladder reaching the target on its graph")
	}
	return cal, nil
}

// smallestEf returns the smallest beam width of targetLadder, from k up to
// the data set's size n, at which search(ef) reaches target on the measured
// queries, and 0 if none does.
func smallestEf(ctx context.Context, eval *recall.Dataset, truth [][]int32, k, n int, target float64,
	search func(ef int) recall.SearchFunc) (int, error) {
	for _, ef := range ladder(k, n) {
		st, err := concurrent(ctx, eval, truth, k, 1, search(ef))
		if err != nil {
			return 0, err
		}
		if st.recall >= target {
			return ef, nil
		}
	}
	return 0, nil
}

// collectionShare says how much of the Auto collection's time (aq) is its
// own path: its QPS over that of the bare index it searches, timed in the
// same rounds — the graph at the collection's beam width ef (graph, when
// it searched one), or the exact scan (exact) or approximate scan (qq) it
// chose.
func collectionShare(aq concurrentStats, index string, ef int, graph []concurrentStats, exact, qq concurrentStats) string {
	var bare concurrentStats
	var what string
	switch {
	case index == "hnsw" && ef > 0 && len(graph) > 0:
		bare, what = medianStats(graph), fmt.Sprintf("the bare graph's at ef %d", ef)
	case index == "exact":
		bare, what = exact, "the bare exact scan's"
	case index == "qflat":
		bare, what = qq, "the bare approximate scan's"
	default:
		return ""
	}
	if bare.qps() == 0 {
		return ""
	}
	return fmt.Sprintf("; collection path: QPS %.2f× %s (p50 %s vs %s)", aq.qps()/bare.qps(), what, fmtDur(aq.at(0.5)), fmtDur(bare.at(0.5)))
}

// autoCollection loads ds's base into an in-memory Auto collection with
// the recall target, which decides between exact search and a graph by
// measuring both as it grows.
func (b *bench) autoCollection(ctx context.Context, ds *recall.Dataset, target float64) (*cairn.DB, *cairn.Collection, error) {
	db := cairn.OpenMemory(&cairn.Options{IndexWorkers: b.c.threads})
	coll, err := db.CreateCollection(ctx, "auto", cairn.CollectionConfig{
		Dim: ds.Dim, Metric: ds.Metric, Index: cairn.Auto,
		HNSW: hnsw.Options{TargetRecall: target, TargetK: b.c.k},
	})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if _, err := b.loadCollection(ctx, coll, ds, func(int) map[string]any { return nil }); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, coll, nil
}

// targetRow prints and records one row of the target report.
func (b *bench) targetRow(t *table, ds, eval *recall.Dataset, p params, target float64, setting, index string, ef int,
	st concurrentStats, ratio, calNote string) {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	p.Ef = ef
	efText := fmt.Sprint(ef)
	if index != "hnsw" {
		p.Ef, efText = 0, "–"
	}
	b.add(result{
		Dataset: ds.Name, N: len(ds.Base), Dim: ds.Dim, Metric: ds.Metric.String(),
		Store: "memory", Index: "hnsw", Params: p, K: b.c.k, Recall: st.recall,
		P50us: us(st.at(0.5)), P95us: us(st.at(0.95)), P99us: us(st.at(0.99)), QPS: st.qps(),
		Report: "target", Queries: st.queries, MeanUs: us(st.mean()), Recall1: st.recall1, Threads: 1,
		TargetRecall: target, Setting: setting, ChosenIndex: index, ChosenEf: p.Ef,
	})
	t.row(fmt.Sprintf("%.3g", target), setting, efText, fmtRecall(st.recall), fmtDur(st.at(0.5)), fmtDur(st.at(0.95)),
		fmtQPS(st.qps()), ratio, calNote)
}

// A way of the target report is timed in turns of at least turnLength,
// until it has had minTurns turns and minTimed in all: 25 turns for a
// 12 µs query, 5 for an exact scan of 100,000 × 768 (a pass over its
// queries takes seconds).
const (
	turnLength = 50 * time.Millisecond
	minTurns   = 5
	minTimed   = 1250 * time.Millisecond
)

// timeWays times ways on the measured queries in turns: each round gives
// every way still short of its time one turn (timedPasses), starting with
// another way each round, so that a change of the machine's speed over
// the run (another guest, the CPU's clock, a collection of garbage) falls
// on every way alike. When each way ran once for a quarter of a second
// in a row, two ways doing the same work, one after the other, came out
// at 0.84× and 1.10× of each other. Ways skip reports are left out. It
// returns each way's turns.
func timeWays(ctx context.Context, eval *recall.Dataset, truth [][]int32, k int,
	ways []recall.SearchFunc, skip func(int) bool) ([][]concurrentStats, error) {
	runs := make([][]concurrentStats, len(ways))
	spent := make([]time.Duration, len(ways))
	for round := 0; ; round++ {
		busy := false
		for j := range ways {
			i := (j + round) % len(ways)
			if skip(i) || len(runs[i]) >= minTurns && spent[i] >= minTimed {
				continue
			}
			busy = true
			st, err := timedPasses(ctx, eval, truth, k, ways[i], turnLength)
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], st)
			spent[i] += st.wall
		}
		if !busy {
			return runs, nil
		}
	}
}

// timedPasses runs the measured queries through search (concurrent, one
// client) as many times as it takes to last at least d, and returns the
// passes' statistics together: all latencies, the queries, the mean
// recall, and as the wall time the sum of the latencies, so that QPS is the
// inverse of the mean latency. The pass's own wall time also holds the
// wake-up of its client goroutine: on a busy 2-core machine a pass of 50
// queries of 17 µs each took 7.5 ms, and QPS ratios between ways at the
// same ef came out anywhere from 0.4× to 2.8×.
func timedPasses(ctx context.Context, eval *recall.Dataset, truth [][]int32, k int, search recall.SearchFunc, d time.Duration) (concurrentStats, error) {
	var all concurrentStats
	var rec, rec1 float64
	for pass := 0; pass == 0 || all.wall < d; pass++ {
		st, err := concurrent(ctx, eval, truth, k, 1, search)
		if err != nil {
			return all, err
		}
		all.queries += st.queries
		all.wall += st.wall
		all.lat = append(all.lat, st.lat...)
		rec += st.recall * float64(st.queries)
		rec1 += st.recall1 * float64(st.queries)
	}
	slices.Sort(all.lat)
	all.wall = 0
	for _, d := range all.lat {
		all.wall += d
	}
	all.recall, all.recall1 = rec/float64(all.queries), rec1/float64(all.queries)
	return all, nil
}

// settleWait bounds how long settle waits for a background calibration.
const settleWait = 3 * time.Minute

// settle makes sure that no calibration starts during the timed runs and
// that none sees the measured queries. An index that calibrated on
// held-out vectors, in all or in part, recalibrates in the background once
// it has answered [hnsw.CalibrationQueries] queries whose distinct ones
// measure better ([hnsw.Calibration.RecalibratesOn]): while the
// calibration half does, settle answers it again until the index has,
// and waits for the next calibration. That may be another one, started
// before by growth (an Auto collection's graph, calibrated on held-out
// vectors as a load doubled it), so it looks again at each. It returns
// the last calibration (cal if there was nothing to wait for). A half
// that would not start one leaves the index on its calibration, as a
// user's would stay with so few distinct queries.
func settle(ctx context.Context, calib []vector.Vector, k int,
	search func(context.Context, vector.Vector, int, *vector.SearchOptions) ([]vector.Result, error),
	latest func() (hnsw.Calibration, bool), cal hnsw.Calibration) (hnsw.Calibration, error) {
	deadline := time.Now().Add(settleWait)
	for cal.RecalibratesOn(len(calib)) && time.Now().Before(deadline) {
		for answered := 0; answered <= hnsw.CalibrationQueries; {
			for _, q := range calib {
				if _, err := search(ctx, q, k, nil); err != nil {
					return cal, err
				}
			}
			answered += len(calib)
		}
		var next hnsw.Calibration
		changed, err := pollUntil(ctx, deadline, func() bool {
			c, ok := latest()
			next = c
			return ok && (c.Source != cal.Source || c.Took != cal.Took || c.Len != cal.Len)
		})
		if err != nil || !changed {
			return cal, err
		}
		cal = next
	}
	return cal, nil
}

// waitRouted waits, at most calibrationWait (a background measurement
// builds a graph at half a core: minutes at 100,000 × 768), until an Auto
// collection on a scan that answered distinct queries has measured its
// ways on them at its present size (cairn.Route), if they are enough to: a
// scan that won on held-out vectors, or at a size the load has since
// doubled, is measured again in the background.
func waitRouted(ctx context.Context, coll *cairn.Collection, distinct int) error {
	if distinct < hnsw.MinRealQueries {
		return nil
	}
	_, err := pollUntil(ctx, time.Now().Add(calibrationWait), func() bool {
		info, err := coll.Info(ctx)
		if err != nil || info.Recall == nil {
			return true
		}
		// A scan that won is measured again once the collection has
		// doubled (cairn.Route).
		r := info.Recall.Route
		return r == nil || r.Index == cairn.HNSW ||
			r.Queries >= hnsw.MinRealQueries && info.Count < 2*r.Len
	})
	return err
}

// waitCalibrated waits, at most settleWait, until latest reports a
// calibration.
func waitCalibrated(ctx context.Context, latest func() (hnsw.Calibration, bool)) error {
	_, err := pollUntil(ctx, time.Now().Add(settleWait), func() bool { _, ok := latest(); return ok })
	return err
}

// pollUntil calls done every 20 ms until it reports true (and returns
// true), the deadline passes (false) or ctx ends (its error).
func pollUntil(ctx context.Context, deadline time.Time, done func() bool) (bool, error) {
	for {
		if done() {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// calibrationNote describes a calibration in a few words: its sample, and
// what it measured or why it chose exact search.
func calibrationNote(c hnsw.Calibration) string {
	if c.Exact {
		return fmt.Sprintf("%s, %d queries, %s vectors: %s, %s", c.Source, c.Queries, fmtInt(c.Len), c.Reason, fmtDur(c.Took))
	}
	return fmt.Sprintf("%s, %d queries, %s vectors, %.4f ± %.4f at ef %d, %s", c.Source, c.Queries, fmtInt(c.Len), c.Recall, c.StdErr, c.Ef, fmtDur(c.Took))
}

// medianStats returns a way's turns together: their latencies pooled (for
// the percentiles), their queries and recall, and as QPS the median of
// the turns' QPS, which one turn slowed by a preemption or a garbage
// collection does not move.
func medianStats(runs []concurrentStats) concurrentStats {
	qps := make([]float64, len(runs))
	var all concurrentStats
	var rec, rec1 float64
	for i, r := range runs {
		qps[i] = r.qps()
		all.queries += r.queries
		all.lat = append(all.lat, r.lat...)
		rec += r.recall * float64(r.queries)
		rec1 += r.recall1 * float64(r.queries)
	}
	slices.Sort(qps)
	slices.Sort(all.lat)
	all.recall, all.recall1 = rec/float64(all.queries), rec1/float64(all.queries)
	all.wall = time.Duration(float64(all.queries) / qps[len(qps)/2] * float64(time.Second))
	return all
}
