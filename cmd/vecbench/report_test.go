// This file tests the filtered and clients reports, the recommendations,
// the plots, and the shape of --json (against a golden file).

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/parser"
	"html"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

var update = flag.Bool("update", false, "rewrite testdata/json-shape.golden")

func TestFilterLabels(t *testing.T) {
	const n = 1000
	a, b := newFilterLabels(n, 1), newFilterLabels(n, 1)
	if !slices.Equal(a.rank, b.rank) {
		t.Fatal("the same seed labels differently")
	}
	if slices.Equal(a.rank, newFilterLabels(n, 2).rank) {
		t.Error("another seed labels the same")
	}
	small, large := a.set(0.01), a.set(0.99)
	if small.Len() != 10 || large.Len() != 990 || a.kept(0.0001) != 1 {
		t.Errorf("kept %d and %d, and %d for a tiny fraction", small.Len(), large.Len(), a.kept(0.0001))
	}
	small.All(func(id vector.ID) bool {
		if !large.Allow(id) {
			t.Errorf("id %d in the 1%% set but not the 99%% one", id)
		}
		return true
	})
	for i := range n {
		md := a.metadata(i, []float64{0.01, 0.99})
		if md[metadataKey(0.01)] != small.Allow(vector.ID(i)) || md[metadataKey(0.99)] != large.Allow(vector.ID(i)) {
			t.Fatalf("item %d: metadata %v disagrees with the sets", i, md)
		}
	}
	if metadataKey(0.01) != "keep_0.01" {
		t.Errorf("key %q", metadataKey(0.01))
	}
}

func TestFractionList(t *testing.T) {
	got, err := fractionList("filtered", "0.99, 1%,0.01")
	if err != nil || !slices.Equal(got, []float64{0.01, 0.99}) {
		t.Errorf("got %v, %v", got, err)
	}
}

// bruteFiltered is the exact filtered top k by a plain float64 loop.
func bruteFiltered(ds *recall.Dataset, q vector.Vector, set *vector.IDSet, k int) []int32 {
	type hit struct {
		d float64
		p int32
	}
	var hits []hit
	for i, v := range ds.Base {
		if set.Allow(vector.ID(i)) {
			hits = append(hits, hit{ds.Metric.Distance(q, v), int32(i)})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		return hits[i].d < hits[j].d || hits[i].d == hits[j].d && hits[i].p < hits[j].p
	})
	out := make([]int32, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.p)
	}
	return out
}

func TestFilteredTruth(t *testing.T) {
	ds := recall.Clustered(600, 25, 16, 3)
	truth, err := recall.GroundTruth(context.Background(), ds, recall.GroundTruthK)
	if err != nil {
		t.Fatal(err)
	}
	labels := newFilterLabels(len(ds.Base), 5)
	// 3% cannot come from the top 100 (computed afresh), 90% can.
	for _, f := range []float64{0.03, 0.9} {
		set := labels.set(f)
		got, err := filteredTruth(context.Background(), ds, truth, set, 10)
		if err != nil {
			t.Fatal(err)
		}
		for q := range ds.Queries {
			if want := bruteFiltered(ds, ds.Queries[q], set, 10); !slices.Equal(got[q], want) {
				t.Fatalf("fraction %g, query %d: got %v, want %v", f, q, got[q], want)
			}
		}
	}
}

// decodeReport reads a --json file.
func decodeReport(t *testing.T, path string) (map[string]any, []result) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var rep struct{ Results []result }
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return raw, rep.Results
}

