// This file holds the filtered report (--filtered): VectorDBBench's
// filtered cases, searched through an index's allow-list and through the
// memory store's metadata filter, with the strategy each index chose
// measured against the other.

package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func init() {
	var list string
	flagGroups = append(flagGroups, flagGroup{
		usage: `  --filtered 0.01,0.99
                    filtered search: a filter keeping each fraction of the
                    items, through the index's allow-list and the memory
                    store's metadata filter, for flat and HNSW (clustered
                    data, 10,000 items)
`,
		define: func(fs *flag.FlagSet, c *config) { fs.StringVar(&list, "filtered", "", "") },
		check: func(c *config, set map[string]bool) error {
			if !set["filtered"] {
				return nil
			}
			fr, err := fractionList("filtered", list)
			c.filtered = fr
			return err
		},
		quick: func(c *config) { c.filtered = []float64{0.01, 0.99} },
		asked: func(c *config) bool { return len(c.filtered) > 0 },
		run:   (*bench).filteredReport,
	})
}

// fractionList parses "0.01,0.99" (or "1%,99%") into fractions strictly
// between 0 and 1, sorted and without repeats.
func fractionList(name, s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		scale := 1.0
		if p, ok := strings.CutSuffix(f, "%"); ok {
			f, scale = p, 100
		}
		x, err := strconv.ParseFloat(f, 64)
		x /= scale
		if err != nil || !(x > 0 && x < 1) {
			return nil, usagef("--%s %q: want comma-separated fractions between 0 and 1, such as 0.01,0.99 or 1%%,99%%", name, s)
		}
		out = append(out, x)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// filterLabels are the labels of the filtered report: item i passes the
// filter of fraction f when its rank is below kept(f). The ranks are a
// permutation of 0..n-1 drawn from the seed, so the same flags label the
// same items on every run, the filters of several fractions nest, and a
// filter keeps exactly round(f·n) items (at least one).
type filterLabels struct {
	rank []int32
}

// labelStream separates the labels' random stream from the data's.
const labelStream = 0xf17e

func newFilterLabels(n int, seed int64) filterLabels {
	r := rand.New(rand.NewPCG(uint64(seed), labelStream))
	rank := make([]int32, n)
	for i, p := range r.Perm(n) {
		rank[i] = int32(p)
	}
	return filterLabels{rank: rank}
}

// kept is the number of items the filter of fraction f keeps.
func (l filterLabels) kept(f float64) int {
	return max(1, int(math.Round(f*float64(len(l.rank)))))
}

// set returns the ids (positions) the filter of fraction f keeps.
func (l filterLabels) set(f float64) *vector.IDSet {
	m := l.kept(f)
	ids := make(map[vector.ID]struct{}, m)
	for i, r := range l.rank {
		if int(r) < m {
			ids[vector.ID(i)] = struct{}{}
		}
	}
	return vector.IDSetOf(ids)
}

// metadataKey is the metadata key of the filter of fraction f in the
// memory store: "keep_0.01" is true on the items the 1% filter keeps.
func metadataKey(f float64) string { return "keep_" + strconv.FormatFloat(f, 'g', -1, 64) }

// metadata returns item i's metadata: one boolean per fraction.
func (l filterLabels) metadata(i int, fractions []float64) map[string]any {
	md := make(map[string]any, len(fractions))
	for _, f := range fractions {
		md[metadataKey(f)] = int(l.rank[i]) < l.kept(f)
	}
	return md
}

// filteredTruth returns the exact k nearest allowed base vectors of every
// query. Where the top-100 ground truth holds k allowed positions, they are
// the answer (the truth is exact and ordered, so the allowed ones among it
// are the first allowed ones of the whole base); the other queries are
// computed exactly over the allowed vectors alone with recall.GroundTruth.
func filteredTruth(ctx context.Context, ds *recall.Dataset, truth [][]int32, set *vector.IDSet, k int) ([][]int32, error) {
	out := make([][]int32, len(ds.Queries))
	var rest []int
	for q, row := range truth {
		var got []int32
		for _, p := range row {
			if set.Allow(vector.ID(p)) {
				if got = append(got, p); len(got) == k {
					break
				}
			}
		}
		if len(got) == k {
			out[q] = got
		} else {
			rest = append(rest, q)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	var pos []int32
	set.All(func(id vector.ID) bool { pos = append(pos, int32(id)); return true })
	slices.Sort(pos) // ties in the sub-set break by position, as in the whole
	sub := &recall.Dataset{Name: ds.Name, Dim: ds.Dim, Metric: ds.Metric, Base: make([]vector.Vector, len(pos))}
	for i, p := range pos {
		sub.Base[i] = ds.Base[p]
	}
	for _, q := range rest {
		sub.Queries = append(sub.Queries, ds.Queries[q])
	}
	rows, err := recall.GroundTruth(ctx, sub, k)
	if err != nil {
		return nil, err
	}
	for i, q := range rest {
		row := make([]int32, len(rows[i]))
		for j, p := range rows[i] {
			row[j] = pos[p]
		}
		out[q] = row
	}
	return out, nil
}

// Strategies of a filtered search, as the JSON's filter_strategy names
// them: scoring the allowed ids one by one, or searching the whole index
// and skipping what the filter rejects (a graph walk for HNSW, a scan for
// flat).
const (
	strategyExact = "exact"
	strategyWalk  = "walk"
	strategyScan  = "scan"
)

// strategyText is how a table names a strategy.
var strategyText = map[string]string{
	strategyExact: "exact scoring of the allow-list",
	strategyWalk:  "filtered graph walk",
	strategyScan:  "filtered scan",
}

// setScorer is the index capability behind the crossover rule: whether a
// search with an allow-list of s ids scores them one by one.
type setScorer interface {
	ScoresSetExactly(s, k, ef int) bool
}

// filterCase is one index of the filtered report, built once and searched
// at every fraction.
type filterCase struct {
	name  string
	idx   vector.Index
	store vector.Store
	other string // the index's strategy when it does not score the set exactly
	p     params
	kind  cairn.IndexKind
	hnsw  hnsw.Options
}

// ruleChoice is the strategy fc's index takes for an allow-list of s ids
// at k: exact scoring where its crossover rule says so, else its walk or
// scan (always, for an index without the rule).
func (fc filterCase) ruleChoice(s, k int) string {
	if sc, ok := fc.idx.(setScorer); ok && sc.ScoresSetExactly(s, k, 0) {
		return strategyExact
	}
	return fc.other
}

// filteredReport measures every fraction of --filtered on flat and HNSW.
func (b *bench) filteredReport(ctx context.Context) error {
	family := b.c.familyFor("filtered")
	for _, n := range b.c.sizesFor("filtered") {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		k := b.c.k
		labels := newFilterLabels(len(ds.Base), b.c.seed)
		var fractions []float64
		for _, f := range b.c.filtered {
			m := labels.kept(f)
			switch {
			case m >= k:
				fractions = append(fractions, f)
			case b.c.quick:
				// A smoke run on a small file of the user's goes on.
				fmt.Fprintf(b.out, "Filtered search on %s: a filter keeping %s keeps %d items, fewer than k = %d; skipped.\n\n", ds.Name, fmtPct(f), m, k)
			default:
				return fmt.Errorf("--filtered %g keeps %d of the %s items, fewer than k = %d: use a larger fraction or more items", f, m, fmtInt(len(ds.Base)), k)
			}
		}
		if len(fractions) == 0 {
			continue
		}
		sets := make([]*vector.IDSet, len(fractions))
		truths := make([][][]int32, len(fractions))
		cb := b.p.begin("filtered ground truth " + ds.Name)
		for i, f := range fractions {
			sets[i] = labels.set(f)
			if truths[i], err = filteredTruth(ctx, ds, truth, sets[i], k); err != nil {
				b.p.end()
				return err
			}
			cb(i+1, len(fractions))
		}
		b.p.end()

		t := newTable(b.out, fmt.Sprintf("## Filtered search: %s, %d-d %s, k=%d, %s queries one at a time (★ = the strategy the index's crossover rule chose)",
			ds.Name, ds.Dim, ds.Metric, k, fmtInt(len(ds.Queries))),
			"<index", "keeps", "<through", "<strategy", fmt.Sprintf("recall@%d", k), "p50", "p95", "QPS")
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			rows, err := b.filteredIndex(ctx, ds, kind, labels, fractions, sets, truths)
			for _, r := range rows {
				b.add(r)
				star := ""
				if r.FilterChosenBy == "rule" {
					star = " ★"
				}
				through := "allow-list"
				if r.FilterRoute == "metadata" {
					through = "memory store filter"
				}
				t.row(r.Index, fmtPct(r.FilterFraction)+" ("+fmtInt(r.FilterItems)+")", through, strategyText[r.FilterStrategy]+star,
					fmtRecall(r.Recall), fmtDur(usDur(r.P50us)), fmtDur(usDur(r.P95us)), fmtQPS(r.QPS))
			}
			if err != nil {
				t.close()
				return err
			}
		}
		t.close()
		b.printCrossover(ds)
	}
	return nil
}

// filteredIndex builds the index of kind (flat, or HNSW at its defaults)
// and a memory-store collection of the same kind, and measures every
// fraction: the allow-list with the strategy the index chooses, the
// allow-list with the other strategy forced, and the collection's metadata
// filter.
func (b *bench) filteredIndex(ctx context.Context, ds *recall.Dataset, kind cairn.IndexKind, labels filterLabels, fractions []float64, sets []*vector.IDSet, truths [][][]int32) ([]result, error) {
	k := b.c.k
	store, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	fc := filterCase{name: "flat", store: store, other: strategyScan, kind: kind}
	if kind == cairn.HNSW {
		hx, err := hnsw.New(store, nil)
		if err != nil {
			return nil, err
		}
		o := hx.Options()
		fc.name, fc.idx, fc.other, fc.hnsw = "hnsw", hx, strategyWalk, o
		fc.hnsw.Workers, fc.hnsw.Progress = 0, nil // this process's, not the collection's
		fc.p = params{M: o.M, EfConstruction: o.EfConstruction, Ef: max(o.EfSearch, k)}
	} else {
		fc.idx = flat.New(store)
	}
	bs, err := b.build(ctx, fc.idx, ds, fc.name)
	if err != nil {
		return nil, err
	}
	var rows []result
	for i, f := range fractions {
		set := sets[i]
		chosen := fc.ruleChoice(set.Len(), k)
		forced := strategyExact
		if chosen == strategyExact {
			forced = fc.other
		}
		for _, s := range []struct {
			strategy, by string
			search       recall.SearchFunc
		}{
			{chosen, "rule", b.allowListSearch(fc, set)},
			{forced, "forced", b.forcedSearch(fc, set, forced)},
		} {
			what := fmt.Sprintf("%s %s %s", fc.name, fmtPct(f), s.strategy)
			qs, err := b.measureFiltered(ctx, ds, truths[i], what, s.search)
			if err != nil {
				return rows, err
			}
			r := b.measured("filtered", ds, "memory", fc.name, fc.p, bs, qs)
			r.FilterFraction, r.FilterItems, r.FilterRoute, r.FilterStrategy, r.FilterChosenBy = f, set.Len(), "allow-list", s.strategy, s.by
			rows = append(rows, r)
		}
	}
	// The same filters through the memory store, on a collection of its
	// own: the store finds the matching items from their metadata and
	// hands the index the allow-list the index's rule asks for.
	mrows, err := b.filteredCollection(ctx, ds, fc, labels, fractions, sets, truths)
	return append(rows, mrows...), err
}

// allowListSearch searches idx with set as an allow-list: the index picks
// its strategy by its crossover rule.
func (b *bench) allowListSearch(fc filterCase, set *vector.IDSet) recall.SearchFunc {
	so := &vector.SearchOptions{Filter: set}
	return func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		return fc.idx.Search(ctx, q, k, so)
	}
}

// forcedSearch searches with the strategy the rule did not choose. The
// walk (or scan) is the index's own search given the set as a plain
// filter, which an index cannot iterate; exact scoring is the index's own
// when it has one for this size, and otherwise a loop over the set that
// scores each allowed vector of the store, as HNSW's exact path does.
func (b *bench) forcedSearch(fc filterCase, set *vector.IDSet, strategy string) recall.SearchFunc {
	if strategy != strategyExact {
		so := &vector.SearchOptions{Filter: vector.FilterFunc(set.Allow)}
		return func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
			return fc.idx.Search(ctx, q, k, so)
		}
	}
	dim, metric := fc.store.Dim(), fc.store.Metric()
	dist := metric.DistanceFunc()
	return func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		pq, err := vector.Prepare(q, dim, metric)
		if err != nil {
			return nil, err
		}
		t := vector.NewTopK(k)
		set.All(func(id vector.ID) bool {
			if v, err := fc.store.Get(id); err == nil {
				t.Push(id, dist(pq, v))
			}
			return true
		})
		return t.Results(), ctx.Err()
	}
}

