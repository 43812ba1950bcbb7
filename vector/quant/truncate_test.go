package quant_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// TestTruncatedCodes checks Matryoshka truncation (TrainOptions.Dims):
// a quantizer trained on a store's first d′ components codes and
// estimates as one trained on a store of those prefixes (renormalised
// under Cosine) does, for int8 and 1-bit codes, while taking and
// checking vectors of the whole dimension.
func TestTruncatedCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	const full, d = 96, 40
	for _, bits := range []int{8, 1} {
		for _, m := range metrics {
			vs := randVecs(r, 300, full)
			pre := make([]vector.Vector, len(vs))
			for i, v := range vs {
				pre[i] = slices.Clone(v[:d])
			}
			tq := train(t, storeOf(t, full, m, vs), &quant.TrainOptions{Bits: bits, Dims: d})
			pq := train(t, storeOf(t, d, m, pre), &quant.TrainOptions{Bits: bits})
			if tq.Dim() != full || tq.Coded() != d || tq.CodeSize() != pq.CodeSize() {
				t.Fatalf("Dim %d, Coded %d, CodeSize %d (want %d)", tq.Dim(), tq.Coded(), tq.CodeSize(), pq.CodeSize())
			}
			if err := tq.Check(full, m); err != nil {
				t.Fatal(err)
			}
			if err := tq.Check(d, m); !errors.Is(err, vector.ErrDimensionMismatch) {
				t.Fatalf("Check against the prefix's dimension: %v", err)
			}
			qv := randVecs(r, 1, full)[0]
			tp, err := tq.Prepare(qv)
			if err != nil {
				t.Fatal(err)
			}
			pp, err := pq.Prepare(qv[:d])
			if err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				tc, pc := encode(t, tq, vs[i]), encode(t, pq, pre[i])
				a, b := tp.Distance(tc), pp.Distance(pc)
				// Under Cosine the store's float32 normalisation and the
				// prefix's float64 one can move a component by an ulp.
				if m != vector.Cosine && (!slices.Equal(tc, pc) || a != b) ||
					math.Abs(float64(a-b)) > 1e-3 {
					t.Fatalf("%d bits, %v, vector %d: estimate %v, of the prefix %v", bits, m, i, a, b)
				}
			}
			b, _ := tq.MarshalBinary()
			var back quant.Quantizer
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if back.Dim() != full || back.Coded() != d || back.Bits() != bits {
				t.Fatalf("read back Dim %d, Coded %d, Bits %d", back.Dim(), back.Coded(), back.Bits())
			}
			if _, err := tq.Prepare(qv[:d]); !errors.Is(err, vector.ErrDimensionMismatch) {
				t.Fatalf("a query of the prefix's length: %v", err)
			}
		}
	}
}

// TestTruncatedRefusals checks the options and uses that truncation
// refuses, and that a vector whose prefix is zero codes and scores to
// finite numbers under Cosine.
func TestTruncatedRefusals(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	vs := randVecs(r, 50, 20)
	s := storeOf(t, 20, vector.Cosine, vs)
	for _, d := range []int{-1, 21} {
		if _, err := quant.Train(t.Context(), s, &quant.TrainOptions{Dims: d}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Dims %d: %v, want ErrInvalidOptions", d, err)
		}
	}
	for _, bits := range []int{8, 1} {
		q := train(t, s, &quant.TrainOptions{Bits: bits, Dims: 5})
		var bq quant.BoundedQuery
		if err := q.PrepareBounded(&bq, vs[0]); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("PrepareBounded on truncated codes: %v", err)
		}
		zero := make(vector.Vector, 20)
		zero[10] = 1 // a unit vector whose first five components are 0
		c := encode(t, q, zero)
		p, err := q.Prepare(zero)
		if err != nil {
			t.Fatal(err)
		}
		p2, _ := q.Prepare(vs[1])
		for _, d := range []float32{p.Distance(c), p2.Distance(c), p.Distance(encode(t, q, vs[2]))} {
			if math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) {
				t.Fatalf("%d bits: a zero prefix scores %v", bits, d)
			}
		}
	}
}
