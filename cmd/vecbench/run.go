package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errInterrupted reports a run stopped by Ctrl-C after printing what it
// had measured.
var errInterrupted = errors.New("interrupted; the tables above hold what was measured so far")

// exitCode prints err on one line and returns the process's exit status:
// 0, 1 for a failure, 2 for a usage mistake, 130 after Ctrl-C.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errInterrupted) || errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "vecbench:", errInterrupted)
		return 130
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "vecbench: %s (see vecbench --help)\n", msg)
		return 2
	}
	fmt.Fprintf(stderr, "vecbench: %s\n", msg)
	return 1
}

// config is the parsed command line.
type config struct {
	memory, indexes, sweep, peers bool // reports to print
	quick, quiet                  bool
	family                        string // "uniform" or "clustered"; "" for each report's default
	sizes                         []int
	sizesSet                      bool
	dim, nq, k                    int
	memoryK                       int // the memory table's k: 5, or --k if given
	seed                          int64
	threads                       int
	ms, efcs, efs                 []int
	quantize                      hnsw.Quantize // --quantize: the sweep also walks the same graphs with it
	quantizeDims                  int           // --quantize-dims: codes of the first so many components
	dataPath, queryPath, gtPath   string
	metric                        vector.Metric
	exportDir, jsonPath, plotPath string
	cacheDir                      string
	peersJSON                     string    // --peers-json: hnswlib's JSON lines, for the plot
	filtered                      []float64 // --filtered: fractions of the items a filter keeps
	targets                       []float64 // --target-recall: the recall targets of the target report
	splits                        int       // --splits: the target report's other splits of the queries
	clients                       []int     // --clients: concurrent goroutines of the clients report
	weaviate                      string    // --weaviate: the cluster's nodes (weaviate.go)
	weaviateGRPC                  string    // --weaviate-grpc: their gRPC addresses
	args                          []string
}

// A flagGroup is a report with its flags, kept in a file of its own:
// define registers the flags on fs (storing into c), check validates them
// once every flag is parsed (set names the flags given), quick turns the
// report on when --quick runs every report, asked reports whether the
// command line asked for the report, run prints it, and usage is its block
// of --help. Files add theirs to flagGroups from an init function, so that
// a new report needs no edit elsewhere.
type flagGroup struct {
	usage  string
	define func(fs *flag.FlagSet, c *config)
	check  func(c *config, set map[string]bool) error
	quick  func(c *config)
	asked  func(c *config) bool
	run    func(b *bench, ctx context.Context) error
}

// flagGroups are the flag groups of the files that define one, in the
// order of their file names (the order Go runs init functions in).
var flagGroups []flagGroup

// reportsNamed reports whether any report flag, of parseArgs or of a
// flag group, asked for a report.
func (c *config) reportsNamed() bool {
	if c.indexes || c.sweep || c.peers {
		return true
	}
	for _, g := range flagGroups {
		if g.asked(c) {
			return true
		}
	}
	return false
}

// usage is the text of --help: usageText with the blocks of the flag
// groups among the reports.
func usage() string {
	var b strings.Builder
	for _, g := range flagGroups {
		b.WriteString(g.usage)
	}
	return fmt.Sprintf(usageText, b.String())
}

