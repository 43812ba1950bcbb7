// This file tests an HNSW collection that walks codes
// (CollectionConfig.HNSW.Quantize, QuantizeDims): validation, persistence
// of the options and the graph, and exact scores.

package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// TestQuantizedCollection creates an HNSW collection that walks int8
// codes, 1-bit codes, or int8 codes of a prefix, in a file, checks its
// scores against an exact collection's, reopens the file, and checks that
// the options and the answers survive.
func TestQuantizedCollection(t *testing.T) {
	for _, o := range []hnsw.Options{
		{M: 8, Quantize: hnsw.QuantizeInt8},
		{M: 8, Quantize: hnsw.QuantizeBinary},
		{M: 8, Quantize: hnsw.QuantizeInt8, QuantizeDims: 16},
	} {
		t.Run(fmt.Sprintf("%v-%d", o.Quantize, o.QuantizeDims), func(t *testing.T) { quantizedCollection(t, o) })
	}
}

func quantizedCollection(t *testing.T, o hnsw.Options) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cairn.CollectionConfig{Dim: 24, Metric: vector.L2, Index: cairn.HNSW, HNSW: o}
	c := mustCollection(t, db, "q", cfg)
	ex := mustCollection(t, db, "exact", cairn.CollectionConfig{Dim: 24, Metric: vector.L2, Index: cairn.Flat})
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 800 {
		it := cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, 24)}
		if err := c.Add(ctx, it); err != nil {
			t.Fatal(err)
		}
		if err := ex.Add(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	qs := make([][]float32, 10)
	before := make([][]cairn.Result, len(qs))
	for i := range qs {
		qs[i] = randVec(r, 24)
		if before[i], err = c.Query(ctx, qs[i], 10, nil); err != nil {
			t.Fatal(err)
		}
		want, _ := ex.Query(ctx, qs[i], 800, nil)
		exact := map[string]float64{}
		for _, w := range want {
			exact[w.ID] = w.Score
		}
		for _, got := range before[i] {
			if e := exact[got.ID]; math.Abs(got.Score-e) > 1e-5*max(1, math.Abs(e)) {
				t.Errorf("query %d id %s: score %v, exact %v", i, got.ID, got.Score, e)
			}
		}
	}
	db.Close()
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if got := c.Config(); got.Index != cairn.HNSW || got.HNSW.Quantize != o.Quantize || got.HNSW.QuantizeDims != o.QuantizeDims {
		t.Fatalf("config after reopen: %+v", got)
	}
	for i, q := range qs {
		after, err := c.Query(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(after) != fmt.Sprint(before[i]) {
			t.Errorf("query %d: %v before the reopen, %v after", i, before[i], after)
		}
	}
}

// TestQuantizedCollectionInvalid checks that an undefined quantization, a
// QuantizeDims without one and one past Dim are refused when the
// collection is created.
func TestQuantizedCollectionInvalid(t *testing.T) {
	db := cairn.OpenMemory(nil)
	defer db.Close()
	for _, o := range []hnsw.Options{{Quantize: 9}, {QuantizeDims: 2}, {Quantize: hnsw.QuantizeInt8, QuantizeDims: 5}} {
		_, err := db.CreateCollection(context.Background(), "bad", cairn.CollectionConfig{Dim: 4, HNSW: o})
		if !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}
}
