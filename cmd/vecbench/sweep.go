package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// sweepReport builds an HNSW index per (M, efConstruction) of the grid,
// measures every ef on it, marks the Pareto front of recall against QPS
// and recommends the fastest setting reaching each target recall. With
// --quantize, each graph is also loaded into an index that walks int8
// codes, and its rows get a table, front and recommendations of their own.
func (b *bench) sweepReport(ctx context.Context) error {
	family := b.c.familyFor("sweep")
	sizes := b.c.sizesFor("sweep")
	for _, n := range sizes {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		rows, qrows, err := b.sweepOne(ctx, ds, truth)
		// Print what was measured even when interrupted midway.
		markPareto(rows)
		b.printSweep(ds, rows, "")
		b.results = append(b.results, rows...)
		if b.c.quantize != hnsw.QuantizeNone {
			markPareto(qrows)
			b.printSweep(ds, qrows, b.c.quantizeLabel())
			b.results = append(b.results, qrows...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sweepOne measures the grid on ds: the float32 rows, and with --quantize
// the rows of the same graphs walked on codes. Each ef is measured on the
// float32 walk and then on the quantized one, so that a change in the
// machine's speed during the run falls on both alike.
func (b *bench) sweepOne(ctx context.Context, ds *recall.Dataset, truth [][]int32) (rows, qrows []result, err error) {
	for _, m := range b.c.ms {
		for _, efc := range b.c.efcs {
			store, err := vector.NewMemStore(ds.Dim, ds.Metric)
			if err != nil {
				return rows, qrows, err
			}
			hx, err := hnsw.New(store, &hnsw.Options{M: m, EfConstruction: efc})
			if err != nil {
				return rows, qrows, err
			}
			bs, err := b.build(ctx, hx, ds, fmt.Sprintf("hnsw M=%d efC=%d", m, efc))
			if err != nil {
				return rows, qrows, err
			}
			var qx *hnsw.Index
			var qbs recall.BuildStats
			if b.c.quantize != hnsw.QuantizeNone {
				if qx, qbs, err = b.quantized(hx, bs); err != nil {
					return rows, qrows, err
				}
			}
			parts := memoryParts(store, hx)
			var qparts map[string]int64
			if qx != nil {
				qparts = memoryParts(store, qx)
			}
			for _, ef := range b.c.efs {
				for _, ix := range []*hnsw.Index{hx, qx} {
					if ix == nil {
						continue
					}
					search := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
						return ix.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: ef})
					}
					p, st := params{M: m, EfConstruction: efc, Ef: max(ef, b.c.k)}, bs
					if ix == qx {
						p.Quantize, st = b.c.quantizeLabel(), qbs
					}
					qs, err := b.measure(ctx, ix, ds, truth, b.c.k, "hnsw "+p.String(), search)
					if err != nil {
						return rows, qrows, err
					}
					r := b.measured("sweep", ds, "memory", "hnsw", p, st, qs)
					if ix == qx {
						r.MemoryParts, r.AccountedBytes = qparts, qparts["total"]
						qrows = append(qrows, r)
					} else {
						r.MemoryParts, r.AccountedBytes = parts, parts["total"]
						rows = append(rows, r)
					}
				}
			}
			store.Close()
		}
	}
	return rows, qrows, nil
}

// memoryParts is the count of the bytes of store and ix by what holds
// them: "store." and "graph." each followed by a field of
// vector.StoreMemory or hnsw.Memory, and "total".
func memoryParts(store *vector.MemStore, ix *hnsw.Index) map[string]int64 {
	sm, gm := store.Memory(), ix.Stats().Memory
	parts := map[string]int64{
		"store.vectors": sm.Vectors, "store.spare": sm.Spare, "store.slots": sm.Slots, "store.id_map": sm.IDMap,
		"graph.links0": gm.Links0, "graph.vectors": gm.Vectors, "graph.codes": gm.Codes, "graph.row_pad": gm.RowPad,
		"graph.spare": gm.Spare, "graph.upper": gm.Upper, "graph.slots": gm.Slots, "graph.id_map": gm.IDMap,
		"graph.locks": gm.Locks, "graph.deletes": gm.Deletes,
	}
	parts["total"] = sm.Total() + gm.Total()
	return parts
}

// quantized loads the graph of hx into a second index over the same store
// that walks codes (--quantize): the same links, so that the two differ
// only in what they walk. Its build time is the float32 build's plus the
// load (training and encoding the codes); its memory, the float32 build's
// with the float32 graph's bytes replaced by its own (both as the graphs
// count them in Stats.GraphBytes).
func (b *bench) quantized(hx *hnsw.Index, bs recall.BuildStats) (*hnsw.Index, recall.BuildStats, error) {
	var buf bytes.Buffer
	if _, err := hx.WriteTo(&buf); err != nil {
		return nil, bs, err
	}
	o := hx.Options()
	o.Quantize, o.QuantizeDims = b.c.quantize, b.c.quantizeDims
	o.Progress = nil
	qx, err := hnsw.New(hx.Store(), &o)
	if err != nil {
		return nil, bs, err
	}
	start := time.Now()
	if _, err := qx.ReadFrom(&buf); err != nil {
		return nil, bs, err
	}
	qbs := bs
	qbs.RSS = 0 // the load is not measured apart
	qbs.Time += time.Since(start)
	qbs.Bytes += qx.Stats().GraphBytes - hx.Stats().GraphBytes
	return qx, qbs, nil
}

// quantizeLabel names the codes of --quantize: "int8", "binary", or with
// --quantize-dims "int8-256" (codes of the first 256 components).
func (c *config) quantizeLabel() string {
	if c.quantizeDims > 0 {
		return fmt.Sprintf("%v-%d", c.quantize, c.quantizeDims)
	}
	return c.quantize.String()
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

// printSweep prints the rows of one walk: float32 when quantize is empty,
// else the codes it names.
func (b *bench) printSweep(ds *recall.Dataset, rows []result, quantize string) {
	if len(rows) == 0 {
		return
	}
	k := b.c.k
	walk := ""
	if quantize != "" {
		walk = ", walking " + quantize + " codes (the same graphs, finalists rescored exactly)"
	}
	t := newTable(b.out, fmt.Sprintf("## HNSW sweep%s: %s, %d-d %s, k=%d, %s queries one at a time (★ = Pareto front of recall against QPS)",
		walk, ds.Name, ds.Dim, ds.Metric, k, fmtInt(len(ds.Queries))),
		"M", "efC", "ef", fmt.Sprintf("recall@%d", k), "p50", "p95", "QPS", fmt.Sprintf("QPS ×%d", b.c.threads), "build", "memory", "counted", "RSS", "<Pareto")
	order := slices.Clone(rows)
	for _, r := range order {
		star := ""
		if r.Pareto {
			star = "★"
		}
		t.row(fmt.Sprint(r.Params.M), fmt.Sprint(r.Params.EfConstruction), fmt.Sprint(r.Params.Ef), fmtRecall(r.Recall),
			fmtDur(usDur(r.P50us)), fmtDur(usDur(r.P95us)), fmtQPS(r.QPS), fmtQPS(r.QPSAllCores),
			fmtDur(secs(r.BuildS)), fmtBytes(r.IndexBytes), fmtBytes(r.AccountedBytes), fmtBytes(r.RSSBytes), star)
	}
	t.close()

	b.printRecommendations(ds, rows)
}
