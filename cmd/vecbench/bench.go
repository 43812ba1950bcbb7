package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/baseline"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// result is one measured configuration: a row of a table and an element
// of the JSON "results". The field names match what ../shared/peers/run
// prints, so the two can be joined.
type result struct {
	Dataset    string  `json:"dataset"`
	N          int     `json:"n"`
	Dim        int     `json:"dim"`
	Metric     string  `json:"metric"`
	Store      string  `json:"store"`
	Index      string  `json:"index"`
	Params     params  `json:"params"`
	BuildS     float64 `json:"build_s"`
	IndexBytes int64   `json:"index_bytes"`
	K          int     `json:"k"`
	Recall     float64 `json:"recall"`
	P50us      float64 `json:"p50_us"`
	P95us      float64 `json:"p95_us"`
	P99us      float64 `json:"p99_us"`
	QPS        float64 `json:"qps"`

	// Beyond the shared shape.
	Report      string  `json:"report"` // memory, indexes, sweep or peers
	Queries     int     `json:"queries"`
	MeanUs      float64 `json:"mean_us"`
	Recall1     float64 `json:"recall_at_1"`
	QPSAllCores float64 `json:"qps_all_cores"`
	Threads     int     `json:"threads"`
	OpenS       float64 `json:"open_s,omitempty"`
	Pareto      bool    `json:"pareto,omitempty"`
	// RSSBytes is the process's resident-memory growth across the build
	// (recall.BuildStats.RSS), as the C++ peers measure index_bytes; 0
	// where no build was measured, and where the build's growth was none
	// (a small one), so it is in every row whatever the measure gives.
	RSSBytes int64 `json:"rss_bytes"`
	// AccountedBytes is the sweep's own count of the bytes of the store
	// and the graph, MemoryParts its parts ("store."/"graph." + field of
	// vector.StoreMemory or hnsw.Memory).
	AccountedBytes int64            `json:"accounted_bytes,omitempty"`
	MemoryParts    map[string]int64 `json:"memory_parts,omitempty"`

	// The filtered report (report "filtered").
	FilterFraction float64 `json:"filter_fraction,omitempty"`
	FilterItems    int     `json:"filter_items,omitempty"`
	FilterRoute    string  `json:"filter_route,omitempty"`     // "allow-list" or "metadata"
	FilterStrategy string  `json:"filter_strategy,omitempty"`  // "exact", "walk" or "scan"
	FilterChosenBy string  `json:"filter_chosen_by,omitempty"` // "rule" or "forced"

	// The clients report (report "clients").
	Clients int     `json:"clients,omitempty"`
	InsertS float64 `json:"insert_s,omitempty"`
	LoadS   float64 `json:"load_s,omitempty"`

	// The target-recall report (report "target"): the target, what the
	// index chose ("hnsw" at chosen_ef, or "exact"), and, in the row of
	// the sweep's best setting, the same target; setting names the row
	// ("target hnsw", "best fixed ef", "Auto collection", ...).
	TargetRecall float64 `json:"target_recall,omitempty"`
	Setting      string  `json:"setting,omitempty"`
	ChosenIndex  string  `json:"chosen_index,omitempty"`
	ChosenEf     int     `json:"chosen_ef,omitempty"`
}

// params are an index's settings; empty for flat.
type params struct {
	M              int  `json:"M,omitempty"`
	EfConstruction int  `json:"ef_construction,omitempty"`
	Ef             int  `json:"ef,omitempty"`
	Overfetch      bool `json:"overfetch,omitempty"`
	Rescore        int  `json:"rescore,omitempty"` // qflat's candidates per result
	// Quantize is what an HNSW graph walks: "int8" or "binary" for codes
	// (--quantize), with "-N" for codes of the first N components
	// (--quantize-dims), empty for float32.
	Quantize string `json:"quantize,omitempty"`
}

func (p params) String() string {
	if p.Rescore > 0 {
		return fmt.Sprintf("rescore=%d", p.Rescore)
	}
	if p.M == 0 {
		return "–"
	}
	s := fmt.Sprintf("M=%d efC=%d ef=%d", p.M, p.EfConstruction, p.Ef)
	if p.Quantize != "" {
		s += " " + p.Quantize
	}
	if p.Overfetch {
		s += " overfetch"
	}
	return s
}

