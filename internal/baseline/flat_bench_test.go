package baseline_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// BenchmarkSearchBatch answers 1,000 queries over 100,000 × 768 with
// flat's SearchBatch and, on the same arena, with gonum's BLAS: one Sgemm
// per arena block computes the same 1,000 × n distances (without taking a
// top k, which flatters it). flat's blocked scan must beat it to stay.
//
//	go test -run '^$' -bench SearchBatch -benchtime 3x ./internal/baseline/
func BenchmarkSearchBatch(b *testing.B) {
	const n, nq, dim = 100000, 1000, 768
	ds := recall.Uniform(n, nq, dim, 1)
	s, err := vector.NewMemStore(dim, vector.Cosine)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	ctx := context.Background()
	if err := s.PutBatch(ctx, ids, ds.Base); err != nil {
		b.Fatal(err)
	}
	idx := flat.New(s)
	b.Run("cairn-flat-batch", func(b *testing.B) {
		for b.Loop() {
			if _, err := idx.SearchBatch(ctx, ds.Queries, 10, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
	})
	b.Run("gonum-sgemm", func(b *testing.B) {
		qm := blas32.General{Rows: nq, Cols: dim, Stride: dim, Data: make([]float32, nq*dim)}
		for i, q := range ds.Queries {
			copy(qm.Data[i*dim:], q)
		}
		c := blas32.General{Rows: nq, Cols: 256, Stride: 256, Data: make([]float32, nq*256)}
		for b.Loop() {
			_ = s.ViewBlocks(func(blocks []vector.Block) error {
				for _, blk := range blocks {
					rows := len(blk.IDs)
					x := blas32.General{Rows: rows, Cols: dim, Stride: dim, Data: blk.Data}
					c.Cols = rows
					blas32.Gemm(blas.NoTrans, blas.Trans, 1, qm, x, 0, c)
				}
				return nil
			})
		}
		b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
	})
}