// measureFiltered measures one filtered search on one goroutine (the
// throughput pass is left to the clients report).
func (b *bench) measureFiltered(ctx context.Context, ds *recall.Dataset, truth [][]int32, what string, search recall.SearchFunc) (recall.QueryStats, error) {
	cb := b.p.begin("query " + what + " " + ds.Name)
	defer b.p.end()
	return recall.Measure(ctx, nil, ds, truth, &recall.MeasureOptions{K: b.c.k, Threads: -1, Search: search, Progress: cb})
}

// filteredCollection loads ds into a memory-store collection of fc's kind,
// each item labelled with its filters' metadata, and measures a query with
// each fraction's metadata filter.
func (b *bench) filteredCollection(ctx context.Context, ds *recall.Dataset, fc filterCase, labels filterLabels, fractions []float64, sets []*vector.IDSet, truths [][][]int32) ([]result, error) {
	db := cairn.OpenMemory(nil)
	defer db.Close()
	coll, err := db.CreateCollection(ctx, "bench", cairn.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: fc.kind, HNSW: fc.hnsw})
	if err != nil {
		return nil, err
	}
	bs, err := b.loadCollection(ctx, coll, ds, func(i int) map[string]any { return labels.metadata(i, fractions) })
	if err != nil {
		return nil, err
	}
	var rows []result
	for i, f := range fractions {
		strategy := fc.ruleChoice(sets[i].Len(), b.c.k)
		qo := &cairn.QueryOptions{Filter: cairn.Eq(metadataKey(f), true)}
		qs, err := b.measureFiltered(ctx, ds, truths[i], fmt.Sprintf("%s store %s", fc.name, fmtPct(f)), collectionSearch(coll, qo))
		if err != nil {
			return rows, err
		}
		r := b.measured("filtered", ds, "memory-store", fc.name, fc.p, bs, qs)
		r.FilterFraction, r.FilterItems, r.FilterRoute, r.FilterStrategy, r.FilterChosenBy = f, sets[i].Len(), "metadata", strategy, "rule"
		rows = append(rows, r)
	}
	return rows, nil
}

