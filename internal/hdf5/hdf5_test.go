package hdf5_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/hdf5"
	"github.com/cairndb/cairn/vector"
)

// value is make_fixtures.py's value: the fixture element at row i, column j.
func value(i, j, salt int) float32 {
	x := uint64(i*1000003+j*7919+salt*104729+1) * 0x9E3779B97F4A7C15
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return float32(float64(x>>40)/float64(1<<24) - 0.5)
}

func matrix(n, d, salt int) []float32 {
	out := make([]float32, 0, n*d)
	for i := range n {
		for j := range d {
			out = append(out, value(i, j, salt))
		}
	}
	return out
}

// truth is make_fixtures.py's truth: the exact top count ids and distances
// (ann-benchmarks' convention: 1-cos, Euclidean distance, -dot), in float64,
// ties broken by id.
func truth(train, test []float32, d int, metric string, count int) ([]int32, []float64) {
	n, nq := len(train)/d, len(test)/d
	ids := make([]int32, 0, nq*count)
	dists := make([]float64, 0, nq*count)
	for q := range nq {
		qv := test[q*d : (q+1)*d]
		ds := make([]float64, n)
		for i := range n {
			bv := train[i*d : (i+1)*d]
			var dot, bb, qq, l2 float64
			for j := range d {
				b, x := float64(bv[j]), float64(qv[j])
				dot += b * x
				bb += b * b
				qq += x * x
				l2 += (b - x) * (b - x)
			}
			switch metric {
			case "angular":
				ds[i] = 1 - dot/(math.Sqrt(bb)*math.Sqrt(qq))
			case "euclidean":
				ds[i] = math.Sqrt(l2)
			default:
				ds[i] = -dot
			}
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return ds[order[a]] < ds[order[b]] })
		for _, i := range order[:count] {
			ids = append(ids, int32(i))
			dists = append(dists, ds[i])
		}
	}
	return ids, dists
}

