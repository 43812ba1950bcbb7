package hnsw_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestSaveLoadRecall checks that a graph saved and loaded over the same
// store answers every query exactly as before (hnswlib's save/load test).
func TestSaveLoadRecall(t *testing.T) {
	ds := recall.Clustered(1000, 50, 32, 2)
	ix, s := build(t, ds, &hnsw.Options{M: 8, EfConstruction: 64})
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	ix2 := newIndex(t, s, nil)
	n, err := ix2.ReadFrom(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("ReadFrom read %d bytes, WriteTo wrote %d", n, buf.Len())
	}
	if ix2.Len() != ix.Len() || ix2.Options().M != 8 {
		t.Errorf("loaded Len %d M %d, want %d and 8", ix2.Len(), ix2.Options().M, ix.Len())
	}
	ctx := context.Background()
	for i, q := range ds.Queries {
		a, err := ix.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ix2.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("query %d: %d results before, %d after", i, len(a), len(b))
		}
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("query %d result %d: %v before, %v after", i, j, a[j], b[j])
			}
		}
	}
	// The loaded graph keeps working: add and delete.
	if err := ix2.Add(ctx, 5000, ds.Queries[0]); err != nil {
		t.Fatal(err)
	}
	if err := ix2.Delete(ctx, 3); err != nil {
		t.Fatal(err)
	}
}

// tinyGraph builds the fixed-seed graph of the golden file: 40 vectors of
// 4 dimensions, M=4, added one at a time.
func tinyGraph(t *testing.T) (*hnsw.Index, *vector.MemStore) {
	ds := recall.Clustered(40, 1, 4, 3)
	s := memStore(t, 4, vector.L2)
	ix := newIndex(t, s, &hnsw.Options{M: 4, EfConstruction: 16})
	for i, v := range ds.Base {
		if err := ix.Add(context.Background(), vector.ID(100+i), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Delete(context.Background(), 107); err != nil {
		t.Fatal(err)
	}
	return ix, s
}

// TestGolden pins the encoding of a tiny graph; run with -update after an
// intended format change (and bump the format version).
func TestGolden(t *testing.T) {
	ix, _ := tinyGraph(t)
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "tiny.hnsw")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("encoding of the tiny graph differs from %s (%d bytes, want %d); run with -update if intended", path, buf.Len(), len(want))
	}
}

func TestReadFromBad(t *testing.T) {
	ix, s := tinyGraph(t)
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	mutate := func(f func(b []byte) []byte) []byte {
		return f(bytes.Clone(good))
	}
	newer := mutate(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 99); return b })
	other := memStore(t, 4, vector.L2)
	for _, c := range []struct {
		name  string
		data  []byte
		store vector.Store
		want  error
	}{
		{"empty", nil, s, vector.ErrCorrupt},
		{"short header", good[:10], s, vector.ErrCorrupt},
		{"truncated body", good[:len(good)-9], s, vector.ErrCorrupt},
		{"no checksum", good[:len(good)-4], s, vector.ErrCorrupt},
		{"bad magic", mutate(func(b []byte) []byte { b[0] ^= 1; return b }), s, vector.ErrCorrupt},
		{"flipped bit", mutate(func(b []byte) []byte { b[len(b)/2] ^= 4; return b }), s, vector.ErrCorrupt},
		{"bad checksum", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), s, vector.ErrCorrupt},
		{"huge length", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[12:], 1<<62); return b }), s, vector.ErrCorrupt},
		{"newer version", newer, s, vector.ErrUnsupportedVersion},
		{"other store", good, other, hnsw.ErrStoreMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix2 := newIndex(t, c.store, nil)
			_, err := ix2.ReadFrom(bytes.NewReader(c.data))
			if !errors.Is(err, c.want) {
				t.Fatalf("ReadFrom: %v, want %v", err, c.want)
			}
			if ix2.Len() != 0 {
				t.Errorf("Len = %d after a failed load", ix2.Len())
			}
		})
	}
}

// FuzzReadFrom feeds damaged graphs to ReadFrom: it must never panic, and
// any error must wrap ErrCorrupt or ErrUnsupportedVersion. The seed corpus
// is the golden graph and a graph saved with its calibration (the checksum
// is recomputed by the fuzz body when the input asks for it, so mutations
// also reach the structural checks). The index reading them has the
// calibrated graph's target, so that a calibration that decodes is put to
// use.
func FuzzReadFrom(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "tiny.hnsw"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden, false)
	f.Add(golden[:len(golden)/2], true)
	f.Add([]byte("cairnHNS"), false)
	calibrated := calibratedTiny(f)
	f.Add(calibrated, false)
	f.Add(calibrated, true)
	f.Add(calibrated[:len(calibrated)-20], true)
	ds := recall.Clustered(40, 1, 4, 3)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		s, _ := vector.NewMemStore(4, vector.L2)
		for i, v := range ds.Base {
			if i != 7 {
				_ = s.Put(context.Background(), vector.ID(100+i), v)
			}
		}
		if fixCRC && len(data) >= 24 {
			data = fixChecksum(data)
		}
		ix, err := hnsw.New(s, &hnsw.Options{TargetRecall: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.ReadFrom(bytes.NewReader(data)); err != nil {
			if !errors.Is(err, vector.ErrCorrupt) && !errors.Is(err, vector.ErrUnsupportedVersion) {
				t.Fatalf("ReadFrom: %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if c, ok := ix.Calibration(); ok && (c.Target != 0.9 || c.K != hnsw.DefaultTargetK) {
			t.Fatalf("calibration for another target restored: %+v", c)
		}
		if err := ix.Verify(); err != nil {
			t.Fatalf("loaded graph fails Verify: %v", err)
		}
		if _, err := ix.Search(context.Background(), ds.Base[0], 3, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// fixChecksum rewrites the body length and checksum of data so that it
// passes the framing checks.
func fixChecksum(data []byte) []byte {
	data = bytes.Clone(data[:len(data)-4])
	binary.LittleEndian.PutUint64(data[12:], uint64(len(data)-20))
	return binary.LittleEndian.AppendUint32(data, hnsw.Crc32c(data))
}