type bench struct {
	c       *config
	out     io.Writer
	p       *progress
	machine machine
	results []result
	recs    []recommendation // the sweep's, for --json

	// The last data set loaded, kept for the next report that wants it.
	lastKey   string
	lastDS    *recall.Dataset
	lastTruth [][]int32
	exported  map[string]bool
}

func newBench(c *config, out io.Writer, p *progress) *bench {
	return &bench{c: c, out: out, p: p, exported: map[string]bool{}}
}

func (b *bench) runAll(ctx context.Context) error {
	b.machine = detectMachine(b.c.threads)
	fmt.Fprintf(b.out, "%s\n\ncommand: %s\n\n", b.machine.line(), b.command())
	if b.c.exportDir != "" {
		if err := os.MkdirAll(b.c.exportDir, 0o755); err != nil {
			return fmt.Errorf("--export: %w", err)
		}
		if !b.c.memory && !b.c.reportsNamed() {
			for _, n := range b.c.sizesFor("indexes") {
				if _, _, err := b.dataset(ctx, b.c.familyFor("indexes"), n); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if b.c.memory {
		if err := b.memoryReport(ctx); err != nil {
			return err
		}
	}
	if b.c.indexes || b.c.peers {
		if err := b.indexReport(ctx); err != nil {
			return err
		}
	}
	if b.c.sweep {
		if err := b.sweepReport(ctx); err != nil {
			return err
		}
	}
	for _, g := range flagGroups {
		if g.asked(b.c) {
			if err := g.run(b, ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *bench) command() string {
	return strings.TrimSpace("vecbench " + strings.Join(b.c.args, " "))
}

// cacheName names a generated data set in files: the data set's name, with
// the query count when it is not the default.
func cacheName(ds *recall.Dataset) string {
	if len(ds.Queries) != recall.DefaultQueries {
		return fmt.Sprintf("%s-q%d", ds.Name, len(ds.Queries))
	}
	return ds.Name
}

// dataset returns the data set of a report (generated, or the user's with
// --data) and its ground truth, computing the truth once and caching it.
func (b *bench) dataset(ctx context.Context, family string, n int) (*recall.Dataset, [][]int32, error) {
	if b.c.dataPath != "" {
		return b.userData(ctx)
	}
	key := fmt.Sprintf("%s/%d", family, n)
	if key == b.lastKey {
		return b.lastDS, b.lastTruth, nil
	}
	b.lastKey, b.lastDS, b.lastTruth = "", nil, nil // let the old set go
	start := time.Now()
	var ds *recall.Dataset
	if family == "clustered" {
		ds = recall.Clustered(n, b.c.nq, b.c.dim, b.c.seed)
	} else {
		ds = recall.Uniform(n, b.c.nq, b.c.dim, b.c.seed)
	}
	if d := time.Since(start); d > time.Second {
		b.p.note("generated %s in %s", ds.Name, roundDur(d))
	}
	name := cacheName(ds)
	dir := b.c.exportDir
	if dir == "" {
		dir = b.cacheDir()
	}
	truth, err := b.truth(ctx, ds, dir, name)
	if err != nil {
		return nil, nil, err
	}
	if b.c.exportDir != "" && !b.exported[name] {
		for _, f := range []struct {
			suffix string
			vs     []vector.Vector
		}{{".base.fvecs", ds.Base}, {".query.fvecs", ds.Queries}} {
			if err := recall.SaveFvecs(filepath.Join(b.c.exportDir, name+f.suffix), f.vs); err != nil {
				return nil, nil, fmt.Errorf("--export: %w", err)
			}
		}
		if err := writeMetric(b.c.exportDir, name, ds.Metric); err != nil {
			return nil, nil, err
		}
		b.exported[name] = true
		b.p.note("exported %s.{base,query}.fvecs, %s.gt.ivecs and %s.metric to %s", name, name, name, b.c.exportDir)
	}
	b.lastKey, b.lastDS, b.lastTruth = key, ds, truth
	return ds, truth, nil
}

// truth returns the top-100 ground truth of ds, from dir/NAME.gt.ivecs when
// that holds it, else computed (and saved there when dir is usable).
func (b *bench) truth(ctx context.Context, ds *recall.Dataset, dir, name string) ([][]int32, error) {
	cb := b.p.begin("ground truth " + name)
	defer b.p.end()
	if dir == "" {
		return recall.GroundTruth(ctx, ds, recall.GroundTruthK)
	}
	path := filepath.Join(dir, name+".gt.ivecs")
	truth, reused, err := recall.CachedGroundTruth(ctx, ds, recall.GroundTruthK, path, cb)
	if err != nil {
		return nil, err
	}
	if reused {
		b.p.note("ground truth of %s read from %s", name, path)
	}
	return truth, nil
}

// cacheDir is where ground truth of generated data is kept between runs:
// --cache, else the user's cache directory; "" if neither is usable.
func (b *bench) cacheDir() string {
	dir := b.c.cacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "cairn", "vecbench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.p.note("not caching ground truth: %v", err)
		return ""
	}
	return dir
}

// checkTruth validates a ground-truth file given with --gt.
func checkTruth(rows [][]int32, ds *recall.Dataset, k int) error {
	if len(rows) != len(ds.Queries) {
		return fmt.Errorf("%d rows for %d queries: %w", len(rows), len(ds.Queries), vector.ErrCorrupt)
	}
	for i, r := range rows {
		if len(r) < min(k, len(ds.Base)) {
			return fmt.Errorf("row %d holds %d ids, fewer than k=%d: %w", i, len(r), k, vector.ErrCorrupt)
		}
		for _, p := range r {
			if p < 0 || int(p) >= len(ds.Base) {
				return fmt.Errorf("row %d: id %d outside the %d base vectors: %w", i, p, len(ds.Base), vector.ErrCorrupt)
			}
		}
	}
	return nil
}

// measured turns recall's figures into a result.
func (b *bench) measured(report string, ds *recall.Dataset, store, index string, p params, bs recall.BuildStats, qs recall.QueryStats) result {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	return result{
		Dataset: ds.Name, N: len(ds.Base), Dim: ds.Dim, Metric: ds.Metric.String(),
		Store: store, Index: index, Params: p,
		BuildS: bs.Time.Seconds(), IndexBytes: bs.Bytes, RSSBytes: bs.RSS,
		K: qs.K, Recall: qs.Recall[qs.K],
		P50us: us(qs.Latency.P50), P95us: us(qs.Latency.P95), P99us: us(qs.Latency.P99), QPS: qs.QPS,
		Report: report, Queries: qs.Queries, MeanUs: us(qs.Latency.Mean), Recall1: qs.Recall[1],
		QPSAllCores: qs.QPSParallel, Threads: qs.Threads,
	}
}

// build adds ds's base to idx, reporting progress.
func (b *bench) build(ctx context.Context, idx vector.Index, ds *recall.Dataset, what string) (recall.BuildStats, error) {
	cb := b.p.begin("build " + what + " " + ds.Name)
	defer b.p.end()
	return recall.Build(ctx, idx, ds.Base, cb)
}

// measure runs ds's queries against idx at k, with search if non-nil.
func (b *bench) measure(ctx context.Context, idx vector.Index, ds *recall.Dataset, truth [][]int32, k int, what string, search recall.SearchFunc) (recall.QueryStats, error) {
	cb := b.p.begin("query " + what + " " + ds.Name)
	defer b.p.end()
	return recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{K: k, Threads: b.c.threads, Search: search, Progress: cb})
}

// memoryReport is the table of vecbench without flags: exact top-5
// search (or --k) over a few thousand to tens of thousands of items, in
// memory and from a SQLite file.
func (b *bench) memoryReport(ctx context.Context) error {
	k := b.c.memoryK
	family := b.c.familyFor("memory")
	// The title is set once the first data set is loaded (the header only
	// goes out with the first row).
	t := newTable(b.out, "",
		"<store", "items", "insert", "open", fmt.Sprintf("recall@%d", k), "p50", "p95", "p99", "QPS", fmt.Sprintf("QPS ×%d", b.c.threads), "memory")
	defer t.close()
	for _, n := range b.c.sizesFor("memory") {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%s %d-d", family, ds.Dim)
		if b.c.dataPath != "" {
			desc = fmt.Sprintf("%s (%d-d %s)", b.c.dataPath, ds.Dim, ds.Metric)
		}
		t.title = fmt.Sprintf("## Memory search: exact top %d, %s, %s queries one at a time (QPS also on %d threads)",
			k, desc, fmtInt(len(ds.Queries)), b.c.threads)
		store, err := vector.NewMemStore(ds.Dim, ds.Metric)
		if err != nil {
			return err
		}
		idx := flat.New(store)
		bs, err := b.build(ctx, idx, ds, "memory store")
		if err != nil {
			return err
		}
		qs, err := b.measure(ctx, idx, ds, truth, k, "flat/memory", nil)
		if err != nil {
			return err
		}
		r := b.measured("memory", ds, "memory", "flat", params{}, bs, qs)
		b.add(r)
		t.row(r.Store, fmtInt(r.N), fmtDur(bs.Time), "–", fmtRecall(r.Recall), fmtDur(qs.Latency.P50), fmtDur(qs.Latency.P95),
			fmtDur(qs.Latency.P99), fmtQPS(r.QPS), fmtQPS(r.QPSAllCores), fmtBytes(r.IndexBytes))
		store.Close()

		r, err = b.sqliteRow(ctx, ds, truth, k)
		if err != nil {
			return err
		}
		b.add(r)
		t.row(r.Store, fmtInt(r.N), fmtDur(secs(r.BuildS)), fmtDur(secs(r.OpenS)), fmtRecall(r.Recall), fmtDur(usDur(r.P50us)),
			fmtDur(usDur(r.P95us)), fmtDur(usDur(r.P99us)), fmtQPS(r.QPS), fmtQPS(r.QPSAllCores), fmtBytes(r.IndexBytes))
	}
	return nil
}

func secs(s float64) time.Duration   { return time.Duration(s * float64(time.Second)) }
func usDur(us float64) time.Duration { return time.Duration(us * 1e3) }

// sqliteRow writes ds into a fresh SQLite file, closes it, reopens it
// (timing the load of the vectors into memory) and searches it exactly.
func (b *bench) sqliteRow(ctx context.Context, ds *recall.Dataset, truth [][]int32, k int) (result, error) {
	dir, err := os.MkdirTemp("", "vecbench-sqlite-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bench.db")
	db, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return result{}, err
	}
	coll, err := db.CreateCollection(ctx, "bench", sqlitestore.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric})
	if err != nil {
		db.Close()
		return result{}, err
	}
	bs, err := b.build(ctx, flat.New(coll), ds, "sqlite file")
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	db, err = sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	coll, err = db.Collection(ctx, "bench")
	if err != nil {
		return result{}, err
	}
	open := time.Since(start)
	qs, err := b.measure(ctx, flat.New(coll), ds, truth, k, "flat/sqlite", nil)
	if err != nil {
		return result{}, err
	}
	r := b.measured("memory", ds, "sqlite", "flat", params{}, bs, qs)
	r.OpenS = open.Seconds()
	return r, nil
}

func (b *bench) add(r result) { b.results = append(b.results, r) }

// indexReport is the --indexes table (and --peers, which adds coder/hnsw).
func (b *bench) indexReport(ctx context.Context) error {
	family := b.c.familyFor("indexes")
	desc := family
	if b.c.dataPath != "" {
		desc = b.c.dataPath
	}
	t := newTable(b.out, "",
		"<data", "<index", "<params", "build", "memory", fmt.Sprintf("recall@%d", b.c.k), "p50", "p95", "p99", "QPS", fmt.Sprintf("QPS ×%d", b.c.threads))
	defer t.close()
	row := func(r result) {
		b.add(r)
		t.row(r.Dataset, r.Index, r.Params.String(), fmtDur(secs(r.BuildS)), fmtBytes(r.IndexBytes), fmtRecall(r.Recall),
			fmtDur(usDur(r.P50us)), fmtDur(usDur(r.P95us)), fmtDur(usDur(r.P99us)), fmtQPS(r.QPS), fmtQPS(r.QPSAllCores))
	}
	sizes := b.c.sizesFor("indexes")
	for _, n := range sizes {
		ds, truth, err := b.dataset(ctx, family, n)
		if err != nil {
			return err
		}
		t.title = fmt.Sprintf("## Indexes: %s %d-d %s, k=%d, %s queries one at a time (QPS also on %d threads)",
			desc, ds.Dim, ds.Metric, b.c.k, fmtInt(len(ds.Queries)), b.c.threads)
		// Exact search.
		store, err := vector.NewMemStore(ds.Dim, ds.Metric)
		if err != nil {
			return err
		}
		fl := flat.New(store)
		bs, err := b.build(ctx, fl, ds, "flat")
		if err != nil {
			return err
		}
		qs, err := b.measure(ctx, fl, ds, truth, b.c.k, "flat", nil)
		if err != nil {
			return err
		}
		row(b.measured("indexes", ds, "memory", "flat", params{}, bs, qs))
		store.Close()

		// HNSW at its defaults.
		store, _ = vector.NewMemStore(ds.Dim, ds.Metric)
		hx, err := hnsw.New(store, nil)
		if err != nil {
			return err
		}
		bs, err = b.build(ctx, hx, ds, "hnsw")
		if err != nil {
			return err
		}
		o := hx.Options()
		qs, err = b.measure(ctx, hx, ds, truth, b.c.k, "hnsw", nil)
		if err != nil {
			return err
		}
		row(b.measured("indexes", ds, "memory", "hnsw", params{M: o.M, EfConstruction: o.EfConstruction, Ef: max(o.EfSearch, b.c.k)}, bs, qs))
		hx = nil
		store.Close()

		// The approximate flat scan (int8 codes, exact rescoring) at its
		// defaults; its memory is the codes', beside the store's vectors.
		store, _ = vector.NewMemStore(ds.Dim, ds.Metric)
		qx, err := qflat.New(store, nil)
		if err != nil {
			return err
		}
		if bs, err = b.build(ctx, qx, ds, "qflat"); err != nil {
			return err
		}
		if qs, err = b.measure(ctx, qx, ds, truth, b.c.k, "qflat", nil); err != nil {
			return err
		}
		row(b.measured("indexes", ds, "memory", "qflat", params{Rescore: qflat.DefaultRescore}, bs, qs))
		qx = nil
		store.Close()

		if b.c.peers {
			if err := b.peerRows(ctx, ds, truth, o.EfSearch, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// peerRows measures github.com/coder/hnsw at its defaults, with its ef
// raised to cairn's default, and with overfetch (see internal/baseline).
func (b *bench) peerRows(ctx context.Context, ds *recall.Dataset, truth [][]int32, ef int, row func(result)) error {
	store, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		return err
	}
	defer store.Close()
	cx, err := baseline.NewCoderHNSW(store, nil)
	if err != nil {
		return err
	}
	bs, err := b.build(ctx, cx, ds, "coder/hnsw")
	if err != nil {
		return err
	}
	m, _, ef0 := cx.Params()
	settings := []params{
		{M: m, EfConstruction: ef0, Ef: ef0},
		{M: m, EfConstruction: ef0, Ef: ef},
		{M: m, EfConstruction: ef0, Ef: ef, Overfetch: true},
	}
	for _, p := range settings {
		if err := cx.SetEfSearch(p.Ef); err != nil {
			return err
		}
		cx.SetOverfetch(p.Overfetch)
		qs, err := b.measure(ctx, cx, ds, truth, b.c.k, "coder/hnsw "+p.String(), nil)
		if err != nil {
			return err
		}
		r := b.measured("peers", ds, "memory", "coder-hnsw", p, bs, qs)
		row(r)
	}
	return nil
}

// writeOutputs writes --json and --plot from whatever was measured.
func (b *bench) writeOutputs() error {
	if b.c.jsonPath != "" {
		rep := struct {
			Machine         machine          `json:"machine"`
			Command         string           `json:"command"`
			Results         []result         `json:"results"`
			Recommendations []recommendation `json:"recommendations"`
		}{b.machine, b.command(), b.results, b.recs}
		if rep.Results == nil {
			rep.Results = []result{}
		}
		if rep.Recommendations == nil {
			rep.Recommendations = []recommendation{}
		}
		err := recall.WriteFile(b.c.jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		})
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if b.c.plotPath != "" {
		if err := b.writePlots(); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}
