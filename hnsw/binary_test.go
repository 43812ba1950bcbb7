// This file tests the 1-bit traversal (QuantizeBinary): recall beside the
// float32 walk of the same graph, exact distances, persistence.

package hnsw_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

var binaryOpts = &hnsw.Options{Quantize: hnsw.QuantizeBinary}

// TestBinaryRealEmbeddings walks the real model output in ../testdata on
// 1-bit codes: recall@10 at each ef beside the float32 walk of the same
// graph: from ef = 32 within 0.01 of float32's (the walk's rescoring
// makes up for most of what signs misrank), and within 0.1 at any ef.
// Measured: 0.004 below at most from ef = 32, 0.077 at ef = 10.
func TestBinaryRealEmbeddings(t *testing.T) {
	sets := []struct {
		dir     string
		metrics []vector.Metric
	}{
		{"cohere-wiki-768-1k", []vector.Metric{vector.Dot, vector.Cosine, vector.L2}},
		{"bge-m3-1024-alice-926", []vector.Metric{vector.Cosine}},
		{"luceneutil-minilm-384", []vector.Metric{vector.Cosine}},
	}
	if raceEnabled {
		// One set and metric under -race: the graphs are built and
		// walked by one goroutine, which gives the race detector
		// nothing to check; the plain run checks all five.
		sets = sets[1:2]
	}
	for _, set := range sets {
		base, queries := readSet(t, set.dir)
		for _, m := range set.metrics {
			t.Run(set.dir+"/"+m.String(), func(t *testing.T) {
				ds := &recall.Dataset{Name: set.dir, Dim: len(base[0]), Metric: m, Base: base, Queries: queries}
				truth, err := recall.GroundTruth(context.Background(), ds, 10)
				if err != nil {
					t.Fatal(err)
				}
				f, b := pairWith(t, ds, hnsw.Options{M: 8, EfConstruction: 64, Workers: 1}, hnsw.QuantizeBinary)
				if qz := b.Quantizer(); qz == nil || qz.Bits() != 1 {
					t.Fatalf("quantizer %v", qz)
				}
				rf := map[int]float64{}
				for _, ef := range []int{10, 16, 32, 64, 128} {
					rf[ef] = meanRecall(t, f, ds, truth, 10, ef)
					rb := meanRecall(t, b, ds, truth, 10, ef)
					t.Logf("%d × %d-d, ef=%d: recall@10 float32 %.4f binary %.4f", len(base), ds.Dim, ef, rf[ef], rb)
					if gap := rf[ef] - rb; ef >= 32 && gap > 0.01 || gap > 0.1 {
						t.Errorf("ef=%d: binary recall@10 %.4f, float32 %.4f", ef, rb, rf[ef])
					}
				}
			})
		}
	}
}

// TestBinaryConformance runs the index conformance suite on 1-bit codes:
// exact distances in the exact order, filters, deletes, bad input.
func TestBinaryConformance(t *testing.T) {
	newStore, mk := newMemStore, tracking(binaryOpts)
	vectortest.TestIndex(t, newStore, mk, vectortest.IndexConfig{Approximate: true})
}

// TestBinaryReopen saves a 1-bit graph and reads it back: format version
// 3, the same quantizer and results; a saved quantizer whose codes
// disagree with the saved option is corrupt.
func TestBinaryReopen(t *testing.T) {
	ds := recall.Clustered(1500, 30, 96, 4)
	ix, s := build(t, ds, &hnsw.Options{M: 8, EfConstruction: 48, Quantize: hnsw.QuantizeBinary})
	saved := saveGraph(t, ix, 3)
	ix2 := newIndex(t, s, int8Opts) // the stream's option wins
	if _, err := ix2.ReadFrom(bytes.NewReader(saved)); err != nil {
		t.Fatal(err)
	}
	if ix2.Options().Quantize != hnsw.QuantizeBinary || ix2.Quantizer().Bits() != 1 {
		t.Fatalf("Quantize %v after loading a 1-bit graph", ix2.Options().Quantize)
	}
	sameLoad(t, ix, ix2, ds.Queries)

	// The Quantize byte (after Seed) says int8, the version 3: corrupt;
	// version 2 with int8 and a 1-bit quantizer: corrupt too.
	const qByte = 20 + 4 + 1 + 12 + 8 + 8
	for name, f := range map[string]func([]byte){
		"int8 in version 3":         func(b []byte) { b[qByte] = byte(hnsw.QuantizeInt8) },
		"1-bit codes for int8 ones": func(b []byte) { b[qByte] = byte(hnsw.QuantizeInt8); binary.LittleEndian.PutUint32(b[8:], 2) },
	} {
		bad := bytes.Clone(saved)
		f(bad)
		ix3 := newIndex(t, s, nil)
		if _, err := ix3.ReadFrom(bytes.NewReader(fixChecksum(bad))); !errors.Is(err, vector.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
		if ix3.Len() != 0 {
			t.Errorf("%s: Len %d after a failed load", name, ix3.Len())
		}
	}
}

// TestBinaryMemory checks the traversal copy of 1-bit codes: a bit a
// dimension in whole 64-bit words and a 12-byte trailer a slot.
func TestBinaryMemory(t *testing.T) {
	ds := recall.Clustered(1000, 1, 200, 2)
	_, b := pairWith(t, ds, hnsw.Options{M: 8, EfConstruction: 32}, hnsw.QuantizeBinary)
	st := b.Stats()
	if want := int64(st.Slots) * (4*8 + 12); st.CodeBytes != want {
		t.Errorf("CodeBytes %d, want %d", st.CodeBytes, want)
	}
}