func TestFilteredReport(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "f.json")
	// At 1,200 items a filter keeping 5% is scored exactly by both
	// indexes, one keeping 95% walked (HNSW) or scanned (flat).
	out, errOut, err := runArgs(t, context.Background(), "--dim", "16", "--queries", "30", "--quiet", "--cache", dir,
		"--filtered", "0.05,0.95", "--sizes", "1200", "--json", jsonPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{
		"## Filtered search: clustered-1200-d16",
		"| flat | 5% (60) | allow-list | exact scoring of the allow-list ★ | 1.000 |",
		"| flat | 95% (1,140) | allow-list | filtered scan ★ | 1.000 |",
		"| flat | 95% (1,140) | allow-list | exact scoring of the allow-list | 1.000 |",
		"| flat | 5% (60) | memory store filter | exact scoring of the allow-list ★ | 1.000 |",
		"| hnsw | 5% (60) | allow-list | exact scoring of the allow-list ★ | 1.000 |",
		"| hnsw | 95% (1,140) | allow-list | filtered graph walk ★ |",
		"| hnsw | 5% (60) | allow-list | filtered graph walk |",
		"| hnsw | 95% (1,140) | memory store filter | filtered graph walk ★ |",
		"- hnsw, filter keeping 95%: the rule chose filtered graph walk",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, rows := decodeReport(t, jsonPath)
	if len(rows) != 12 {
		t.Fatalf("%d results, want 2 indexes × 2 fractions × 3 ways", len(rows))
	}
	for _, r := range rows {
		if r.Report != "filtered" || r.FilterItems != int(math.Round(r.FilterFraction*1200)) {
			t.Errorf("row %+v", r)
		}
		// Exact strategies are exact; so is flat's scan. HNSW's walk
		// over a 1,200-item graph at ef = 64 is all but exact.
		floor := 1.0
		if r.FilterStrategy == strategyWalk {
			floor = 0.9
		}
		if r.Recall < floor {
			t.Errorf("%s %s %s at %g: recall %.3f, want ≥ %.2f", r.Index, r.FilterRoute, r.FilterStrategy, r.FilterFraction, r.Recall, floor)
		}
	}
}

func TestFilteredTooFew(t *testing.T) {
	_, _, err := runArgs(t, context.Background(), tiny(t.TempDir(), "--filtered", "0.01", "--sizes", "300")...)
	if err == nil || !strings.Contains(err.Error(), "keeps 3 of the 300 items, fewer than k = 10") {
		t.Fatalf("got %v", err)
	}
}

func TestClientsReport(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "c.json")
	out, errOut, err := runArgs(t, context.Background(), tiny(dir, "--clients", "3,1", "--sizes", "300", "--json", jsonPath)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"## Concurrent clients: clustered-300-d32", "| flat | – | 1 |", "| flat | – | 3 |", "| hnsw | M=16 efC=200 ef=64 | 3 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, rows := decodeReport(t, jsonPath)
	if len(rows) != 4 {
		t.Fatalf("%d results", len(rows))
	}
	for i, r := range rows {
		if r.Clients != []int{1, 3}[i%2] || r.Queries != 20 || r.QPS <= 0 || r.P50us > r.P95us || r.P95us > r.P99us {
			t.Errorf("row %+v", r)
		}
		if r.LoadS < r.InsertS || r.LoadS < r.BuildS || r.InsertS <= 0 {
			t.Errorf("%s: load %v s, insert %v s, build %v s", r.Index, r.LoadS, r.InsertS, r.BuildS)
		}
		if r.Index == "flat" && (r.Recall != 1 || r.BuildS != 0) {
			t.Errorf("flat: recall %v, build %v", r.Recall, r.BuildS)
		}
		if r.Index == "hnsw" && r.Recall < 0.95 {
			t.Errorf("hnsw recall %v", r.Recall)
		}
	}
}

func TestRecommendationsAreGo(t *testing.T) {
	ds := &recall.Dataset{Dim: 768, Metric: vector.Dot}
	p := params{M: 16, EfConstruction: 200, Ef: 40}
	if got, want := collectionConfig(ds, p), "cairn.CollectionConfig{Dim: 768, Metric: vector.Dot, Index: cairn.HNSW, HNSW: hnsw.Options{M: 16, EfConstruction: 200, EfSearch: 40}}"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	for _, src := range []string{hnswOptions(p), collectionConfig(ds, p)} {
		if _, err := parser.ParseExpr(src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

func TestRecallScale(t *testing.T) {
	s := recallScale{top: recallTop(1000, 10)}
	if s.top != 0.99995 {
		t.Errorf("top %v", s.top)
	}
	lo, hi := s.recallRange(0.93)
	// 0.9, 0.99 and 0.999 are equally far apart.
	a, b, c := s.Normalize(lo, hi, 0.9), s.Normalize(lo, hi, 0.99), s.Normalize(lo, hi, 0.999)
	if math.Abs((b-a)-(c-b)) > 1e-9 || a <= 0 || s.Normalize(lo, hi, s.clamp(1)) >= 1 {
		t.Errorf("0.9 → %v, 0.99 → %v, 0.999 → %v", a, b, c)
	}
	ticks := s.Ticks(lo, hi)
	if last := ticks[len(ticks)-1]; last.Value != s.top || last.Label != "1" {
		t.Errorf("last tick %+v", last)
	}
	if ticks[0].Value != 0.9 || ticks[0].Label != "0.9" {
		t.Errorf("first tick %+v", ticks[0])
	}
}

func TestParetoFront(t *testing.T) {
	s := tradeSeries{points: []tradePoint{{0.9, 100, false}, {0.99, 50, false}, {0.95, 40, false}, {0.8, 90, false}, {1, 60, false}}}
	s.markFront()
	var front []float64
	for _, p := range s.points {
		if p.front {
			front = append(front, p.recall)
		}
	}
	if !slices.Equal(front, []float64{0.9, 1}) {
		t.Errorf("front %v", front)
	}
}

// plotResults are a small sweep and index table, as a run measures them,
// to draw.
func plotResults() []result {
	var rs []result
	base := result{Dataset: "clustered-2000-d64-q200", N: 2000, Dim: 64, Metric: "cosine", Store: "memory", K: 10, Queries: 200}
	for _, m := range []int{8, 16} {
		for i, ef := range []int{10, 40, 160} {
			r := base
			r.Report, r.Index, r.Params = "sweep", "hnsw", params{M: m, EfConstruction: 100, Ef: ef}
			r.Recall, r.QPS = []float64{0.95, 0.995, 1}[i], []float64{80000, 30000, 9000}[i]*float64(m)/8
			rs = append(rs, r)
		}
	}
	for _, n := range []int{2000, 20000} {
		r := base
		r.N, r.Report, r.Index, r.Recall, r.QPS, r.BuildS, r.IndexBytes = n, "indexes", "flat", 1, 20000, 0.002, int64(n)*256
		rs = append(rs, r)
		r.Index, r.Params, r.Recall, r.QPS, r.BuildS, r.IndexBytes = "hnsw", params{M: 16, EfConstruction: 200, Ef: 64}, 0.999, 40000, 0.8, int64(n)*400
		rs = append(rs, r)
	}
	return rs
}

func TestPlotKinds(t *testing.T) {
	dir := t.TempDir()
	peers, err := readPeers("testdata/hnswlib.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	m := detectMachine(2)
	for _, c := range []struct {
		name string
		draw func(path string) error
		want []string // in the SVG
	}{
		{"tradeoff.svg", func(p string) error { return writeTradeoff(p, plotResults(), peers, m) },
			[]string{"Recall@10 against queries per second", "hnsw M=16 efC=100", "hnswlib M=16 efC=200", "n = 2,000, 64-d, cosine", m.Commit, "Liberation Sans,Arial"}},
		{"tradeoff.png", func(p string) error { return writeTradeoff(p, plotResults(), nil, m) }, nil},
		{"build.svg", func(p string) error { return writeBuildPlot(p, plotResults(), m) },
			[]string{"Build time and memory per index", "flat (exact)", "hnsw M=16 efC=200", "20,000"}},
		{"build.png", func(p string) error { return writeBuildPlot(p, plotResults(), m) }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			if err := c.draw(path); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil || len(b) < 1000 {
				t.Fatalf("%d bytes, %v", len(b), err)
			}
			if strings.HasSuffix(c.name, ".png") {
				img, err := png.Decode(bytes.NewReader(b))
				if err != nil || img.Bounds().Dx() < 1000 {
					t.Fatalf("png: %v", err)
				}
				return
			}
			for _, w := range c.want {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("svg lacks %q", w)
				}
			}
		})
	}
	// Peers of another data set are refused, not silently left off.
	other := slices.Clone(peers)
	for i := range other {
		other[i].N = 5
	}
	if err := writeTradeoff(filepath.Join(dir, "x.svg"), plotResults(), other, m); err == nil || !strings.Contains(err.Error(), "no line measured n = 2000") {
		t.Errorf("got %v", err)
	}
}

// jsonShape lists every key of v with the JSON type of its value, one
// line each; results are grouped by their report, and the keys of the
// elements of a list are the union over its elements.
func jsonShape(prefix string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			jsonShape(prefix+"."+k, e, out)
		}
	case []any:
		out[prefix+" array"] = true
		for _, e := range x {
			p := prefix + "[]"
			if m, ok := e.(map[string]any); ok && m["report"] != nil {
				p = fmt.Sprintf("%s[report=%v]", prefix, m["report"])
			}
			jsonShape(p, e, out)
		}
	case string:
		out[prefix+" string"] = true
	case float64:
		out[prefix+" number"] = true
	case bool:
		out[prefix+" bool"] = true
	case nil:
		out[prefix+" null"] = true
	}
}

// TestJSONShape runs every report once and compares the keys and types of
// --json with testdata/json-shape.golden (go test -run TestJSONShape
// -update rewrites it): a renamed or dropped field fails here.
func TestJSONShape(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "all.json")
	_, errOut, err := runArgs(t, context.Background(), tiny(dir, "--indexes", "--peers", "--sweep", "--m", "8", "--efc", "40", "--ef", "10,80",
		"--filtered", "0.05,0.9", "--clients", "1,2", "--sizes", "300", "--json", jsonPath)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// The memory table, apart: it is the default report.
	memPath := filepath.Join(dir, "memory.json")
	if _, errOut, err := runArgs(t, context.Background(), tiny(dir, "--sizes", "200", "--json", memPath)...); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	shape := map[string]bool{}
	for _, p := range []string{jsonPath, memPath} {
		raw, _ := decodeReport(t, p)
		jsonShape("", raw, shape)
	}
	var lines []string
	for l := range shape {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := "testdata/json-shape.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the shape of --json changed (run with -update if on purpose, and update vecbench's doc):\ngot\n%s\nwant\n%s", got, want)
	}
}

