// This file holds the spread of a calibration across splits of the queries
// (--splits N, with --target-recall): how much the beam width a target's
// calibration chooses, and the recall and speed it then reaches on the
// queries it did not see, depend on which queries it happened to measure
// on. One split, as the target report's rows measure, is one draw of that.

package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// split is one split's outcome for a target: the beam width the
// calibration on one half chose (0 for exact search), its estimate of the
// recall there and that estimate's standard error, the recall reached on
// the other half, the smallest ladder ef reaching the target on that half
// (0 if none does), and the QPS at the first over that at the second; and
// the same two outcomes for the whole query file's ef (see wholeEf).
type split struct {
	ef, best int
	estimate float64
	stdErr   float64
	achieved float64
	qpsRatio float64

	wholeAchieved, wholeRatio float64
}

// splitsReport calibrates an index with each target on one random half of
// the queries after another (recorded as queries it answered), b.c.splits
// times, and reports the spread of
// what it chose and reached on the other half: the ef, the smallest ef of
// targetLadder that reaches the target on that half, the calibration's
// estimate less the recall reached, and the QPS at the ef chosen over that
// at the best one (or the exact scan, where the calibration chose it or no
// ef reaches the target), timed once per beam width on all the queries.
// graph is the report's graph of ds, as WriteTo wrote it.
func (b *bench) splitsReport(ctx context.Context, ds *recall.Dataset, truth [][]int32, store vector.Store, graph []byte) error {
	k, nq := b.c.k, len(ds.Queries)
	h := nq / 2
	t := newTable(b.out, fmt.Sprintf("## Calibration across %d random splits: %s, k=%d, calibrated on %s queries, measured on the other %s",
		b.c.splits, ds.Name, k, fmtInt(h), fmtInt(nq-h)),
		"target", "ef chosen p5 / p50 / p95", "best ef p5 / p50 / p95", "estimate − reached p50 / p95", "standard error p50",
		fmt.Sprintf("recall@%d p5 / p50", k), "splits ≥ target − 0.01", "QPS / best ef p5 / p50", "splits ≥ 0.9× best ef",
		"all queries' ef", "its splits ≥ target − 0.01, ≥ 0.9× best ef")
	defer t.close()
	// perQuery[ef][i] is query i's recall@k at ef, filled as needed.
	perQuery := map[int][]float64{}
	for _, target := range b.c.targets {
		hx, err := hnsw.New(store, &hnsw.Options{TargetRecall: target, TargetK: k, Workers: b.c.threads})
		if err != nil {
			return err
		}
		if _, err := hx.ReadFrom(bytes.NewReader(graph)); err != nil {
			return err
		}
		if _, _, err := hx.WaitCalibration(ctx); err != nil {
			return err
		}
		at := func(ef int) ([]float64, error) {
			if r, ok := perQuery[ef]; ok {
				return r, nil
			}
			r := make([]float64, nq)
			for i, q := range ds.Queries {
				res, err := hx.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: ef})
				if err != nil {
					return nil, err
				}
				r[i] = recall.At(res, truth[i], k)
			}
			perQuery[ef] = r
			return r, nil
		}
		mean := func(ef int, half []int) (float64, error) {
			if ef == 0 {
				return 1, nil
			}
			r, err := at(ef)
			if err != nil {
				return 0, err
			}
			sum := 0.0
			for _, i := range half {
				sum += r[i]
			}
			return sum / float64(len(half)), nil
		}
		all := make([]int, nq)
		for i := range all {
			all[i] = i
		}
		whole, err := wholeEf(target, k, len(ds.Base), func(ef int) (float64, error) { return mean(ef, all) })
		if err != nil {
			return err
		}
		p := b.p.begin(fmt.Sprintf("splits %.3g %s", target, ds.Name))
		out := make([]split, b.c.splits)
		for s := range out {
			// Seeds apart from the target report's own split (halves).
			perm := shuffled(nq, uint64(s)+2)
			sample := make([]vector.Vector, h)
			for i, j := range perm[:h] {
				sample[i] = ds.Queries[j]
			}
			// The half as the queries the index answered: its sample is
			// then what it would take, topped up with held-out vectors
			// below hnsw.MinRealQueries, as the report's rows calibrate.
			if err := hx.RecordQueries(sample); err != nil {
				b.p.end()
				return err
			}
			cal, err := hx.Calibrate(ctx, nil)
			if err != nil {
				b.p.end()
				return err
			}
			sp := split{estimate: cal.Recall, stdErr: cal.StdErr}
			if !cal.Exact {
				sp.ef = max(cal.Ef, k)
			}
			if sp.achieved, err = mean(sp.ef, perm[h:]); err != nil {
				b.p.end()
				return err
			}
			if sp.wholeAchieved, err = mean(whole, perm[h:]); err != nil {
				b.p.end()
				return err
			}
			for _, ef := range ladder(k, len(ds.Base)) {
				r, err := mean(ef, perm[h:])
				if err != nil {
					b.p.end()
					return err
				}
				if r >= target {
					sp.best = ef
					break
				}
			}
			out[s] = sp
			p(s+1, len(out))
		}
		b.p.end()
		if err := b.splitSpeeds(ctx, ds, truth, hx, store, out, whole); err != nil {
			return err
		}
		t.row(splitCells(target, out, whole)...)
	}
	return nil
}

