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

// newMemStore is memStore as the conformance suite's store factory.
func newMemStore(t *testing.T, dim int, m vector.Metric) vector.Store { return memStore(t, dim, m) }

// tracking is the conformance suite's index factory: a new index with o
// over the store, tracking every vector the store holds.
func tracking(o *hnsw.Options) vectortest.IndexFactory {
	return func(t *testing.T, s vector.Store) vector.Index {
		ix := newIndex(t, s, o)
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
}

func TestConformance(t *testing.T) {
	newStore, mk := newMemStore, tracking(nil)
	t.Run("MemStore", func(t *testing.T) {
		vectortest.TestIndex(t, newStore, mk, vectortest.IndexConfig{Approximate: true})
	})
	// A store without PutBatch, for AddBatch's one-by-one path.
	plain := func(t *testing.T, dim int, m vector.Metric) vector.Store { return plainStore{memStore(t, dim, m)} }
	t.Run("PlainStore", func(t *testing.T) {
		vectortest.TestIndex(t, plain, mk, vectortest.IndexConfig{Approximate: true})
	})
}

// plainStore hides the optional capabilities of a MemStore.
type plainStore struct{ vector.Store }

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

// TestRecall checks recall@10 against exact ground truth on two small sets
// with fixed seeds: clustered 1,500 × 64-d (bound 0.95 at the default ef,
// measured 1.0; 0.99 at ef=10) and the harder uniform 1,000 × 32-d (EfConstruction 64) (bounds
// below the measured 0.87 at ef=16, 0.998 at ef=64 and 0.999 at ef=200), and that
// recall rises with ef.
func TestRecall(t *testing.T) {
	for _, c := range []struct {
		ds    *recall.Dataset
		o     *hnsw.Options
		efs   []int
		bound []float64
	}{
		{recall.Clustered(1500, 100, 64, 1), nil, []int{10, hnsw.DefaultEfSearch}, []float64{0.9, 0.95}},
		{recall.Uniform(1000, 100, 32, 1), &hnsw.Options{EfConstruction: 64}, []int{16, 64, 200}, []float64{0.8, 0.96, 0.98}},
	} {
		t.Run(c.ds.Name, func(t *testing.T) {
			truth, err := recall.GroundTruth(context.Background(), c.ds, 10)
			if err != nil {
				t.Fatal(err)
			}
			ix, _ := build(t, c.ds, c.o)
			prev := 0.0
			for i, ef := range c.efs {
				r := meanRecall(t, ix, c.ds, truth, 10, ef)
				t.Logf("ef=%d recall@10=%.4f", ef, r)
				if r < c.bound[i] {
					t.Errorf("ef=%d: recall@10 = %.4f, want >= %.2f", ef, r, c.bound[i])
				}
				if r < prev-0.005 {
					t.Errorf("ef=%d: recall@10 %.4f below %.4f at a smaller ef", ef, r, prev)
				}
				prev = r
			}
			// ef 0 means the default.
			if r0, r := meanRecall(t, ix, c.ds, truth, 10, 0), meanRecall(t, ix, c.ds, truth, 10, hnsw.DefaultEfSearch); r0 != r {
				t.Errorf("recall@10 %.4f with ef 0, %.4f with the default ef", r0, r)
			}
		})
	}
}

// TestAddBatchRollback makes the store refuse the last vector of a batch
// (its id is already in the store, though not indexed): nothing is added,
// with or without the store's PutBatch.
func TestAddBatchRollback(t *testing.T) {
	ds := recall.Clustered(3, 1, 4, 13)
	for _, c := range []struct {
		name string
		wrap func(*vector.MemStore) vector.Store
	}{
		{"PutBatch", func(s *vector.MemStore) vector.Store { return s }},
		{"Put", func(s *vector.MemStore) vector.Store { return plainStore{s} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := memStore(t, 4, ds.Metric)
			ctx := context.Background()
			if err := ms.Put(ctx, 7, ds.Base[2]); err != nil {
				t.Fatal(err)
			}
			ix := newIndex(t, c.wrap(ms), nil)
			err := ix.AddBatch(ctx, []vector.ID{5, 6, 7}, ds.Base)
			if !errors.Is(err, vector.ErrDuplicateID) {
				t.Fatalf("AddBatch: %v, want ErrDuplicateID", err)
			}
			if ix.Len() != 0 || ms.Len() != 1 {
				t.Fatalf("after a failed batch: Len %d, store %d", ix.Len(), ms.Len())
			}
			if err := ix.AddBatch(ctx, []vector.ID{5, 6}, ds.Base[:2]); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// closeAfterPut is a store closed right after each Put, as by a Close
// of another goroutine that lands there.
type closeAfterPut struct{ *vector.MemStore }

func (s closeAfterPut) Put(ctx context.Context, id vector.ID, v vector.Vector) error {
	err := s.MemStore.Put(ctx, id, v)
	s.MemStore.Close()
	return err
}

// TestAddStoreClosed: an Add whose store is closed between its Put and
// the graph's lookup of the vector's slot fails with ErrClosed, where it
// said the vector was not in the store (ErrNotFound).
func TestAddStoreClosed(t *testing.T) {
	ix := newIndex(t, closeAfterPut{memStore(t, 4, vector.L2)}, nil)
	if err := ix.Add(context.Background(), 7, vector.Vector{1, 2, 3, 4}); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("Add over a store closed after its Put: %v, want ErrClosed", err)
	}
}

// saveGraph returns ix's saved graph, having checked that it is written in
// format version want.
func saveGraph(t testing.TB, ix *hnsw.Index, want uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(buf.Bytes()[8:]); v != want {
		t.Fatalf("graph written in format version %d, want %d", v, want)
	}
	return buf.Bytes()
}