// TestPeersOnPlot: --peers-json end to end, on the data set the fixture
// was measured on (../shared/peers/run over vecbench --export of
// clustered-2000-d64 with 200 queries).
func TestPeersOnPlot(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "sweep.svg")
	_, errOut, err := runArgs(t, context.Background(), "--sweep", "--clustered", "--sizes", "2000", "--dim", "64", "--queries", "200",
		"--m", "4", "--efc", "20", "--ef", "10,40", "--quiet", "--cache", dir, "--plot", svg, "--peers-json", "testdata/hnswlib.jsonl")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hnswlib M=16 efC=200 (2 build threads)", "hnsw M=4 efC=20", "clustered-2000-d64"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("plot lacks %q", want)
		}
	}
	checkTextInside(t, b)

	// Lines of another metric do not count: the same run refuses them
	// (they were drawn as if measured on the same files).
	l2 := filepath.Join(dir, "l2.jsonl")
	peers, err := os.ReadFile("testdata/hnswlib.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l2, bytes.ReplaceAll(peers, []byte(`"metric":"ip"`), []byte(`"metric":"l2"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runArgs(t, context.Background(), "--sweep", "--clustered", "--sizes", "2000", "--dim", "64", "--queries", "200",
		"--m", "4", "--efc", "20", "--ef", "10,40", "--quiet", "--cache", dir, "--plot", svg, "--peers-json", l2)
	if err == nil || !strings.Contains(err.Error(), "under cosine") {
		t.Errorf("--peers-json of l2 lines on a cosine run: %v", err)
	}
}

