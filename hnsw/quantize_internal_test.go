// This file checks from inside that the int8 walk reads the codes: its
// distances before rescoring are the estimates, not the exact ones.

package hnsw

import (
	"context"
	"math"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func TestWalkCodesEstimates(t *testing.T) {
	ds := recall.Clustered(800, 10, 32, 6)
	s, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(s, &Options{M: 8, EfConstruction: 40, Quantize: QuantizeInt8})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	qz := ix.Quantizer()
	if qz == nil || ix.inline || ix.lnk0 != codeWords(ds.Dim) {
		t.Fatalf("quantizer %v, inline %v, links at %d", qz, ix.inline, ix.lnk0)
	}
	differ, total := 0, 0
	for _, q := range ds.Queries {
		qv := make([]float32, ds.Dim)
		if err := vector.PrepareInto(qv, q, ds.Dim, ds.Metric); err != nil {
			t.Fatal(err)
		}
		pq, err := qz.Prepare(qv)
		if err != nil {
			t.Fatal(err)
		}
		sc := ix.getScratch()
		ix.mu.RLock()
		if _, ok := ix.walkCodes(sc, qz, qv, 10, 32, nil, nil); !ok {
			t.Fatal("walkCodes refused a prepared query")
		}
		ix.mu.RUnlock()
		for _, c := range sc.w {
			est, exact := pq.Distance(ix.code(c.node)), ix.dist(qv, ix.vec(c.node))
			if c.dist != est {
				t.Fatalf("finalist %d: walk distance %v, estimate %v", c.node, c.dist, est)
			}
			if math.Abs(float64(est-exact)) > 0.05 {
				t.Errorf("finalist %d: estimate %v, exact %v", c.node, est, exact)
			}
			if est != exact {
				differ++
			}
			total++
		}
		ix.scratch.Put(sc)
	}
	if differ < total/2 {
		t.Errorf("only %d of %d finalists' walk distances differ from the exact ones: the walk does not read the codes", differ, total)
	}
}
