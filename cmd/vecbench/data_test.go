package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

const fixtures = "../../internal/hdf5/testdata/"

// TestHDF5Data runs the index report on ann-benchmarks files: the metric
// comes from the distance attribute and the file's neighbors, checked
// against cairn's exact ground truth, are the truth exact search matches.
func TestHDF5Data(t *testing.T) {
	for _, c := range []struct{ file, metric string }{
		{"ann-contiguous.hdf5", `distance "angular" (cosine)`},
		{"ann-chunked-gzip.hdf5", `distance "euclidean" (l2)`},
		{"ann-latest.hdf5", `distance "dot" (dot)`},
	} {
		out, errOut, err := runArgs(t, context.Background(), "--data", fixtures+c.file, "--quiet")
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.file, err, errOut)
		}
		name := strings.TrimSuffix(c.file, ".hdf5")
		for _, want := range []string{c.metric, "their top 10 equals cairn's exact float64 top 10", "| " + name + " | flat | – |"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", c.file, want, out)
			}
		}
		if !strings.Contains(out, "| 1.000 |") {
			t.Errorf("%s: exact search did not reach recall 1 against the file's neighbors:\n%s", c.file, out)
		}
	}
}

// TestHDF5Export writes an HDF5 set as TEXMEX files and runs the same
// measurement on them.
func TestHDF5Export(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runArgs(t, context.Background(), "--data", fixtures+"ann-chunked-gzip.hdf5", "--export", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if strings.Contains(out, "##") {
		t.Errorf("--export alone printed a report:\n%s", out)
	}
	a, err := recall.LoadHDF5(context.Background(), fixtures+"ann-chunked-gzip.hdf5")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "ann-chunked-gzip")
	base, err := recall.LoadVectors(name + ".base.fvecs")
	if err != nil || !equalVecs(base, a.Base) {
		t.Fatalf("exported base differs (%v)", err)
	}
	queries, err := recall.LoadVectors(name + ".query.fvecs")
	if err != nil || !equalVecs(queries, a.Queries) {
		t.Fatalf("exported queries differ (%v)", err)
	}
	gt, err := recall.LoadIvecs(name + ".gt.ivecs")
	if err != nil || len(gt) != len(a.Neighbors) || len(gt[0]) != 100 || gt[5][7] != a.Neighbors[5][7] {
		t.Fatalf("exported ground truth differs (%v)", err)
	}
	if m, err := os.ReadFile(name + ".metric"); err != nil || string(m) != "l2\n" {
		t.Fatalf("metric file: %q, %v", m, err)
	}
	out, errOut, err = runArgs(t, context.Background(), "--data", name+".base.fvecs", "--queries", name+".query.fvecs",
		"--gt", name+".gt.ivecs", "--metric", "l2", "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(out, "| ann-chunked-gzip | flat | – |") || !strings.Contains(out, "| 1.000 |") {
		t.Errorf("run on the exported files:\n%s", out)
	}

	// Without --gt and --metric: the metric from NAME.metric, and the
	// exported truth kept. It took cosine, and overwrote the l2 truth with
	// a cosine one (exact search then measured 0.685 against it).
	gtBytes, _ := os.ReadFile(name + ".gt.ivecs")
	out, errOut, err = runArgs(t, context.Background(), "--data", name+".base.fvecs", "--queries", name+".query.fvecs", "--quiet")
	if err != nil || !strings.Contains(out, "| 1.000 |") {
		t.Fatalf("run without --metric: %v\n%s\n%s", err, errOut, out)
	}
	if b, _ := os.ReadFile(name + ".gt.ivecs"); string(b) != string(gtBytes) {
		t.Error("the exported ground truth was rewritten")
	}
	if _, _, err := runArgs(t, context.Background(), "--data", name+".base.fvecs", "--queries", name+".query.fvecs", "--metric", "cosine"); err == nil || !strings.Contains(err.Error(), ".metric says l2") {
		t.Errorf("--metric against the set's metric file: %v", err)
	}

	// A --gt of other queries (its rows in another order) is refused; only
	// its shape was checked, and every index, exact search too, measured
	// a recall near 0.
	other := filepath.Join(t.TempDir(), "other.gt.ivecs")
	slices.Reverse(gt)
	if err := recall.SaveIvecs(other, gt); err != nil {
		t.Fatal(err)
	}
	_, _, err = runArgs(t, context.Background(), "--data", name+".base.fvecs", "--queries", name+".query.fvecs", "--gt", other, "--quiet")
	if err == nil || !strings.Contains(err.Error(), "is not the ground truth of these vectors") {
		t.Errorf("--gt of other queries: %v", err)
	}
}

