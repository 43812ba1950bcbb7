package hnsw_test

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func memStore(t testing.TB, dim int, m vector.Metric) *vector.MemStore {
	s, err := vector.NewMemStore(dim, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newIndex returns an index over s and checks the graph's integrity when
// the test ends.
func newIndex(t testing.TB, s vector.Store, o *hnsw.Options) *hnsw.Index {
	ix, err := hnsw.New(s, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ix.Verify(); err != nil {
			t.Error(err)
		}
	})
	return ix
}

func TestConformance(t *testing.T) {
	newStore := func(t *testing.T, dim int, m vector.Metric) vector.Store { return memStore(t, dim, m) }
	mk := func(t *testing.T, s vector.Store) vector.Index {
		ix := newIndex(t, s, nil)
		var ids []vector.ID
		if err := s.ForEach(func(id vector.ID, _ vector.Vector) error {
			ids = append(ids, id)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := ix.Track(context.Background(), ids); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	vectortest.TestIndex(t, newStore, mk, vectortest.IndexConfig{Approximate: true})
}

// build indexes ds.Base under ids 0..n-1 with AddBatch.
func build(t testing.TB, ds *recall.Dataset, o *hnsw.Options) (*hnsw.Index, *vector.MemStore) {
	s := memStore(t, ds.Dim, ds.Metric)
	ix := newIndex(t, s, o)
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	return ix, s
}

// meanRecall searches every query of ds with ef and returns the mean
// recall@k against truth.
func meanRecall(t testing.TB, ix *hnsw.Index, ds *recall.Dataset, truth [][]int32, k, ef int) float64 {
	var sum float64
	for i, q := range ds.Queries {
		got, err := ix.SearchWith(context.Background(), q, k, &hnsw.SearchOptions{Ef: ef})
		if err != nil {
			t.Fatal(err)
		}
		sum += recall.At(got, truth[i], k)
	}
	return sum / float64(len(ds.Queries))
}

// TestRecall checks recall@10 on a small clustered set (2,000 × 64-d, seed
// 1) against exact ground truth, and that it rises with ef.
func TestRecall(t *testing.T) {
	ds := recall.Clustered(2000, 100, 64, 1)
	truth, err := recall.GroundTruth(context.Background(), ds, 10)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := build(t, ds, nil)
	for _, c := range []struct {
		ef  int
		min float64
	}{{10, 0.7}, {hnsw.DefaultEfSearch, 0.95}, {200, 0.98}} {
		r := meanRecall(t, ix, ds, truth, 10, c.ef)
		t.Logf("ef=%d recall@10=%.4f", c.ef, r)
		if r < c.min {
			t.Errorf("ef=%d: recall@10 = %.4f, want >= %.2f", c.ef, r, c.min)
		}
	}
	if r := meanRecall(t, ix, ds, truth, 10, 0); r < 0.95 {
		t.Errorf("default ef: recall@10 = %.4f, want >= 0.95", r)
	}
}