// wholeEf is the smallest beam width whose mean recall over all the
// queries, as recallAt gives it, reaches target: the ef a calibration
// would choose if it measured on the whole query file, the half each
// split is measured on included, with no error of its own to allow for.
// It is 0 (exact search) if no ef of the ladder up to n reaches target.
// Beside the calibrations of the splits, it shows how much of their
// spread on the other half is that half's own: the best a calibration
// that sees only queries of the same kind can do.
func wholeEf(target float64, k, n int, recallAt func(ef int) (float64, error)) (int, error) {
	lo := k - 1 // the widest beam known to fall short
	for _, ef := range ladder(k, n) {
		r, err := recallAt(ef)
		if err != nil {
			return 0, err
		}
		if r < target {
			lo = ef
			continue
		}
		// ef reaches it and lo does not: bisect between them, as the
		// calibration does (recall rises with ef, but for noise).
		hi := ef
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if r, err = recallAt(mid); err != nil {
				return 0, err
			}
			if r >= target {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi, nil
	}
	return 0, nil
}

// splitSpeeds times, in turns, each beam width the splits chose or found
// best and the whole query file's ef (and the exact scan, if one needs
// it) on all the queries, and sets each split's QPS at its chosen ef, and
// at whole, over that at its best.
func (b *bench) splitSpeeds(ctx context.Context, ds *recall.Dataset, truth [][]int32, hx *hnsw.Index, store vector.Store, out []split, whole int) error {
	efs := []int{whole}
	for _, sp := range out {
		efs = append(efs, sp.ef, sp.best)
	}
	slices.Sort(efs)
	efs = slices.Compact(efs)
	exact := flat.New(store)
	ways := make([]recall.SearchFunc, len(efs))
	for i, ef := range efs {
		if ef == 0 {
			ways[i] = func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
				return exact.Search(ctx, q, k, nil)
			}
			continue
		}
		ways[i] = func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
			return hx.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: ef})
		}
	}
	b.p.begin(fmt.Sprintf("time %d beam widths %s", len(efs), ds.Name))
	runs, err := timeWays(ctx, ds, truth, b.c.k, ways, func(int) bool { return false })
	b.p.end()
	if err != nil {
		return err
	}
	qps := map[int]float64{}
	for i, ef := range efs {
		qps[ef] = medianStats(runs[i]).qps()
	}
	for i := range out {
		out[i].qpsRatio = qps[out[i].ef] / qps[out[i].best]
		out[i].wholeRatio = qps[whole] / qps[out[i].best]
	}
	return nil
}

// splitCells is the report's row for target over the splits out, whole
// being the whole query file's ef.
func splitCells(target float64, out []split, whole int) []string {
	var efs, bests []int
	var gaps, errs, reached, ratios []float64
	withinRecall, withinSpeed, wholeRecall, wholeSpeed := 0, 0, 0, 0
	for _, sp := range out {
		if sp.wholeAchieved >= target-0.01 {
			wholeRecall++
		}
		if sp.wholeRatio >= 0.9 {
			wholeSpeed++
		}
		efs, bests = append(efs, sp.ef), append(bests, sp.best)
		gaps, errs = append(gaps, sp.estimate-sp.achieved), append(errs, sp.stdErr)
		reached, ratios = append(reached, sp.achieved), append(ratios, sp.qpsRatio)
		if sp.achieved >= target-0.01 {
			withinRecall++
		}
		if sp.qpsRatio >= 0.9 {
			withinSpeed++
		}
	}
	efText := func(ef int) string {
		if ef == 0 {
			return "exact"
		}
		return fmt.Sprint(ef)
	}
	three := func(xs []int) string {
		slices.Sort(xs)
		return fmt.Sprintf("%s / %s / %s", efText(pick(xs, 0.05)), efText(pick(xs, 0.5)), efText(pick(xs, 0.95)))
	}
	slices.Sort(reached)
	slices.Sort(ratios)
	abs := make([]float64, len(gaps))
	for i, g := range gaps {
		abs[i] = max(g, -g)
	}
	slices.Sort(gaps)
	slices.Sort(abs)
	slices.Sort(errs)
	share := func(n int) string { return fmt.Sprintf("%d of %d", n, len(out)) }
	return []string{fmt.Sprintf("%.3g", target), three(efs), three(bests),
		fmt.Sprintf("%+.4f / ±%.4f", pick(gaps, 0.5), pick(abs, 0.95)),
		fmt.Sprintf("%.4f", pick(errs, 0.5)),
		fmt.Sprintf("%s / %s", fmtRecall(pick(reached, 0.05)), fmtRecall(pick(reached, 0.5))),
		share(withinRecall),
		fmt.Sprintf("%.2f× / %.2f×", pick(ratios, 0.05), pick(ratios, 0.5)),
		share(withinSpeed), efText(whole), fmt.Sprintf("%d, %d of %d", wholeRecall, wholeSpeed, len(out))}
}

// pick returns the q-quantile of the sorted xs (the element at rank
// ⌊q·(n−1)⌉).
func pick[T any](xs []T, q float64) T {
	return xs[int(q*float64(len(xs)-1)+0.5)]
}