// TestExportVecsData exports --data vector files with their computed
// ground truth to another directory, and names a set kept as base.fvecs
// after its directory.
func TestExportVecsData(t *testing.T) {
	src := filepath.Join(t.TempDir(), "myset")
	os.MkdirAll(src, 0o755)
	ds := recall.Uniform(120, 7, 8, 3)
	recall.SaveFvecs(filepath.Join(src, "base.fvecs"), ds.Base)
	recall.SaveFvecs(filepath.Join(src, "query.fvecs"), ds.Queries)
	exp := t.TempDir()
	_, errOut, err := runArgs(t, context.Background(), "--data", filepath.Join(src, "base.fvecs"), "--queries",
		filepath.Join(src, "query.fvecs"), "--metric", "dot", "--export", exp)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	gt, err := recall.LoadIvecs(filepath.Join(exp, "myset.gt.ivecs"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := recall.GroundTruth(context.Background(), &recall.Dataset{Dim: 8, Metric: vector.Dot, Base: ds.Base, Queries: ds.Queries}, 100)
	if len(gt) != 7 || gt[2][0] != want[2][0] || gt[6][99] != want[6][99] {
		t.Errorf("exported ground truth is not the exact top 100 under dot")
	}
	if m, _ := os.ReadFile(filepath.Join(exp, "myset.metric")); string(m) != "dot\n" {
		t.Errorf("metric file %q", m)
	}
}

func TestHDF5Refused(t *testing.T) {
	b, err := os.ReadFile(fixtures + "ann-contiguous.hdf5")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.hdf5")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	for _, c := range []struct {
		file string
		want error
	}{
		{fixtures + "layouts.hdf5", vector.ErrNotFound}, // no distance attribute, no train
		{cut, vector.ErrCorrupt},
	} {
		_, _, err := runArgs(t, context.Background(), "--data", c.file, "--quiet")
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.file, err, c.want)
		}
	}
	for _, args := range [][]string{
		{"--data", "x.hdf5", "--metric", "l2"},
		{"--data", "x.hdf5", "--queries", "q.fvecs"},
		{"--data", "x.h5", "--gt", "g.ivecs"},
	} {
		var ue usageError
		if _, _, err := runArgs(t, context.Background(), args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestDescribeCheck(t *testing.T) {
	ok := describeCheck(recall.TruthCheck{Queries: 100, K: 10, First: -1, Overlap: 1})
	bad := describeCheck(recall.TruthCheck{Queries: 100, K: 10, Differing: 3, First: 17, Overlap: 0.997})
	if !strings.Contains(ok, "equals") || !strings.Contains(bad, "3 MISMATCH") || !strings.Contains(bad, "query 17") {
		t.Errorf("%q / %q", ok, bad)
	}
}

func TestDataName(t *testing.T) {
	for in, want := range map[string]string{
		"d/glove-100.base.fvecs":           "glove-100",
		"d/sift.fvecs":                     "sift",
		"d/glove-100-angular.hdf5":         "glove-100-angular",
		"../shared/data/cohere/base.fvecs": "cohere",
	} {
		if got := dataName(in); got != want {
			t.Errorf("dataName(%q) = %q, want %q", in, got, want)
		}
	}
}