// TestThreePeersOnPlot: hnswlib, faiss (two indexes) and usearch (two) on
// one plot, measured by ../shared/peers/run, run-faiss and run-usearch on
// the files of TestPeersOnPlot (ef 10 and 20): every line is named, and
// every label stays inside the frame.
func TestThreePeersOnPlot(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "sweep.svg")
	_, errOut, err := runArgs(t, context.Background(), "--sweep", "--clustered", "--sizes", "2000", "--dim", "64", "--queries", "200",
		"--m", "4,8", "--efc", "20", "--ef", "10,40", "--quiet", "--cache", dir, "--plot", svg, "--peers-json", "testdata/peers.jsonl")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hnswlib M=16 efC=200 (2 build threads)", "faiss hnsw-flat M=16 efC=200 (2 build threads)",
		"faiss hnsw-sq8 M=16", "usearch hnsw-f32 M=16", "usearch hnsw-i8 M=16", "hnsw M=4 efC=20", "hnsw M=8 efC=20"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("plot lacks %q", want)
		}
	}
	checkTextInside(t, b)
}

var (
	svgSize = regexp.MustCompile(`viewBox="0 0 ([0-9.]+) ([0-9.]+)"`)
	svgText = regexp.MustCompile(`<text x="([0-9.]+)" y="[^"]*"[^>]*font-size:([0-9.]+)px[^>]*>([^<]*)</text>`)
)