// loadCollection adds ds's base to coll in batches, under the keys "0",
// "1", … (positions, as ground truth expects), with md(i) as metadata.
func (b *bench) loadCollection(ctx context.Context, coll *cairn.Collection, ds *recall.Dataset, md func(i int) map[string]any) (recall.BuildStats, error) {
	cb := b.p.begin("load memory store " + ds.Name)
	defer b.p.end()
	n := len(ds.Base)
	step := max(1000, (n+49)/50)
	st := recall.BuildStats{N: n}
	start := time.Now()
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		items := make([]cairn.Item, 0, hi-lo)
		for i := lo; i < hi; i++ {
			items = append(items, cairn.Item{ID: strconv.Itoa(i), Embedding: ds.Base[i], Metadata: md(i)})
		}
		if err := coll.Add(ctx, items...); err != nil {
			return st, err
		}
		cb(hi, n)
	}
	st.Time = time.Now().Sub(start)
	return st, nil
}

// collectionSearch is a query of coll with o, its keys read back as
// positions.
func collectionSearch(coll *cairn.Collection, o *cairn.QueryOptions) recall.SearchFunc {
	return func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		hits, err := coll.Query(ctx, q, k, o)
		if err != nil {
			return nil, err
		}
		out := make([]vector.Result, len(hits))
		for i, h := range hits {
			p, err := strconv.Atoi(h.ID)
			if err != nil {
				return nil, fmt.Errorf("key %q is not a position: %w", h.ID, vector.ErrCorrupt)
			}
			out[i] = vector.Result{ID: vector.ID(p), Distance: float32(h.Distance)}
		}
		return out, nil
	}
}

