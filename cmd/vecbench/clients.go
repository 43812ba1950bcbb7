// This file holds the clients report (--clients): throughput and latency
// with several goroutines querying one index at once, after loading it, as
// VectorDBBench reports a system's concurrent search and load duration.

package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func init() {
	var list string
	flagGroups = append(flagGroups, flagGroup{
		usage: `  --clients 1,2,4,8,16
                    concurrent search: QPS and p50/p95/p99 with that many
                    goroutines querying flat and HNSW at once, and the load
                    duration (insert + build); clustered data, 10,000 items
`,
		define: func(fs *flag.FlagSet, c *config) { fs.StringVar(&list, "clients", "", "") },
		check: func(c *config, set map[string]bool) error {
			if !set["clients"] {
				return nil
			}
			cl, err := intList("clients", list, 1, 4096)
			slices.Sort(cl)
			c.clients = slices.Compact(cl)
			return err
		},
		quick: func(c *config) { c.clients = []int{1, 2, 4} },
		asked: func(c *config) bool { return len(c.clients) > 0 },
		run:   (*bench).clientsReport,
	})
}

// concurrentStats is what one level of concurrency measured.
type concurrentStats struct {
	queries int
	wall    time.Duration
	lat     []time.Duration // sorted
	recall  float64         // recall@k
	recall1 float64         // recall@1
}

func (s concurrentStats) mean() time.Duration {
	var sum time.Duration
	for _, d := range s.lat {
		sum += d
	}
	return sum / time.Duration(len(s.lat))
}

func (s concurrentStats) qps() float64 { return float64(s.queries) / s.wall.Seconds() }

// at returns the p-quantile of the latencies, as recall.Measure and
// hnswlib's harness take it.
func (s concurrentStats) at(p float64) time.Duration {
	return s.lat[min(int(float64(len(s.lat))*p), len(s.lat)-1)]
}

// concurrent runs every query of ds once, spread over clients goroutines
// that take the next query from a shared counter, after a warm-up of 50
// queries, and times each query and the whole pass.
func concurrent(ctx context.Context, ds *recall.Dataset, truth [][]int32, k, clients int, search recall.SearchFunc) (concurrentStats, error) {
	for _, q := range ds.Queries[:min(50, len(ds.Queries))] {
		if _, err := search(ctx, q, k); err != nil {
			return concurrentStats{}, err
		}
	}
	nq := len(ds.Queries)
	lat := make([]time.Duration, nq)
	answers := make([][]vector.Result, nq)
	var next atomic.Int64
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= nq || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				res, err := search(ctx, ds.Queries[i], k)
				lat[i] = time.Since(t0)
				if err != nil {
					errs[c] = fmt.Errorf("query %d: %w", i, err)
					return
				}
				answers[i] = res // scored once the clock has stopped
			}
		})
	}
	wg.Wait()
	st := concurrentStats{queries: nq, wall: time.Since(start)}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	for _, err := range errs {
		if err != nil {
			return st, err
		}
	}
	slices.Sort(lat)
	st.lat = lat
	var sum, sum1 float64
	for i, res := range answers {
		sum, sum1 = sum+recall.At(res, truth[i], k), sum1+recall.At(res, truth[i], 1)
	}
	st.recall, st.recall1 = sum/float64(nq), sum1/float64(nq)
	return st, nil
}

// loaded is an index after load: its insert and build times apart.
type loaded struct {
	idx           vector.Index
	p             params
	insert, build time.Duration
	bytes         int64
}