const usageText = `usage: vecbench [flags]

Reports (Markdown tables on stdout; several may be combined):
  (no report flag)  memory search: exact top 5 over 1,000/10,000/50,000 items,
                    in memory and from a SQLite file (clustered data)
  --indexes         flat, HNSW and qflat: build, latency, throughput, recall@k
                    (10,000/50,000/100,000 items, uniform data)
  --sweep           HNSW over a grid of M, efConstruction and ef, with the
                    Pareto front and a recommended setting per target recall
  --peers           the index table plus github.com/coder/hnsw as a baseline
  --quick           every report at small sizes (a smoke run of under a minute)
%s
Data:
  --clustered | --uniform   the synthetic family: 500 Gaussian clusters on the
                            unit sphere (like real embeddings), or uniform on it
  --sizes 10000,50000       base sizes          --dim 768      dimension
  --queries 1000            number of queries, or a query file with --data
  --k 10                    results per query   --seed 1       generator seed
                            (the memory table's: 5 unless --k is given)
  --data base.fvecs --queries query.fvecs [--gt gt.ivecs] [--metric cosine|dot|l2]
                            your own vectors (.fvecs, .bvecs or .npy); without
                            --gt the ground truth is computed and cached as
                            NAME.gt.ivecs beside the base file; the metric is
                            NAME.metric's there if any, else cosine
  --data FILE.hdf5          an ann-benchmarks file: train is the base, test the
                            queries, neighbors the ground truth (checked on 100
                            queries), the distance attribute the metric
  --export DIR              write NAME.base.fvecs, NAME.query.fvecs,
                            NAME.gt.ivecs and NAME.metric for each data set,
                            generated or --data (alone: export only)

Sweep grid:
  --m 8,16,32  --efc 100,200  --ef 10,20,40,80,160,320
  --quantize int8|binary    also walk each graph on int8 or 1-bit codes
                            (hnsw.QuantizeInt8, hnsw.QuantizeBinary): the same
                            graph loaded again, its rows beside the float32
                            ones, each ef measured float32 then on the codes
  --quantize-dims 256       codes of each vector's first 256 components only
                            (hnsw.Options.QuantizeDims: Matryoshka truncation)

Output and run:
  --json FILE     every figure and the machine, as JSON (fields in vecbench's doc)
  --plot FILE     .svg or .png: recall@k against QPS (for --sweep), or, for
                  --indexes alone, build time and memory against items; with
                  both, the second goes to FILE-build.svg (or .png)
  --peers-json F  another system's JSON lines (fields as --json's results;
                  bench/peers.sh makes hnswlib's, faiss's and usearch's)
                  drawn on the recall plot beside cairn
  --threads N     cores to use (GOMAXPROCS; default all)
  --cache DIR     where generated ground truth is kept (default: user cache dir)
  --quiet         no progress on stderr
`