// printCrossover sums up, for every index and fraction of the data set
// just measured, the rule's choice against the strategy it passed over.
func (b *bench) printCrossover(ds *recall.Dataset) {
	type key struct {
		index string
		f     float64
	}
	chosen, forced := map[key]result{}, map[key]result{}
	var order []key
	for _, r := range b.results {
		if r.Report != "filtered" || r.Dataset != ds.Name || r.FilterRoute != "allow-list" {
			continue
		}
		kk := key{r.Index, r.FilterFraction}
		if r.FilterChosenBy == "rule" {
			chosen[kk] = r
			order = append(order, kk)
		} else {
			forced[kk] = r
		}
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintf(b.out, "### The crossover rule against the other strategy (%s)\n\n", ds.Name)
	for _, kk := range order {
		c := chosen[kk]
		o, ok := forced[kk]
		if !ok {
			continue
		}
		verdict := fmt.Sprintf("%.2f× the QPS of", c.QPS/o.QPS)
		fmt.Fprintf(b.out, "- %s, filter keeping %s: the rule chose %s (%s QPS, recall %s), %s %s (%s QPS, recall %s).\n",
			kk.index, fmtPct(kk.f), strategyText[c.FilterStrategy], fmtQPS(c.QPS), fmtRecall(c.Recall),
			verdict, strategyText[o.FilterStrategy], fmtQPS(o.QPS), fmtRecall(o.Recall))
	}
	fmt.Fprintln(b.out)
}

// fmtPct prints a fraction as a percentage: 0.01 → "1%", 0.005 → "0.5%".
func fmtPct(f float64) string { return strconv.FormatFloat(f*100, 'g', 4, 64) + "%" }
