package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// runArgs runs vecbench with args and returns stdout, stderr and the error.
func runArgs(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
		{[]string{"--dim", "x"}, "invalid value"},
		{[]string{"--dim", "0"}, "--dim 0"},
		{[]string{"--k", "500"}, "--k 500"},
		{[]string{"--sizes", "10,abc"}, "--sizes"},
		{[]string{"--sizes", "-5"}, "--sizes"},
		{[]string{"--queries", "0"}, "--queries 0"},
		{[]string{"--queries", "q.fvecs"}, "neither a count"},
		{[]string{"--data", "b.fvecs"}, "--data needs --queries FILE"},
		{[]string{"--gt", "g.ivecs"}, "--gt applies to --data only"},
		{[]string{"--metric", "l2"}, "--metric applies to --data only"},
		{[]string{"--data", "b.fvecs", "--queries", "q.fvecs", "--metric", "hamming"}, "--metric \"hamming\""},
		{[]string{"--uniform", "--clustered"}, "exclude each other"},
		{[]string{"--ef", "10,20"}, "set the grid of --sweep"},
		{[]string{"--sweep", "--m", "1"}, "--m 1"},
		{[]string{"--sweep", "--quantize", "int4"}, "--quantize int4"},
		{[]string{"--indexes", "--quantize", "int8"}, "add --sweep"},
		{[]string{"--sweep", "--quantize-dims", "8"}, "--quantize-dims 8"},
		{[]string{"--sweep", "--quantize", "binary", "--quantize-dims", "-2"}, "--quantize-dims -2"},
		{[]string{"--plot", filepath.Join(dir, "x.pdf")}, "want a .svg or .png"},
		{[]string{"--json", filepath.Join(dir, "missing", "x.json")}, "does not exist"},
		{[]string{"--threads", "-1"}, "--threads -1"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--data", "b.fvecs", "--queries", "q.fvecs", "--clustered"}, "--data takes its sizes"},
		{[]string{"--filtered", "0"}, "--filtered \"0\": want comma-separated fractions"},
		{[]string{"--filtered", "1"}, "--filtered \"1\""},
		{[]string{"--filtered", "0.01,abc"}, "--filtered \"0.01,abc\""},
		{[]string{"--filtered", "150%"}, "--filtered \"150%\""},
		{[]string{"--filtered", ""}, "--filtered \"\""},
		{[]string{"--clients", "0"}, "--clients \"0\""},
		{[]string{"--weaviate-grpc", "a:1"}, "--weaviate-grpc needs --weaviate"},
		{[]string{"--weaviate", "a:1", "--weaviate-grpc", "b:1,"}, "--weaviate-grpc \"b:1,\""},
		{[]string{"--target-recall", "0"}, "--target-recall: \"0\" is not a recall in (0, 1]"},
		{[]string{"--target-recall", "0.9,1.5"}, "\"1.5\" is not a recall"},
		{[]string{"--target-recall", "high"}, "\"high\" is not a recall"},
		{[]string{"--splits", "5"}, "--splits: a number of splits ≥ 0, with --target-recall"},
		{[]string{"--target-recall", "0.9", "--splits", "-1"}, "--splits: a number of splits"},
		{[]string{"--clients", "1,two"}, "--clients \"1,two\""},
		{[]string{"--clients", "5000"}, "--clients \"5000\""},
		{[]string{"--plot", filepath.Join(dir, "x.svg")}, "--plot draws the results of --sweep or --indexes"},
		{[]string{"--filtered", "0.5", "--plot", filepath.Join(dir, "x.svg")}, "--plot draws the results"},
		{[]string{"--sweep", "--peers-json", filepath.Join(dir, "p.jsonl")}, "add --plot FILE"},
		{[]string{"--sweep", "--plot", filepath.Join(dir, "x.svg"), "--peers-json", filepath.Join(dir, "none.jsonl")}, "no such file"},
		{[]string{"--indexes", "--plot", filepath.Join(dir, "x.svg"), "--peers-json", "testdata/hnswlib.jsonl"}, "add --sweep"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, _, err := runArgs(t, context.Background(), c.args...)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a usage error mentioning %q", err, c.want)
			}
			if out != "" {
				t.Errorf("printed %q before failing", out)
			}
			var stderr bytes.Buffer
			if code := exitCode(err, &stderr); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.HasPrefix(stderr.String(), "vecbench: ") {
				t.Errorf("stderr %q: want one line", stderr.String())
			}
		})
	}
}