// parseArgs turns the command line into a config; every mistake is a
// usageError naming the flag.
func parseArgs(args []string, stdout io.Writer) (*config, error) {
	fs := flag.NewFlagSet("vecbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &config{args: args}
	var uniform, clustered bool
	var sizes, queries, ms, efcs, efs, metric, quantize string
	fs.BoolVar(&c.indexes, "indexes", false, "")
	fs.BoolVar(&c.sweep, "sweep", false, "")
	fs.StringVar(&quantize, "quantize", "", "")
	fs.IntVar(&c.quantizeDims, "quantize-dims", 0, "")
	fs.BoolVar(&c.peers, "peers", false, "")
	fs.BoolVar(&c.quick, "quick", false, "")
	fs.BoolVar(&c.quiet, "quiet", false, "")
	fs.BoolVar(&uniform, "uniform", false, "")
	fs.BoolVar(&clustered, "clustered", false, "")
	fs.StringVar(&sizes, "sizes", "", "")
	fs.IntVar(&c.dim, "dim", 768, "")
	fs.StringVar(&queries, "queries", "", "")
	fs.IntVar(&c.k, "k", 10, "")
	fs.Int64Var(&c.seed, "seed", 1, "")
	fs.IntVar(&c.threads, "threads", 0, "")
	fs.StringVar(&ms, "m", "", "")
	fs.StringVar(&efcs, "efc", "", "")
	fs.StringVar(&efs, "ef", "", "")
	fs.StringVar(&c.dataPath, "data", "", "")
	fs.StringVar(&c.gtPath, "gt", "", "")
	fs.StringVar(&metric, "metric", "cosine", "")
	fs.StringVar(&c.exportDir, "export", "", "")
	fs.StringVar(&c.jsonPath, "json", "", "")
	fs.StringVar(&c.plotPath, "plot", "", "")
	fs.StringVar(&c.cacheDir, "cache", "", "")
	fs.StringVar(&c.peersJSON, "peers-json", "", "")
	for _, g := range flagGroups {
		g.define(fs, c)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage())
			return nil, nil
		}
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var err error
	if uniform && clustered {
		return nil, usagef("--uniform and --clustered exclude each other")
	}
	if uniform {
		c.family = "uniform"
	}
	if clustered {
		c.family = "clustered"
	}
	if c.metric, err = vector.ParseMetric(metric); err != nil {
		return nil, usagef("--metric %q: want cosine, dot or l2", metric)
	}
	c.memoryK = 5
	if set["k"] {
		c.memoryK = c.k
	}
	if set["metric"] && c.dataPath == "" {
		return nil, usagef("--metric applies to --data only (generated data is cosine)")
	}
	hdf5 := isHDF5(c.dataPath)
	if hdf5 && set["metric"] {
		return nil, usagef("--data %s: the metric comes from the file's distance attribute; drop --metric", c.dataPath)
	}
	if c.dataPath != "" && !hdf5 {
		// A set --export wrote says its metric beside it.
		path := filepath.Join(filepath.Dir(c.dataPath), dataName(c.dataPath)+".metric")
		m, ok, err := readMetric(path)
		switch {
		case err != nil:
			return nil, err
		case ok && !set["metric"]:
			c.metric = m
		case ok && m != c.metric:
			return nil, usagef("--metric %s, but %s says %s", c.metric, path, m)
		}
	}
	if c.dim <= 0 || c.dim > 1<<16 {
		return nil, usagef("--dim %d: want 1..65536", c.dim)
	}
	if c.k <= 0 || c.k > 100 {
		return nil, usagef("--k %d: want 1..100 (ground truth is kept 100 deep)", c.k)
	}
	if c.threads < 0 {
		return nil, usagef("--threads %d: want a positive number", c.threads)
	}
	if sizes != "" {
		if c.sizes, err = intList("sizes", sizes, 1, 100_000_000); err != nil {
			return nil, err
		}
		c.sizesSet = true
	}
	// --queries is a count, or with --data a file of queries.
	c.nq = 1000
	if hdf5 && (queries != "" || c.gtPath != "") {
		return nil, usagef("--data %s holds its queries (test) and ground truth (neighbors); drop --queries and --gt", c.dataPath)
	}
	if queries != "" {
		if n, err := strconv.Atoi(queries); err == nil {
			if n <= 0 || n > 1_000_000 {
				return nil, usagef("--queries %d: want 1..1000000", n)
			}
			c.nq = n
		} else if c.dataPath != "" {
			c.queryPath = queries
		} else {
			return nil, usagef("--queries %q is neither a count nor, without --data, usable as a file", queries)
		}
	}
	if c.dataPath != "" && c.queryPath == "" && !hdf5 {
		return nil, usagef("--data needs --queries FILE (the query vectors)")
	}
	if c.gtPath != "" && c.dataPath == "" {
		return nil, usagef("--gt applies to --data only")
	}
	if c.dataPath != "" && (c.family != "" || set["dim"] || set["seed"] || set["sizes"]) {
		return nil, usagef("--data takes its sizes and dimension from the files: drop --clustered/--uniform/--dim/--seed/--sizes")
	}
	for _, g := range []struct {
		name string
		s    string
		dst  *[]int
	}{{"m", ms, &c.ms}, {"efc", efcs, &c.efcs}, {"ef", efs, &c.efs}} {
		if g.s != "" {
			if *g.dst, err = intList(g.name, g.s, 1, 1<<20); err != nil {
				return nil, err
			}
		}
	}
	for _, m := range c.ms {
		if m < 2 || m > 1024 {
			return nil, usagef("--m %d: want 2..1024", m)
		}
	}
	if (ms != "" || efcs != "" || efs != "") && !c.sweep && !c.quick {
		return nil, usagef("--m, --efc and --ef set the grid of --sweep")
	}
	if quantize != "" {
		q, err := hnsw.ParseQuantize(quantize)
		if err != nil {
			return nil, usagef("--quantize %s: want int8 or binary (or none)", quantize)
		}
		if !c.sweep {
			return nil, usagef("--quantize walks the graphs of --sweep; add --sweep")
		}
		c.quantize = q
	}
	if c.quantizeDims != 0 && (c.quantize == hnsw.QuantizeNone || c.quantizeDims < 0) {
		return nil, usagef("--quantize-dims %d: a positive number, with --quantize", c.quantizeDims)
	}
	for _, p := range []struct{ flag, path string }{{"json", c.jsonPath}, {"plot", c.plotPath}} {
		if p.path != "" {
			if dir := filepath.Dir(p.path); !isDir(dir) {
				return nil, usagef("--%s %s: directory %s does not exist", p.flag, p.path, dir)
			}
		}
	}
	if c.peersJSON != "" {
		if c.plotPath == "" {
			return nil, usagef("--peers-json %s: the peers are drawn on the plot; add --plot FILE", c.peersJSON)
		}
		if fi, err := os.Stat(c.peersJSON); err != nil || fi.IsDir() {
			return nil, usagef("--peers-json %s: no such file", c.peersJSON)
		}
	}
	for _, g := range flagGroups {
		if err := g.check(c, set); err != nil {
			return nil, err
		}
	}
	if c.plotPath != "" {
		if ext := strings.ToLower(filepath.Ext(c.plotPath)); ext != ".svg" && ext != ".png" {
			return nil, usagef("--plot %s: want a .svg or .png file", c.plotPath)
		}
	}

	// Which reports: none named means the memory table (or, with --quick,
	// every report; with --data, the index table; with --export alone,
	// none).
	if !c.reportsNamed() {
		switch {
		case c.quick:
			c.memory, c.indexes, c.sweep, c.peers = true, true, true, true
			for _, g := range flagGroups {
				g.quick(c)
			}
		case c.exportDir != "":
		case c.dataPath != "":
			c.indexes = true
		default:
			c.memory = true
		}
	}
	if c.quick {
		if !set["queries"] {
			c.nq = 200
		}
		if c.ms == nil {
			c.ms = []int{8, 16}
		}
		if c.efcs == nil {
			c.efcs = []int{100}
		}
		if c.efs == nil {
			c.efs = []int{10, 20, 40, 80, 160, 320}
		}
	}
	if c.ms == nil {
		c.ms = []int{8, 16, 32}
	}
	if c.efcs == nil {
		c.efcs = []int{100, 200}
	}
	if c.efs == nil {
		c.efs = []int{10, 20, 40, 80, 160, 320}
	}
	if c.threads == 0 {
		c.threads = runtime.NumCPU()
	}
	if c.plotPath != "" && !c.sweep && !c.indexes && !c.peers {
		return nil, usagef("--plot draws the results of --sweep or --indexes; add one")
	}
	if c.peersJSON != "" && !c.sweep {
		return nil, usagef("--peers-json goes on the recall plot of --sweep; add --sweep")
	}
	return c, nil
}