// checkTextInside checks that every text of an SVG page ends inside its
// frame, even in a font a tenth wider than the one it was laid out in.
func checkTextInside(t *testing.T, svg []byte) {
	t.Helper()
	m := svgSize.FindSubmatch(svg)
	if m == nil {
		t.Fatal("no viewBox")
	}
	width, _ := strconv.ParseFloat(string(m[1]), 64)
	texts := svgText.FindAllSubmatch(svg, -1)
	if len(texts) < 10 {
		t.Fatalf("%d texts in the plot", len(texts))
	}
	for _, m := range texts {
		x, _ := strconv.ParseFloat(string(m[1]), 64)
		size, _ := strconv.ParseFloat(string(m[2]), 64)
		s := html.UnescapeString(string(m[3]))
		if end := x + float64(textStyle(vg.Length(size), color.Black).Width(s))*1.1; end > width {
			t.Errorf("%q ends at %.0f, past the frame's %.0f", s, end, width)
		}
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got, want := labels(1500, 180000), []string{"2,000", "5,000", "10,000", "20,000", "50,000", "100,000"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, want := labels(0.0004, 0.003), []string{"0.0004", "0.0005", "0.0006", "0.0007", "0.0008", "0.0009", "0.001", "0.002", "0.003"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestTargetReport: the target report calibrates, meets each target on the
// queries it did not calibrate on (within the sample's error), and records
// the fields the JSON promises.
func TestTargetReport(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "t.json")
	splits := 3
	if raceEnabled {
		splits = 1 // see race_test.go
	}
	out, errOut, err := runArgs(t, context.Background(), "--dim", "32", "--queries", "400", "--quiet", "--cache", dir,
		"--clustered", "--target-recall", "0.9,1", "--splits", fmt.Sprint(splits), "--sizes", "1500", "--json", jsonPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"## Recall targets: clustered-1500-d32", "| 0.9 | target hnsw |", "| 1 | best fixed ef |",
		fmt.Sprintf("## Calibration across %d random splits: clustered-1500-d32, k=10, calibrated on 200 queries, measured on the other 200", splits),
		"| 0.9 | exact scan |", "| 1 | Auto collection |", "| 0.9 | approximate scan |",
		"## Queries during a background recalibration", "| recalibrating (real queries) |", "| Calibrate called directly |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, rows := decodeReport(t, jsonPath)
	// Each target has the five rows, and the collection's best fixed ef
	// when the Auto collection searches a graph.
	settings := map[float64][]string{}
	autoGraph := map[float64]bool{}
	for _, r := range rows {
		settings[r.TargetRecall] = append(settings[r.TargetRecall], r.Setting)
		if r.Setting == "Auto collection" && r.ChosenIndex == "hnsw" {
			autoGraph[r.TargetRecall] = true
		}
	}
	for _, target := range []float64{0.9, 1} {
		want := []string{"target hnsw", "best fixed ef", "exact scan", "approximate scan", "Auto collection"}
		if autoGraph[target] {
			want = append(want, "collection, best fixed ef")
		}
		got := settings[target]
		if len(got) > 0 && strings.HasPrefix(got[0], "target ") {
			got[0] = "target hnsw" // "target exact" when the index chose to scan
		}
		if !slices.Equal(got, want) {
			t.Errorf("target %g: rows %q, want %q", target, got, want)
		}
	}
	for _, r := range rows {
		// Each way is timed over whole passes of the 200 measured queries.
		if r.Report != "target" || r.TargetRecall == 0 || r.ChosenIndex == "" || r.Queries < 200 || r.Queries%200 != 0 {
			t.Errorf("row %+v", r)
		}
		if r.ChosenIndex == "hnsw" && r.ChosenEf == 0 {
			t.Errorf("hnsw row without chosen_ef: %+v", r)
		}
		if r.Recall < r.TargetRecall-0.03 {
			t.Errorf("target %g: recall %.3f", r.TargetRecall, r.Recall)
		}
	}
}
