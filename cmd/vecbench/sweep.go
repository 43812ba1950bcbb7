package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// sweepReport builds an HNSW index per (M, efConstruction) of the grid,
// measures every ef on it, marks the Pareto front of recall against QPS
// and recommends the fastest setting reaching each target recall.
func (b *bench) sweepReport(ctx context.Context) error {
	family := b.c.familyFor("sweep")
	sizes := b.c.sizesFor("sweep")
	for _, n := range sizes {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		rows, err := b.sweepOne(ctx, ds, truth)
		// Print what was measured even when interrupted midway.
		markPareto(rows)
		b.printSweep(ds, rows)
		b.results = append(b.results, rows...)
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) sweepOne(ctx context.Context, ds *recall.Dataset, truth [][]int32) ([]result, error) {
	var rows []result
	for _, m := range b.c.ms {
		for _, efc := range b.c.efcs {
			store, err := vector.NewMemStore(ds.Dim, ds.Metric)
			if err != nil {
				return rows, err
			}
			hx, err := hnsw.New(store, &hnsw.Options{M: m, EfConstruction: efc})
			if err != nil {
				return rows, err
			}
			bs, err := b.build(ctx, hx, ds, fmt.Sprintf("hnsw M=%d efC=%d", m, efc))
			if err != nil {
				return rows, err
			}
			for _, ef := range b.c.efs {
				search := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
					return hx.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: ef})
				}
				p := params{M: m, EfConstruction: efc, Ef: max(ef, b.c.k)}
				qs, err := b.measure(ctx, hx, ds, truth, b.c.k, "hnsw "+p.String(), search)
				if err != nil {
					return rows, err
				}
				rows = append(rows, b.measured("sweep", ds, "memory", "hnsw", p, bs, qs))
			}
			store.Close()
		}
	}
	return rows, nil
}

// markPareto marks the rows no other row beats on both recall and QPS.
func markPareto(rows []result) {
	for i := range rows {
		rows[i].Pareto = true
		for j := range rows {
			a, o := rows[i], rows[j]
			if i != j && o.Recall >= a.Recall && o.QPS >= a.QPS && (o.Recall > a.Recall || o.QPS > a.QPS) {
				rows[i].Pareto = false
				break
			}
		}
	}
}

func (b *bench) printSweep(ds *recall.Dataset, rows []result) {
	if len(rows) == 0 {
		return
	}
	k := b.c.k
	t := newTable(b.out, fmt.Sprintf("## HNSW sweep: %s, %d-d %s, k=%d, %s queries one at a time (★ = Pareto front of recall against QPS)",
		ds.Name, ds.Dim, ds.Metric, k, fmtInt(len(ds.Queries))),
		"M", "efC", "ef", fmt.Sprintf("recall@%d", k), "p50", "p95", "QPS", fmt.Sprintf("QPS ×%d", b.c.threads), "build", "memory", "<Pareto")
	order := slices.Clone(rows)
	for _, r := range order {
		star := ""
		if r.Pareto {
			star = "★"
		}
		t.row(fmt.Sprint(r.Params.M), fmt.Sprint(r.Params.EfConstruction), fmt.Sprint(r.Params.Ef), fmtRecall(r.Recall),
			fmtDur(usDur(r.P50us)), fmtDur(usDur(r.P95us)), fmtQPS(r.QPS), fmtQPS(r.QPSAllCores),
			fmtDur(secs(r.BuildS)), fmtBytes(r.IndexBytes), star)
	}
	t.close()

	b.printRecommendations(ds, rows)
}