// load inserts ds's base into a fresh store, then builds the index over
// it: for flat nothing more, for HNSW (at its defaults) a graph over the
// stored vectors with every core. Memory is the growth of the live heap
// across both, as in the other reports.
func (b *bench) load(ctx context.Context, ds *recall.Dataset, index string) (loaded, *vector.MemStore, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	store, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		return loaded{}, nil, err
	}
	n := len(ds.Base)
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	step := max(1000, (n+49)/50)
	var l loaded
	cb := b.p.begin("insert " + index + " " + ds.Name)
	start := time.Now()
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		if err := store.PutBatch(ctx, ids[lo:hi], ds.Base[lo:hi]); err != nil {
			b.p.end()
			store.Close()
			return l, nil, err
		}
		cb(hi, n)
	}
	l.insert = time.Since(start)
	b.p.end()
	if index == "flat" {
		l.idx = flat.New(store)
	} else {
		hx, err := hnsw.New(store, nil)
		if err != nil {
			store.Close()
			return l, nil, err
		}
		cb := b.p.begin("build hnsw " + ds.Name)
		start := time.Now()
		for lo := 0; lo < n; lo += step {
			hi := min(lo+step, n)
			if err := hx.Track(ctx, ids[lo:hi]); err != nil {
				b.p.end()
				store.Close()
				return l, nil, err
			}
			cb(hi, n)
		}
		l.build = time.Since(start)
		b.p.end()
		o := hx.Options()
		l.idx, l.p = hx, params{M: o.M, EfConstruction: o.EfConstruction, Ef: max(o.EfSearch, b.c.k)}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	l.bytes = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	return l, store, nil
}

// clientsReport measures flat and HNSW under every --clients level.
func (b *bench) clientsReport(ctx context.Context) error {
	family := b.c.familyFor("clients")
	k := b.c.k
	for _, n := range b.c.sizesFor("clients") {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		t := newTable(b.out, fmt.Sprintf("## Concurrent clients: %s, %d-d %s, k=%d, %s queries shared by the clients, on %d threads",
			ds.Name, ds.Dim, ds.Metric, k, fmtInt(len(ds.Queries)), b.c.threads),
			"<index", "<params", "clients", "QPS", "p50", "p95", "p99", fmt.Sprintf("recall@%d", k), "load (insert + build)")
		for _, index := range []string{"flat", "hnsw"} {
			l, store, err := b.load(ctx, ds, index)
			if err != nil {
				t.close()
				return err
			}
			for _, c := range b.c.clients {
				cb := b.p.begin(fmt.Sprintf("query %s ×%d %s", index, c, ds.Name))
				idx := l.idx
				st, err := concurrent(ctx, ds, truth, k, c, func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
					return idx.Search(ctx, q, k, nil)
				})
				cb(1, 1)
				b.p.end()
				if err != nil {
					store.Close()
					t.close()
					return err
				}
				us := func(d time.Duration) float64 { return float64(d) / 1e3 }
				r := result{
					Dataset: ds.Name, N: len(ds.Base), Dim: ds.Dim, Metric: ds.Metric.String(),
					Store: "memory", Index: index, Params: l.p,
					BuildS: l.build.Seconds(), IndexBytes: l.bytes, K: k, Recall: st.recall,
					P50us: us(st.at(0.5)), P95us: us(st.at(0.95)), P99us: us(st.at(0.99)), QPS: st.qps(),
					Report: "clients", Queries: st.queries, MeanUs: us(st.mean()), Recall1: st.recall1, Threads: b.c.threads,
					Clients: c, InsertS: l.insert.Seconds(), LoadS: (l.insert + l.build).Seconds(),
				}
				b.add(r)
				t.row(index, l.p.String(), fmt.Sprint(c), fmtQPS(r.QPS), fmtDur(st.at(0.5)), fmtDur(st.at(0.95)), fmtDur(st.at(0.99)),
					fmtRecall(r.Recall), fmt.Sprintf("%s (%s + %s)", fmtDur(l.insert+l.build), fmtDur(l.insert), fmtDurZero(l.build)))
			}
			store.Close()
		}
		t.close()
	}
	return nil
}

// fmtDurZero is fmtDur, with "0" for no time at all (flat builds nothing).
func fmtDurZero(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return fmtDur(d)
}