// sizesFor returns the base sizes of a report: --sizes if given, else the
// report's defaults (smaller under --quick); with --data, one placeholder.
func (c *config) sizesFor(report string) []int {
	if c.dataPath != "" {
		return []int{0} // one pass over the user's data, whatever its size
	}
	if c.sizesSet {
		return c.sizes
	}
	if c.quick {
		if report == "memory" {
			return []int{1000, 2000}
		}
		return []int{2000}
	}
	switch report {
	case "memory":
		return []int{1000, 10000, 50000}
	case "sweep", "filtered", "clients":
		return []int{10000}
	}
	return []int{10000, 50000, 100000}
}

// familyFor returns the data family of a report: the flag if given, else
// clustered (embeddings-like) for the memory, filtered and clients
// reports, which measure what users of a store see, and uniform (the
// hard case for a graph) for the index reports.
func (c *config) familyFor(report string) string {
	if c.family != "" {
		return c.family
	}
	switch report {
	case "memory", "filtered", "clients":
		return "clustered"
	}
	return "uniform"
}

func intList(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(strings.ReplaceAll(f, "_", ""))
		n, err := strconv.Atoi(f)
		if err != nil || n < lo || n > hi {
			return nil, usagef("--%s %q: want comma-separated whole numbers in %d..%d", name, s, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// run is vecbench: it parses args, runs the reports, and writes tables to
// stdout and progress to stderr. It returns errInterrupted (after printing
// the partial tables) when ctx is cancelled.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseArgs(args, stdout)
	if err != nil || c == nil {
		return err
	}
	prev := runtime.GOMAXPROCS(c.threads)
	defer runtime.GOMAXPROCS(prev)
	p := newProgress(stderr, c.quiet)
	p.stopped = func() bool { return ctx.Err() != nil }
	b := newBench(c, stdout, p)
	err = b.runAll(ctx)
	if ctx.Err() != nil {
		err = errInterrupted
	}
	if werr := b.writeOutputs(); werr != nil && err == nil {
		err = werr
	}
	return err
}