func TestHelp(t *testing.T) {
	out, _, err := runArgs(t, context.Background(), "--help")
	if err != nil || !strings.Contains(out, "usage: vecbench") || !strings.Contains(out, "--sweep") {
		t.Fatalf("help: %v\n%s", err, out)
	}
	for _, f := range []string{"--filtered 0.01,0.99", "--clients 1,2,4,8,16", "--target-recall 0.9,0.95,0.99", "--peers-json", "--plot FILE"} {
		if !strings.Contains(out, f) {
			t.Errorf("help lacks %s", f)
		}
	}
}

// tiny are flags that keep a run to a fraction of a second.
func tiny(cache string, more ...string) []string {
	return append([]string{"--dim", "32", "--queries", "20", "--quiet", "--cache", cache}, more...)
}

func TestIndexesAndPeersJSON(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	plotPath := filepath.Join(dir, "out.svg")
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--indexes", "--peers", "--clustered", "--sizes", "300",
		"--json", jsonPath, "--plot", plotPath)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if errOut != "" {
		t.Errorf("--quiet printed %q", errOut)
	}
	for _, want := range []string{"machine: ", "command: vecbench --dim 32", "## Indexes: clustered 32-d cosine, k=10",
		"| clustered-300-d32 | flat | – |", "| clustered-300-d32 | hnsw | M=16 efC=200 ef=64 |", "| clustered-300-d32 | qflat | rescore=8 |",
		"| clustered-300-d32 | coder-hnsw |", "overfetch"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Machine map[string]any   `json:"machine"`
		Command string           `json:"command"`
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cpu", "cores", "go", "commit"} {
		if _, ok := rep.Machine[key]; !ok {
			t.Errorf("machine lacks %q", key)
		}
	}
	if !strings.HasPrefix(rep.Command, "vecbench ") || len(rep.Results) != 6 {
		t.Fatalf("command %q, %d results", rep.Command, len(rep.Results))
	}
	for _, r := range rep.Results {
		for _, key := range []string{"dataset", "n", "dim", "metric", "store", "index", "params", "build_s", "index_bytes", "k", "recall", "p50_us", "p95_us", "p99_us", "qps"} {
			if _, ok := r[key]; !ok {
				t.Errorf("result lacks %q: %v", key, r)
			}
		}
	}
	flat, hn := rep.Results[0], rep.Results[1]
	if flat["index"] != "flat" || flat["recall"] != 1.0 || flat["n"] != 300.0 || flat["metric"] != "cosine" || flat["store"] != "memory" {
		t.Errorf("flat result %v", flat)
	}
	if p := hn["params"].(map[string]any); hn["index"] != "hnsw" || p["M"] != 16.0 || p["ef_construction"] != 200.0 || p["ef"] != 64.0 {
		t.Errorf("hnsw result %v", hn)
	}
	// 300 clustered points at ef=64: HNSW is all but exact.
	if r := hn["recall"].(float64); r < 0.95 {
		t.Errorf("hnsw recall %v", r)
	}
	if svg, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
	// The ground truth was cached and is reused.
	if _, err := os.Stat(filepath.Join(dir, "clustered-300-d32-q20.gt.ivecs")); err != nil {
		t.Errorf("ground truth not cached: %v", err)
	}
}

func TestSweep(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "sweep.png")
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--sweep", "--sizes", "400", "--m", "4,8", "--efc", "40", "--ef", "10,40", "--plot", png)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot is not a PNG: %v", err)
	}
	for _, want := range []string{"## HNSW sweep: uniform-400-d32", "| 4 | 40 | 10 |", "| 8 | 40 | 40 |", "★",
		"### Recommended settings for uniform-400-d32", "recall@10 ≥ 0.90"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n| ") != 5 { // header + 4 settings
		t.Errorf("want 4 rows:\n%s", out)
	}
}

