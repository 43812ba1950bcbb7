package recall_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

const annFixtures = "../internal/hdf5/testdata/"

func TestLoadHDF5(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		file       string
		n, nq, dim int
		metric     vector.Metric
	}{
		{"ann-contiguous.hdf5", 300, 20, 24, vector.Cosine},
		{"ann-chunked-gzip.hdf5", 301, 20, 24, vector.L2},
		{"ann-latest.hdf5", 260, 17, 16, vector.Dot},
	} {
		a, err := recall.LoadHDF5(ctx, annFixtures+c.file)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Base) != c.n || len(a.Queries) != c.nq || a.Dim != c.dim || a.Metric != c.metric || len(a.Neighbors) != c.nq {
			t.Fatalf("%s: %d base, %d queries, dim %d, %v, %d truth rows", c.file, len(a.Base), len(a.Queries), a.Dim, a.Metric, len(a.Neighbors))
		}
		// The file's neighbors are the exact ones: they match cairn's
		// float64 ground truth on every query.
		chk, err := recall.CheckTruth(ctx, a.Dataset, a.Neighbors, 10, 0)
		if err != nil || chk.Differing != 0 || chk.Overlap != 1 || chk.Queries != c.nq {
			t.Errorf("%s: CheckTruth = %+v, %v", c.file, chk, err)
		}
		// A damaged truth is caught.
		bad := make([][]int32, len(a.Neighbors))
		for i, r := range a.Neighbors {
			bad[i] = append([]int32(nil), r...)
		}
		bad[3][0], bad[3][9] = bad[3][10], bad[3][11]
		chk, err = recall.CheckTruth(ctx, a.Dataset, bad, 10, 0)
		if err != nil || chk.Differing != 1 || chk.First != 3 || chk.Overlap != 1-0.2/float64(c.nq) {
			t.Errorf("%s: damaged truth: CheckTruth = %+v, %v", c.file, chk, err)
		}
	}
}

func TestLoadHDF5Refused(t *testing.T) {
	ctx := context.Background()
	if _, err := recall.LoadHDF5(ctx, annFixtures+"layouts.hdf5"); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("no distance attribute: %v", err)
	}
	if _, err := recall.LoadHDF5(ctx, annFixtures+"SOURCE.md"); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("not HDF5: %v", err)
	}
	if _, err := recall.MetricOf("jaccard"); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("jaccard: %v", err)
	}
	for in, want := range map[string]vector.Metric{"angular": vector.Cosine, "euclidean": vector.L2, "dot": vector.Dot, "ip": vector.Dot} {
		if m, err := recall.MetricOf(in); err != nil || m != want {
			t.Errorf("MetricOf(%q) = %v, %v", in, m, err)
		}
	}
}
