// This file holds the target-recall report (--target-recall): HNSW given a
// recall target instead of an ef, as it calibrates itself on the queries
// it answers, beside the best fixed ef a sweep finds for the same target.

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func init() {
	var list string
	flagGroups = append(flagGroups, flagGroup{
		usage: `  --target-recall 0.9,0.95,0.99
                    recall targets: HNSW given each target (hnsw.Options
                    TargetRecall) calibrates on the first half of the
                    queries and is measured on the second half, beside the
                    smallest fixed ef reaching the same target there
                    (uniform data, 10,000/50,000/100,000 items)
`,
		define: func(fs *flag.FlagSet, c *config) { fs.StringVar(&list, "target-recall", "", "") },
		check: func(c *config, set map[string]bool) error {
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

// halves splits ds's queries and truth: the first half calibrates, the
// second is measured.
func halves(ds *recall.Dataset, truth [][]int32) (calib []vector.Vector, eval *recall.Dataset, evalTruth [][]int32) {
	h := len(ds.Queries) / 2
	e := *ds
	e.Queries = ds.Queries[h:]
	return ds.Queries[:h], &e, truth[h:]
}

// targetReport builds one HNSW graph per data set and, for each target,
// loads it into an index with that TargetRecall, lets it calibrate on the
// first half of the queries, and measures it on the second half beside
// the smallest ef of targetLadder that reaches the target there. The two
// are timed alternately, three times each, and the medians reported.
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
		for _, target := range b.c.targets {
			if err := b.targetRows(ctx, t, ds, eval, evalTruth, calib, store, graph.Bytes(), l.p, target); err != nil {
				t.close()
				store.Close()
				return err
			}
		}
		t.close()
		store.Close()
	}
	return nil
}

// targetRows measures one target: the calibrated index and the sweep's
// best fixed ef, as two rows of t.
func (b *bench) targetRows(ctx context.Context, t *table, ds, eval *recall.Dataset, evalTruth [][]int32,
	calib []vector.Vector, store vector.Store, graph []byte, p params, target float64) error {
	k := b.c.k
	hx, err := hnsw.New(store, &hnsw.Options{TargetRecall: target, TargetK: k, Workers: b.c.threads})
	if err != nil {
		return err
	}
	if _, err := hx.ReadFrom(bytes.NewReader(graph)); err != nil {
		return err
	}
	// The first half of the queries, answered as a user's would be, is
	// the sample the index recalibrates on.
	cb := b.p.begin(fmt.Sprintf("calibrate %.3g %s", target, ds.Name))
	for _, q := range calib {
		if _, err := hx.Search(ctx, q, k, nil); err != nil {
			b.p.end()
			return err
		}
	}
	cal, err := hx.Calibrate(ctx, nil)
	cb(1, 1)
	b.p.end()
	if err != nil {
		return err
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
	best := 0
	cb = b.p.begin(fmt.Sprintf("sweep %.3g %s", target, ds.Name))
	for _, ef := range targetLadder {
		if ef < k || ef > len(ds.Base) {
			continue
		}
		st, err := concurrent(ctx, eval, evalTruth, k, 1, fixed(ef))
		if err != nil {
			b.p.end()
			return err
		}
		if st.recall >= target {
			best = ef
			break
		}
	}
	b.p.end()
	var autoRuns, bestRuns []concurrentStats
	for range 3 {
		st, err := concurrent(ctx, eval, evalTruth, k, 1, auto)
		if err != nil {
			return err
		}
		autoRuns = append(autoRuns, st)
		if best > 0 {
			st, err := concurrent(ctx, eval, evalTruth, k, 1, fixed(best))
			if err != nil {
				return err
			}
			bestRuns = append(bestRuns, st)
		}
	}
	chosen, chosenEf := "hnsw", cal.Ef
	if cal.Exact {
		chosen, chosenEf = "exact", 0
	}
	calNote := fmt.Sprintf("%s, %d queries, %.4f at ef %d, %s", cal.Source, cal.Queries, cal.Recall, cal.Ef, fmtDur(cal.Took))
	if cal.Exact {
		calNote = fmt.Sprintf("%s, %d queries: %s, %s", cal.Source, cal.Queries, cal.Reason, fmtDur(cal.Took))
	}
	a := medianStats(autoRuns)
	ratio := "–"
	if best > 0 {
		ratio = fmt.Sprintf("%.2f×", a.qps()/medianStats(bestRuns).qps())
	}
	b.targetRow(t, ds, eval, p, target, "target "+chosen, chosen, chosenEf, a, ratio, calNote)
	if best > 0 {
		b.targetRow(t, ds, eval, p, target, "best fixed ef", "hnsw", best, medianStats(bestRuns), "1.00×", "")
	} else {
		t.row(fmt.Sprintf("%.3g", target), "best fixed ef", "–", "no ef of the ladder reaches it", "", "", "", "", "")
	}
	return nil
}

// targetRow prints and records one row of the target report.
func (b *bench) targetRow(t *table, ds, eval *recall.Dataset, p params, target float64, setting, index string, ef int,
	st concurrentStats, ratio, calNote string) {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	p.Ef = ef
	efText := fmt.Sprint(ef)
	if index == "exact" {
		p.Ef, efText = 0, "–"
	}
	b.add(result{
		Dataset: ds.Name, N: len(ds.Base), Dim: ds.Dim, Metric: ds.Metric.String(),
		Store: "memory", Index: "hnsw", Params: p, K: b.c.k, Recall: st.recall,
		P50us: us(st.at(0.5)), P95us: us(st.at(0.95)), P99us: us(st.at(0.99)), QPS: st.qps(),
		Report: "target", Queries: st.queries, MeanUs: us(st.mean()), Recall1: st.recall1, Threads: 1,
		TargetRecall: target, ChosenIndex: index, ChosenEf: p.Ef,
	})
	t.row(fmt.Sprintf("%.3g", target), setting, efText, fmtRecall(st.recall), fmtDur(st.at(0.5)), fmtDur(st.at(0.95)),
		fmtQPS(st.qps()), ratio, calNote)
}

// medianStats returns the run of median QPS.
func medianStats(runs []concurrentStats) concurrentStats {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b concurrentStats) int {
		switch {
		case a.qps() < b.qps():
			return -1
		case a.qps() > b.qps():
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}
