// This file holds LoadHDF5: a data set in the layout of ann-benchmarks'
// HDF5 files (train, test, neighbors, distances and the distance
// attribute), read with internal/hdf5.

package recall

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cairndb/cairn/internal/hdf5"
	"github.com/cairndb/cairn/vector"
)

// ANNFile is a data set read from an ann-benchmarks HDF5 file.
//
// Reading it from several goroutines at once is safe; changing it while
// others read is not.
type ANNFile struct {
	// Dataset holds train as Base and test as Queries, under the metric
	// of the file's distance attribute; its Name is the file's name
	// without the extension.
	*Dataset
	// Neighbors is the file's ground truth (ids of the nearest train rows
	// of each test row, nearest first), or nil if the file has none.
	Neighbors [][]int32
	// Distance is the file's distance attribute, as written.
	Distance string
}

// MetricOf returns the metric of an ann-benchmarks distance name:
// "angular" (or "cosine") is [vector.Cosine], "euclidean" (or "l2")
// [vector.L2], and "dot", "ip" or "inner_product" [vector.Dot]. Others
// ("jaccard", "hamming": sparse and binary sets) give an error wrapping
// [vector.ErrInvalidOptions].
func MetricOf(distance string) (vector.Metric, error) {
	switch strings.ToLower(strings.TrimSpace(distance)) {
	case "angular", "cosine":
		return vector.Cosine, nil
	case "euclidean", "l2":
		return vector.L2, nil
	case "dot", "ip", "inner_product", "inner-product":
		return vector.Dot, nil
	}
	return 0, fmt.Errorf("recall: distance %q: %w (want angular, euclidean or dot)", distance, vector.ErrInvalidOptions)
}

// LoadHDF5 reads an ann-benchmarks HDF5 file: the 2-D datasets train and
// test (float32, or any numeric type, converted), the optional neighbors
// (integers; ids of train rows) and the root attribute distance. A missing
// train, test or distance gives an error wrapping [vector.ErrNotFound];
// shapes that disagree, or neighbors outside train, [vector.ErrCorrupt];
// the reader's own errors are those of internal/hdf5 ([vector.ErrCorrupt],
// [vector.ErrUnsupportedVersion], or an unsupported feature). Values are
// returned as stored: validate them with [vector.Check].
func LoadHDF5(ctx context.Context, path string) (*ANNFile, error) {
	f, err := hdf5.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := loadANN(ctx, f, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func loadANN(ctx context.Context, f *hdf5.File, name string) (*ANNFile, error) {
	a, err := f.Attr("distance")
	if err != nil {
		return nil, err
	}
	distance, err := a.String()
	if err != nil {
		return nil, err
	}
	metric, err := MetricOf(distance)
	if err != nil {
		return nil, err
	}
	base, err := matrix(ctx, f, "train")
	if err != nil {
		return nil, err
	}
	queries, err := matrix(ctx, f, "test")
	if err != nil {
		return nil, err
	}
	if len(base) == 0 || len(queries) == 0 || len(base[0]) != len(queries[0]) {
		return nil, fmt.Errorf("recall: hdf5: train and test must hold vectors of one dimension: %w", vector.ErrCorrupt)
	}
	out := &ANNFile{
		Dataset:  &Dataset{Name: name, Dim: len(base[0]), Metric: metric, Base: base, Queries: queries},
		Distance: distance,
	}
	ds, err := f.Dataset("neighbors")
	if errors.Is(err, vector.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if len(ds.Shape) != 2 || ds.Shape[0] != uint64(len(queries)) || ds.Shape[1] == 0 {
		return nil, fmt.Errorf("recall: hdf5: neighbors of shape %v for %d queries: %w", ds.Shape, len(queries), vector.ErrCorrupt)
	}
	ids, err := ds.Int32s(ctx)
	if err != nil {
		return nil, err
	}
	k := int(ds.Shape[1])
	for i, id := range ids {
		if id < 0 || int(id) >= len(base) {
			return nil, fmt.Errorf("recall: hdf5: neighbors row %d: id %d outside the %d train vectors: %w", i/k, id, len(base), vector.ErrCorrupt)
		}
	}
	out.Neighbors = make([][]int32, len(queries))
	for i := range out.Neighbors {
		out.Neighbors[i] = ids[i*k : (i+1)*k : (i+1)*k]
	}
	return out, nil
}

// matrix reads a 2-D numeric dataset as vectors.
func matrix(ctx context.Context, f *hdf5.File, name string) ([]vector.Vector, error) {
	ds, err := f.Dataset(name)
	if err != nil {
		return nil, err
	}
	if len(ds.Shape) != 2 || ds.Shape[1] == 0 || ds.Shape[1] > MaxFileDim {
		return nil, fmt.Errorf("recall: hdf5: %s has shape %v, want rows of 1..%d values: %w", name, ds.Shape, MaxFileDim, vector.ErrCorrupt)
	}
	data, err := ds.Float32s(ctx)
	if err != nil {
		return nil, err
	}
	return split(data, int(ds.Shape[1])), nil
}