// TestSweepQuantize checks that --quantize int8 adds the int8 walk of the
// same graphs: a table of its own with the same columns, rows marked in
// the JSON, and a recommendation that sets the option.
func TestSweepQuantize(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--sweep", "--clustered", "--sizes", "600", "--m", "8", "--efc", "40",
		"--ef", "10,80", "--quantize", "int8", "--json", jsonPath)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"## HNSW sweep: clustered-600-d32", "## HNSW sweep, walking int8 codes (the same graphs, finalists rescored exactly): clustered-600-d32",
		"Quantize: hnsw.QuantizeInt8"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n| 8 | 40 |") != 4 { // 2 efs × 2 walks
		t.Errorf("want 4 rows:\n%s", out)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []result `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range doc.Results {
		if r.Params.Quantize == "int8" {
			n++
			if r.Recall < 0.5 || r.QPS <= 0 || r.IndexBytes <= 0 {
				t.Errorf("int8 row %+v", r)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d int8 rows in the JSON, want 2", n)
	}
}

func TestMemoryTable(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--sizes", "200")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"## Memory search: exact top 5, clustered 32-d", "| memory | 200 |", "| sqlite | 200 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Exact search: recall@5 is 1 from memory and from the file.
	if strings.Count(out, "| 1.000 |") != 2 {
		t.Errorf("exact search did not reach recall 1:\n%s", out)
	}
	// --k sets its k too.
	out, errOut, err = runArgs(t, context.Background(), tiny(dir, "--sizes", "200", "--k", "3")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"## Memory search: exact top 3,", "| recall@3 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("with --k 3, output lacks %q:\n%s", want, out)
		}
	}
}

func TestExportThenData(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--export", exp, "--clustered", "--sizes", "250")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if strings.Contains(out, "##") {
		t.Errorf("--export alone printed a report:\n%s", out)
	}
	name := filepath.Join(exp, "clustered-250-d32-q20")
	base, err := recall.LoadVectors(name + ".base.fvecs")
	if err != nil || len(base) != 250 {
		t.Fatalf("base: %d, %v", len(base), err)
	}
	want := recall.Clustered(250, 20, 32, 1)
	if !equalVecs(base, want.Base) {
		t.Error("exported base differs from the generator's")
	}
	gt, err := recall.LoadIvecs(name + ".gt.ivecs")
	if err != nil || len(gt) != 20 || len(gt[0]) != 100 {
		t.Fatalf("gt: %v", err)
	}

	// The same files as user data, with and without --gt.
	for _, extra := range [][]string{{"--gt", name + ".gt.ivecs"}, nil} {
		args := append([]string{"--data", name + ".base.fvecs", "--queries", name + ".query.fvecs", "--quiet"}, extra...)
		out, errOut, err := runArgs(t, context.Background(), args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if !strings.Contains(out, "| clustered-250-d32-q20 | flat | – |") || !strings.Contains(out, "| 1.000 |") {
			t.Errorf("data run:\n%s", out)
		}
	}
	// --quick on user data: every report once, on the whole file.
	out, errOut, err = runArgs(t, context.Background(), "--data", name+".base.fvecs", "--queries", name+".query.fvecs", "--quick", "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"| memory | 250 |", "| sqlite | 250 |", "| clustered-250-d32-q20 | hnsw |", "## HNSW sweep: clustered-250-d32-q20"} {
		if strings.Count(out, want) != 1 {
			t.Errorf("want %q once:\n%s", want, out)
		}
	}
}

func TestBadDataFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.fvecs")
	recall.SaveFvecs(good, recall.Uniform(20, 0, 8, 1).Base)
	bad := filepath.Join(dir, "bad.fvecs")
	b, _ := os.ReadFile(good)
	os.WriteFile(bad, b[:len(b)-2], 0o644)
	wide := filepath.Join(dir, "wide.fvecs")
	recall.SaveFvecs(wide, recall.Uniform(5, 0, 9, 1).Base)
	nan := filepath.Join(dir, "nan.fvecs")
	vs := recall.Uniform(3, 0, 8, 1).Base
	vs[1][2] = float32(nanValue())
	recall.SaveFvecs(nan, vs)
	shortGT := filepath.Join(dir, "short.gt.ivecs")
	recall.SaveIvecs(shortGT, [][]int32{{1, 2, 3}})
	for _, c := range []struct {
		name string
		args []string
		want error
		msg  string
	}{
		{"truncated", []string{"--data", bad, "--queries", good}, vector.ErrCorrupt, "bad.fvecs"},
		{"missing", []string{"--data", filepath.Join(dir, "none.fvecs"), "--queries", good}, os.ErrNotExist, "none.fvecs"},
		{"dims-differ", []string{"--data", good, "--queries", wide}, vector.ErrDimensionMismatch, "dimension 8"},
		{"nan", []string{"--data", good, "--queries", nan}, vector.ErrNonFinite, "vector 1"},
		{"short-gt", []string{"--data", good, "--queries", good, "--gt", shortGT}, vector.ErrCorrupt, "1 rows for 20 queries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runArgs(t, context.Background(), append(c.args, "--quiet")...)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %v mentioning %q", err, c.want, c.msg)
			}
			var stderr bytes.Buffer
			if code := exitCode(err, &stderr); code != 1 || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q", code, stderr.String())
			}
		})
	}
}

func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	jsonPath := filepath.Join(dir, "partial.json")
	out, _, err := runArgs(t, ctx, tiny(dir, "--indexes", "--sizes", "300", "--json", jsonPath)...)
	if !errors.Is(err, errInterrupted) {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(out, "machine: ") {
		t.Errorf("no machine line:\n%s", out)
	}
	var stderr bytes.Buffer
	if code := exitCode(err, &stderr); code != 130 {
		t.Errorf("exit %d", code)
	}
	// What was measured (nothing) is still written.
	b, err := os.ReadFile(jsonPath)
	if err != nil || !json.Valid(b) || !bytes.Contains(b, []byte(`"results": []`)) {
		t.Errorf("partial JSON: %v\n%s", err, b)
	}
}

func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false)
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	cb := p.begin("build hnsw x")
	cb(10, 100) // under a second: silent
	now = now.Add(2 * time.Second)
	cb(50, 100) // first report
	now = now.Add(time.Second)
	cb(60, 100) // too soon after the last line
	now = now.Add(5 * time.Second)
	cb(90, 100)
	now = now.Add(10 * time.Second)
	cb(100, 100) // left to end
	p.end()
	got := buf.String()
	want := "vecbench: build hnsw x: 50% (50/100), about 2s left\n" +
		"vecbench: build hnsw x: 90% (90/100), about 889ms left\n" +
		"vecbench: build hnsw x: done in 18s\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// An interrupted stage says so.
	buf.Reset()
	p.stopped = func() bool { return true }
	cb = p.begin("ground truth y")
	now = now.Add(3 * time.Second)
	cb(1, 4)
	p.end()
	if want := "vecbench: ground truth y: 25% (1/4), about 9s left\nvecbench: ground truth y: stopped after 3s\n"; buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	p.stopped = nil

	// A short stage prints nothing, and quiet prints nothing at all.
	buf.Reset()
	cb = p.begin("short")
	cb(1, 1)
	p.end()
	q := newProgress(&buf, true)
	q.now = p.now
	cb = q.begin("quiet")
	now = now.Add(time.Hour)
	cb(1, 2)
	q.end()
	q.note("hello")
	if buf.Len() != 0 {
		t.Errorf("printed %q", buf.String())
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtDur(85200 * time.Nanosecond), "85.2 µs"},
		{fmtDur(1234 * time.Microsecond), "1.23 ms"},
		{fmtDur(12345 * time.Millisecond), "12.3 s"},
		{fmtDur(0), "–"},
		{fmtBytes(512), "512 B"},
		{fmtBytes(3 << 20), "3.00 MiB"},
		{fmtInt(100000), "100,000"},
		{fmtInt(999), "999"},
		{fmtInt(-1234567), "-1,234,567"},
		{fmtQPS(12345.6), "12,346"},
		{fmtRecall(0.98765), "0.988"},
		{dataName("/d/sift.base.fvecs"), "sift"},
		{dataName("x/glove.npy"), "glove"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestParetoAndRecommend(t *testing.T) {
	rows := []result{
		{Recall: 0.80, QPS: 1000}, // front: fastest
		{Recall: 0.91, QPS: 900},  // front
		{Recall: 0.90, QPS: 800},  // beaten by the row above
		{Recall: 0.96, QPS: 300},  // front
		{Recall: 0.96, QPS: 200},  // beaten (same recall, slower)
	}
	markPareto(rows)
	for i, want := range []bool{true, true, false, true, false} {
		if rows[i].Pareto != want {
			t.Errorf("row %d pareto %v, want %v", i, rows[i].Pareto, want)
		}
	}
	got := recommend(rows)
	if want := []int{1, 3, -1}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("recommend %v, want %v", got, want)
	}
}

func equalVecs(a, b []vector.Vector) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func nanValue() float64 { var z float64; return z / z }

// TestSweepQuantizeDims checks --quantize binary --quantize-dims: the
// walk's table is labelled with the codes, and a recommendation of such
// a row sets both options.
func TestSweepQuantizeDims(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--sweep", "--clustered", "--sizes", "600", "--m", "8", "--efc", "40",
		"--ef", "10,80", "--quantize", "binary", "--quantize-dims", "24")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if want := "## HNSW sweep, walking binary-24 codes"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	for label, want := range map[string]string{
		"binary-24": "hnsw.Options{M: 8, EfConstruction: 40, EfSearch: 80, Quantize: hnsw.QuantizeBinary, QuantizeDims: 24}",
		"int8":      "hnsw.Options{M: 8, EfConstruction: 40, EfSearch: 80, Quantize: hnsw.QuantizeInt8}",
		"":          "hnsw.Options{M: 8, EfConstruction: 40, EfSearch: 80}",
	} {
		if got := hnswOptions(params{M: 8, EfConstruction: 40, Ef: 80, Quantize: label}); got != want {
			t.Errorf("%q: %s, want %s", label, got, want)
		}
	}
}
