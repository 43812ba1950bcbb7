// This file tests Matryoshka truncation (Options.QuantizeDims): codes of
// each vector's first components, finalists rescored on whole vectors.

package hnsw_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestTruncatedRealEmbeddings walks the Cohere 768-d vectors on codes of
// their first components, int8 and 1-bit, beside the float32 walk of the
// same graph. These embeddings were not trained for truncation, so a
// prefix ranks worse than it would for a Matryoshka model; the bar is
// that rescoring on whole vectors makes up for it as the beam widens:
// at ef = 128, recall@10 within 0.02 of float32's (measured: 0 below;
// 0.003 below at ef = 64 on the first 256 components).
func TestTruncatedRealEmbeddings(t *testing.T) {
	base, queries := readSet(t, "cohere-wiki-768-1k")
	ds := &recall.Dataset{Name: "cohere", Dim: len(base[0]), Metric: vector.Cosine, Base: base, Queries: queries}
	truth, err := recall.GroundTruth(context.Background(), ds, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind hnsw.Quantize
		dims int
	}{{hnsw.QuantizeInt8, 256}, {hnsw.QuantizeInt8, 384}, {hnsw.QuantizeBinary, 384}} {
		t.Run(fmt.Sprintf("%v-%d", c.kind, c.dims), func(t *testing.T) {
			o := hnsw.Options{M: 8, EfConstruction: 64, Workers: 1}
			f, s := build(t, ds, &o)
			var buf bytes.Buffer
			if _, err := f.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			o.Quantize, o.QuantizeDims = c.kind, c.dims
			q := newIndex(t, s, &o)
			if _, err := q.ReadFrom(&buf); err != nil {
				t.Fatal(err)
			}
			if qz := q.Quantizer(); qz == nil || qz.Coded() != c.dims || qz.Dim() != ds.Dim {
				t.Fatalf("quantizer %v", qz)
			}
			for _, ef := range []int{10, 32, 64, 128} {
				rf := meanRecall(t, f, ds, truth, 10, ef)
				rq := meanRecall(t, q, ds, truth, 10, ef)
				t.Logf("ef=%d: recall@10 float32 %.4f, %v of the first %d %.4f", ef, rf, c.kind, c.dims, rq)
				if ef == 128 && rq < rf-0.02 {
					t.Errorf("ef=128: recall@10 %.4f, float32 %.4f", rq, rf)
				}
			}
		})
	}
}

// TestTruncatedConformance runs the index conformance suite on int8 codes
// of three quarters of each vector: exact distances in the exact order
// whatever the codes hold. The suite's vectors have independent
// components, the case truncation is not for: at three quarters recall@10
// was 0.967–0.987 against the bar of 0.9, at half 0.77–0.82.
func TestTruncatedConformance(t *testing.T) {
	mk := func(t *testing.T, s vector.Store) vector.Index {
		return tracking(&hnsw.Options{Quantize: hnsw.QuantizeInt8, QuantizeDims: max(1, s.Dim()*3/4)})(t, s)
	}
	vectortest.TestIndex(t, newMemStore, mk, vectortest.IndexConfig{Approximate: true})
}

// TestTruncatedOptions checks the refusals of QuantizeDims and that a
// graph saved with it reads back with it (format version 3), while a
// damaged QuantizeDims, or a quantizer that disagrees with it, is corrupt.
func TestTruncatedOptions(t *testing.T) {
	s := memStore(t, 8, vector.L2)
	for _, o := range []hnsw.Options{
		{QuantizeDims: 4},
		{Quantize: hnsw.QuantizeInt8, QuantizeDims: -1},
		{Quantize: hnsw.QuantizeInt8, QuantizeDims: 9},
	} {
		if _, err := hnsw.New(s, &o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}

	ds := recall.Clustered(600, 5, 32, 4)
	ix, st := build(t, ds, &hnsw.Options{M: 8, EfConstruction: 32, Quantize: hnsw.QuantizeInt8, QuantizeDims: 12})
	saved := saveGraph(t, ix, 3)
	back := newIndex(t, st, nil)
	if _, err := back.ReadFrom(bytes.NewReader(saved)); err != nil {
		t.Fatal(err)
	}
	if o := back.Options(); o.Quantize != hnsw.QuantizeInt8 || o.QuantizeDims != 12 || back.Quantizer().Coded() != 12 {
		t.Fatalf("read back Quantize %v, QuantizeDims %d", o.Quantize, o.QuantizeDims)
	}
	r1, _ := ix.Search(context.Background(), ds.Queries[0], 5, nil)
	r2, _ := back.Search(context.Background(), ds.Queries[0], 5, nil)
	if fmt.Sprint(r1) != fmt.Sprint(r2) {
		t.Fatalf("%v before, %v after", r1, r2)
	}
	// QuantizeDims follows the Quantize byte (after Seed).
	const dimsAt = 20 + 4 + 1 + 12 + 8 + 8 + 1
	for name, dims := range map[string]uint32{"past the dimension": 33, "not the quantizer's": 10} {
		bad := bytes.Clone(saved)
		binary.LittleEndian.PutUint32(bad[dimsAt:], dims)
		g := newIndex(t, st, nil)
		if _, err := g.ReadFrom(bytes.NewReader(fixChecksum(bad))); !errors.Is(err, vector.ErrCorrupt) {
			t.Errorf("QuantizeDims %s: %v, want ErrCorrupt", name, err)
		}
	}
}