func open(t *testing.T, name string) *hdf5.File {
	t.Helper()
	f, err := hdf5.OpenFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func floats(t *testing.T, f *hdf5.File, name string) ([]float32, []uint64) {
	t.Helper()
	ds, err := f.Dataset(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ds.Float32s(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v, ds.Shape
}

func ints(t *testing.T, f *hdf5.File, name string) ([]int32, []uint64) {
	t.Helper()
	ds, err := f.Dataset(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ds.Int32s(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v, ds.Shape
}

func attrString(t *testing.T, f *hdf5.File, name string) string {
	t.Helper()
	a, err := f.Attr(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestANNFiles reads every value of the ann-benchmarks fixtures and
// compares it with what make_fixtures.py wrote.
func TestANNFiles(t *testing.T) {
	for _, c := range []struct {
		file            string
		n, nq, d, count int
		metric          string
		stringType      string
	}{
		{"ann-contiguous.hdf5", 300, 20, 24, 100, "angular", "variable-length string"},
		{"ann-chunked-gzip.hdf5", 301, 20, 24, 100, "euclidean", "string of 9 bytes"},
		{"ann-latest.hdf5", 260, 17, 16, 50, "dot", "variable-length string"},
		{"tiny-earliest.hdf5", 3, 2, 2, 2, "euclidean", "variable-length string"},
		{"tiny-latest.hdf5", 3, 2, 2, 2, "angular", "variable-length string"},
	} {
		t.Run(c.file, func(t *testing.T) {
			f := open(t, c.file)
			members, err := f.Members()
			if err != nil || !slices.Equal(members, []string{"distances", "neighbors", "test", "train"}) {
				t.Fatalf("Members = %v, %v", members, err)
			}
			names, err := f.Attrs()
			if err != nil || !slices.Equal(names, []string{"type", "distance", "dimension", "point_type"}) {
				t.Fatalf("Attrs = %v, %v", names, err)
			}
			if got := attrString(t, f, "distance"); got != c.metric {
				t.Errorf("distance = %q, want %q", got, c.metric)
			}
			if a, _ := f.Attr("distance"); a.Type.String() != c.stringType {
				t.Errorf("distance is a %s, want a %s", a.Type, c.stringType)
			}
			if got := attrString(t, f, "type"); got != "dense" {
				t.Errorf("type = %q", got)
			}
			if got := attrString(t, f, "point_type"); got != "float" {
				t.Errorf("point_type = %q", got)
			}
			a, err := f.Attr("dimension")
			if err != nil {
				t.Fatal(err)
			}
			if d, err := a.Int64(); err != nil || d != int64(c.d) {
				t.Errorf("dimension = %d, %v; want %d", d, err, c.d)
			}

			train, shape := floats(t, f, "train")
			if !slices.Equal(shape, []uint64{uint64(c.n), uint64(c.d)}) || !slices.Equal(train, matrix(c.n, c.d, 1)) {
				t.Fatalf("train (shape %v) differs from what the script wrote", shape)
			}
			test, shape := floats(t, f, "test")
			if !slices.Equal(shape, []uint64{uint64(c.nq), uint64(c.d)}) || !slices.Equal(test, matrix(c.nq, c.d, 2)) {
				t.Fatalf("test (shape %v) differs from what the script wrote", shape)
			}
			wantIDs, wantDist := truth(train, test, c.d, c.metric, c.count)
			ids, shape := ints(t, f, "neighbors")
			if !slices.Equal(shape, []uint64{uint64(c.nq), uint64(c.count)}) || !slices.Equal(ids, wantIDs) {
				t.Fatalf("neighbors (shape %v) differ from the exact top %d", shape, c.count)
			}
			dist, _ := floats(t, f, "distances")
			for i, want := range wantDist {
				if math.Abs(float64(dist[i])-want) > 1e-6*max(1, math.Abs(want)) {
					t.Fatalf("distances[%d] = %v, want %v", i, dist[i], want)
				}
			}
		})
	}
}

// TestElementTypes reads big-endian floats, float64, int64, uint8, a paged
// fixed-array index and an array of fixed-length strings.
func TestElementTypes(t *testing.T) {
	f := open(t, "layouts.hdf5")
	if v, _ := floats(t, f, "paged"); !slices.Equal(v, matrix(1100, 2, 3)) {
		t.Error("paged: values differ")
	}
	if v, _ := floats(t, f, "big-endian"); !slices.Equal(v, matrix(10, 3, 4)) {
		t.Error("big-endian: values differ")
	}
	if v, _ := floats(t, f, "float64"); !slices.Equal(v, matrix(10, 3, 5)) {
		t.Error("float64: values differ")
	}
	if v, _ := ints(t, f, "int64"); !slices.Equal(v, []int32{0, 1, -1, math.MaxInt32, math.MinInt32, 7, 8, 9, 10, 11, 12, 13}) {
		t.Errorf("int64 = %v", v)
	}
	if v, _ := ints(t, f, "uint8"); !slices.Equal(v, []int32{0, 1, 255, 2, 3, 4}) {
		t.Errorf("uint8 = %v", v)
	}
	if v, _ := floats(t, f, "uint8"); !slices.Equal(v, []float32{0, 1, 255, 2, 3, 4}) {
		t.Errorf("uint8 as floats = %v", v)
	}
	a, err := f.Attr("names")
	if err != nil {
		t.Fatal(err)
	}
	if ss, err := a.Strings(); err != nil || !slices.Equal(ss, []string{"ab", "cde"}) {
		t.Errorf("names = %q, %v", ss, err)
	}
}

// TestRefused checks the typed errors of what the reader does not read.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	f := open(t, "unsupported.hdf5")
	for _, name := range []string{"fletcher32", "resizable", "compound", "unwritten", "lzf"} {
		ds, err := f.Dataset(name)
		if err == nil {
			_, err = ds.Float32s(ctx)
		}
		if !errors.Is(err, hdf5.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	l := open(t, "layouts.hdf5")
	for _, c := range []struct {
		name string
		read func(*hdf5.Dataset) error
	}{
		{"too-big", func(ds *hdf5.Dataset) error { _, err := ds.Int32s(ctx); return err }},
		{"paged", func(ds *hdf5.Dataset) error { _, err := ds.Int32s(ctx); return err }},
	} {
		ds, err := l.Dataset(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.read(ds); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", c.name, err)
		}
	}
	if _, err := l.Dataset("missing"); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("missing dataset: %v", err)
	}
	if _, err := l.Attr("missing"); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("missing attribute: %v", err)
	}
	a, _ := l.Attr("names")
	if _, err := a.String(); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("String of two strings: %v", err)
	}
	if _, err := a.Int64(); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Int64 of strings: %v", err)
	}
	ctxDone, cancel := context.WithCancel(ctx)
	cancel()
	ds, _ := l.Dataset("paged")
	if _, err := ds.Float32s(ctxDone); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: %v", err)
	}
}

// TestDamaged checks that damaged files give typed errors: truncated at
// many lengths, an unknown superblock version, not HDF5 at all.
func TestDamaged(t *testing.T) {
	for _, name := range []string{"ann-contiguous.hdf5", "ann-chunked-gzip.hdf5", "ann-latest.hdf5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(b); n += 1 + n/16 {
			if err := readAll(b[:n]); err == nil || !typed(err) {
				t.Fatalf("%s cut to %d bytes: %v", name, n, err)
			}
		}
		v := bytes.Clone(b)
		v[8] = 9
		if _, err := hdf5.Open(bytes.NewReader(v), int64(len(v))); !errors.Is(err, vector.ErrUnsupportedVersion) {
			t.Errorf("%s with superblock version 9: %v", name, err)
		}
	}
	// Version 2 metadata carries checksums: a flipped bit in the
	// superblock's end-of-file address, or in a dataset's object header,
	// is caught.
	b, err := os.ReadFile(filepath.Join("testdata", "ann-latest.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	v := bytes.Clone(b)
	v[30] ^= 1
	if _, err := hdf5.Open(bytes.NewReader(v), int64(len(v))); !errors.Is(err, vector.ErrCorrupt) || !strings.Contains(err.Error(), "superblock: checksum") {
		t.Errorf("flipped superblock bit: %v", err)
	}
	oh := bytes.LastIndex(b, []byte("OHDR"))
	v = bytes.Clone(b)
	v[oh+5] ^= 0x20 // the times flag
	if err := readAll(v); !errors.Is(err, vector.ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped object header bit: %v", err)
	}
	if _, err := hdf5.Open(bytes.NewReader([]byte("not an HDF5 file at all")), 23); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("not HDF5: %v", err)
	}
}

// typed reports whether err wraps one of the reader's sentinels.
func typed(err error) bool {
	for _, s := range []error{vector.ErrCorrupt, vector.ErrUnsupportedVersion, hdf5.ErrUnsupported, vector.ErrNotFound, vector.ErrInvalidOptions} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// readAll opens b and reads every attribute and dataset, returning the
// first error.
func readAll(b []byte) error {
	f, err := hdf5.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	names, err := f.Attrs()
	if err != nil {
		return err
	}
	for _, n := range names {
		a, err := f.Attr(n)
		if err != nil {
			return err
		}
		if a.Type.Class == hdf5.String {
			_, err = a.Strings()
		} else {
			_, err = a.Int64()
		}
		if err != nil && !errors.Is(err, vector.ErrInvalidOptions) {
			return err
		}
	}
	members, err := f.Members()
	if err != nil {
		return err
	}
	for _, m := range members {
		ds, err := f.Dataset(m)
		if err != nil {
			return err
		}
		if ds.Type.Class == hdf5.Integer {
			_, err = ds.Int32s(context.Background())
		} else {
			_, err = ds.Float32s(context.Background())
		}
		if err != nil {
			return err
		}
	}
	return nil
}
