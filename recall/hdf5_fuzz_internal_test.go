package recall

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/internal/hdf5"
	"github.com/cairndb/cairn/vector"
)

// FuzzLoadANN feeds arbitrary bytes, seeded with the ann-benchmarks
// fixtures of internal/hdf5, to loadANN: it never panics, fails only with
// a typed error, and what it returns is a data set of one dimension with
// ground truth inside train.
func FuzzLoadANN(f *testing.F) {
	for _, name := range []string{"ann-latest.hdf5", "ann-contiguous.hdf5", "ann-chunked-gzip.hdf5"} {
		b, err := os.ReadFile(filepath.Join("..", "internal", "hdf5", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		hf, err := hdf5.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return // FuzzOpen's matter
		}
		a, err := loadANN(context.Background(), hf, "fuzz")
		if err != nil {
			for _, s := range []error{vector.ErrCorrupt, vector.ErrUnsupportedVersion, hdf5.ErrUnsupported, vector.ErrNotFound, vector.ErrInvalidOptions} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("untyped error: %v", err)
		}
		if a.Dim < 1 || a.Dim > MaxFileDim || len(a.Base) == 0 || len(a.Queries) == 0 || !a.Metric.Valid() {
			t.Fatalf("data set of dim %d, %d base, %d queries, metric %v", a.Dim, len(a.Base), len(a.Queries), a.Metric)
		}
		for _, vs := range [][]vector.Vector{a.Base, a.Queries} {
			for i, v := range vs {
				if len(v) != a.Dim {
					t.Fatalf("vector %d of %d values, want %d", i, len(v), a.Dim)
				}
			}
		}
		if a.Neighbors == nil {
			return
		}
		if len(a.Neighbors) != len(a.Queries) {
			t.Fatalf("%d rows of neighbors for %d queries", len(a.Neighbors), len(a.Queries))
		}
		for i, row := range a.Neighbors {
			if len(row) == 0 || len(row) != len(a.Neighbors[0]) {
				t.Fatalf("neighbors row %d of %d ids", i, len(row))
			}
			for _, id := range row {
				if id < 0 || int(id) >= len(a.Base) {
					t.Fatalf("neighbors row %d: id %d outside %d train vectors", i, id, len(a.Base))
				}
			}
		}
	})
}
