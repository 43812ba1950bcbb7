// This file holds the user's data (--data): .fvecs/.bvecs/.npy files with
// --queries and --gt, or an ann-benchmarks HDF5 file, its ground truth
// (given, checked on a sample, or computed and cached), and --export of it
// as TEXMEX files.

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// truthSample is how many queries of a file's own ground truth are
// checked against the exact float64 one.
const truthSample = 100

// isHDF5 reports whether path names an HDF5 file (ann-benchmarks' format).
func isHDF5(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".hdf5", ".h5":
		return true
	}
	return false
}

// userData loads --data (with --queries and --gt, or an HDF5 file) once,
// and exports it with --export.
func (b *bench) userData(ctx context.Context) (*recall.Dataset, [][]int32, error) {
	if b.lastDS != nil {
		return b.lastDS, b.lastTruth, nil
	}
	var ds *recall.Dataset
	var truth [][]int32
	var err error
	if isHDF5(b.c.dataPath) {
		ds, truth, err = b.hdf5Data(ctx)
	} else {
		ds, truth, err = b.vecsData(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	if b.c.exportDir != "" {
		if err := b.exportUser(ds, truth); err != nil {
			return nil, nil, err
		}
	}
	b.lastDS, b.lastTruth = ds, truth
	return ds, truth, nil
}

// vecsData reads --data and --queries as vector files, and the ground
// truth from --gt or computed (cached beside the base file).
func (b *bench) vecsData(ctx context.Context) (*recall.Dataset, [][]int32, error) {
	base, err := loadChecked(b.c.dataPath, b.c.metric)
	if err != nil {
		return nil, nil, err
	}
	queries, err := loadChecked(b.c.queryPath, b.c.metric)
	if err != nil {
		return nil, nil, err
	}
	if len(base) == 0 || len(queries) == 0 {
		return nil, nil, fmt.Errorf("%s and %s must both hold vectors (%d and %d found)", b.c.dataPath, b.c.queryPath, len(base), len(queries))
	}
	if len(base[0]) != len(queries[0]) {
		return nil, nil, fmt.Errorf("%s has dimension %d but %s has %d: %w", b.c.dataPath, len(base[0]), b.c.queryPath, len(queries[0]), vector.ErrDimensionMismatch)
	}
	ds := &recall.Dataset{Name: dataName(b.c.dataPath), Dim: len(base[0]), Metric: b.c.metric, Base: base, Queries: queries}
	if b.c.gtPath != "" {
		rows, err := recall.LoadIvecs(b.c.gtPath)
		if err != nil {
			return nil, nil, err
		}
		if err := checkTruth(rows, ds, b.c.k); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.c.gtPath, err)
		}
		chk, err := recall.CheckTruth(ctx, ds, rows, b.c.k, truthSample)
		if err != nil {
			return nil, nil, err
		}
		if chk.Overlap < minTruthOverlap {
			return nil, nil, fmt.Errorf("%s is not the ground truth of these vectors: %s (another query file or metric, or ids counted from 1?)", b.c.gtPath, describeCheck(chk))
		}
		fmt.Fprintf(b.out, "ground truth: %s (%d deep); %s\n\n", b.c.gtPath, len(rows[0]), describeCheck(chk))
		return ds, rows, nil
	}
	truth, err := b.cachedTruth(ctx, ds, b.c.queryPath)
	return ds, truth, err
}

// minTruthOverlap is the least mean overlap with the exact top k that a
// --gt file may have on the sampled queries: near-ties computed in
// float32 cost a few ids, a file of other queries or another metric most.
const minTruthOverlap = 0.5

// cachedTruth computes the ground truth of the user's data, kept beside
// the base file as NAME.gt.ivecs (recomputed when older than the data).
func (b *bench) cachedTruth(ctx context.Context, ds *recall.Dataset, also string) ([][]int32, error) {
	dir := filepath.Dir(b.c.dataPath)
	path := filepath.Join(dir, ds.Name+".gt.ivecs")
	if gi, err := os.Stat(path); err == nil {
		for _, p := range []string{b.c.dataPath, also} {
			if fi, err := os.Stat(p); p != "" && err == nil && fi.ModTime().After(gi.ModTime()) {
				os.Remove(path)
				break
			}
		}
	}
	if !writable(dir) {
		dir = "" // a read-only directory (such as ../shared/data): compute, keep nothing
	}
	return b.truth(ctx, ds, dir, ds.Name)
}

// writable reports whether files can be created in dir.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".vecbench-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// hdf5Data reads an ann-benchmarks file: train as the base, test as the
// queries, the metric from its distance attribute, and its neighbors as
// the ground truth, checked against the exact float64 one on a sample.
func (b *bench) hdf5Data(ctx context.Context) (*recall.Dataset, [][]int32, error) {
	cb := b.p.begin("read " + b.c.dataPath)
	a, err := recall.LoadHDF5(ctx, b.c.dataPath)
	cb(1, 1)
	b.p.end()
	if err != nil {
		return nil, nil, err
	}
	for _, part := range []struct {
		what string
		vs   []vector.Vector
	}{{"train", a.Base}, {"test", a.Queries}} {
		for i, v := range part.vs {
			if err := vector.Check(v, a.Dim, a.Metric); err != nil {
				return nil, nil, fmt.Errorf("%s: %s vector %d: %w", b.c.dataPath, part.what, i, err)
			}
		}
	}
	b.c.metric = a.Metric
	ds := a.Dataset
	fmt.Fprintf(b.out, "data: %s: %s train vectors, %s test queries, %d-d, distance %q (%s)\n",
		b.c.dataPath, fmtInt(len(ds.Base)), fmtInt(len(ds.Queries)), ds.Dim, a.Distance, ds.Metric)
	if a.Neighbors == nil {
		fmt.Fprintf(b.out, "ground truth: the file has no neighbors; cairn's exact float64 top %d\n\n", recall.GroundTruthK)
		truth, err := b.cachedTruth(ctx, ds, "")
		return ds, truth, err
	}
	if err := checkTruth(a.Neighbors, ds, b.c.k); err != nil {
		return nil, nil, fmt.Errorf("%s: neighbors: %w", b.c.dataPath, err)
	}
	chk, err := recall.CheckTruth(ctx, ds, a.Neighbors, b.c.k, truthSample)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(b.out, "ground truth: the file's neighbors (%d deep); %s\n\n", len(a.Neighbors[0]), describeCheck(chk))
	return ds, a.Neighbors, nil
}

// describeCheck says how the file's neighbors compare with the exact ones.
func describeCheck(c recall.TruthCheck) string {
	if c.Differing == 0 {
		return fmt.Sprintf("on %d sampled queries their top %d equals cairn's exact float64 top %d", c.Queries, c.K, c.K)
	}
	return fmt.Sprintf("on %d sampled queries, %d MISMATCH cairn's exact float64 top %d (first: query %d; mean overlap %.4f): near-ties computed in float32, or a wrong distance attribute",
		c.Queries, c.Differing, c.K, c.First, c.Overlap)
}

// exportUser writes the user's data set to --export as NAME.base.fvecs,
// NAME.query.fvecs, NAME.gt.ivecs (the ground truth in use) and
// NAME.metric, skipping a file that is the very file read.
func (b *bench) exportUser(ds *recall.Dataset, truth [][]int32) error {
	dir, name := b.c.exportDir, ds.Name
	for _, f := range []struct {
		suffix, source string
		write          func(string) error
	}{
		{".base.fvecs", b.c.dataPath, func(p string) error { return recall.SaveFvecs(p, ds.Base) }},
		{".query.fvecs", b.c.queryPath, func(p string) error { return recall.SaveFvecs(p, ds.Queries) }},
		{".gt.ivecs", b.c.gtPath, func(p string) error { return recall.SaveIvecs(p, truth) }},
	} {
		path := filepath.Join(dir, name+f.suffix)
		if samePath(path, f.source) {
			continue
		}
		if err := f.write(path); err != nil {
			return fmt.Errorf("--export: %w", err)
		}
	}
	if err := writeMetric(dir, name, ds.Metric); err != nil {
		return err
	}
	b.p.note("exported %s.{base,query}.fvecs, %s.gt.ivecs and %s.metric (%s) to %s", name, name, name, ds.Metric, dir)
	return nil
}

// writeMetric writes DIR/NAME.metric: the metric's name and a newline, for
// bench/peers.sh to run hnswlib under the same metric.
func writeMetric(dir, name string, m vector.Metric) error {
	err := os.WriteFile(filepath.Join(dir, name+".metric"), []byte(m.String()+"\n"), 0o644)
	if err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	return nil
}

// readMetric reads a file writeMetric wrote; false if there is none.
func readMetric(path string) (vector.Metric, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	m, err := vector.ParseMetric(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return m, true, nil
}

func samePath(a, b string) bool {
	if b == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// loadChecked reads a vector file and validates every vector under m.
func loadChecked(path string, m vector.Metric) ([]vector.Vector, error) {
	vs, err := recall.LoadVectors(path)
	if err != nil {
		return nil, err
	}
	for i, v := range vs {
		if err := vector.Check(v, len(vs[0]), m); err != nil {
			return nil, fmt.Errorf("%s: vector %d: %w", path, i, err)
		}
	}
	return vs, nil
}

// dataName is the data set name of a base file: dir/NAME.base.fvecs,
// dir/NAME.fvecs or dir/NAME.hdf5 gives NAME; dir/base.fvecs (as in
// ../shared/data) gives the directory's name.
func dataName(path string) string {
	name := filepath.Base(path)
	name = strings.TrimSuffix(name, filepath.Ext(name))
	if name == "base" {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
	}
	return strings.TrimSuffix(name, ".base")
}
