package flat_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/vector"
)

func memStore(t *testing.T, dim int, m vector.Metric) vector.Store {
	s, err := vector.NewMemStore(dim, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// plainStore hides the optional capabilities of a MemStore, so the suite
// also covers flat's ForEach path.
type plainStore struct{ vector.Store }

func TestConformance(t *testing.T) {
	newIndex := func(t *testing.T, s vector.Store) vector.Index { return flat.New(s) }
	t.Run("MemStore", func(t *testing.T) {
		vectortest.TestIndex(t, memStore, newIndex, vectortest.IndexConfig{})
	})
	t.Run("PlainStore", func(t *testing.T) {
		plain := func(t *testing.T, dim int, m vector.Metric) vector.Store {
			return plainStore{memStore(t, dim, m)}
		}
		vectortest.TestIndex(t, plain, newIndex, vectortest.IndexConfig{})
	})
}

func randVecs(r *rand.Rand, n, dim int) []vector.Vector {
	out := make([]vector.Vector, n)
	for i := range out {
		v := make(vector.Vector, dim)
		for j := range v {
			v[j] = r.Float32()*2 - 1
		}
		out[i] = v
	}
	return out
}

// TestParallelScanMatchesSerial checks the multi-worker scan (several
// thousand vectors, so every core gets blocks) and the batch search against
// each other and against a serial scan through ForEach.
func TestParallelScanMatchesSerial(t *testing.T) {
	const n, dim = 6000, 32
	r := rand.New(rand.NewPCG(7, 7))
	ctx := context.Background()
	for _, m := range []vector.Metric{vector.Cosine, vector.Dot, vector.L2} {
		t.Run(m.String(), func(t *testing.T) {
			s := memStore(t, dim, m)
			idx := flat.New(s)
			serial := flat.New(plainStore{s})
			vs := randVecs(r, n, dim)
			ids := make([]vector.ID, n)
			for i := range ids {
				ids[i] = vector.ID(i)
			}
			if err := idx.AddBatch(ctx, ids, vs); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i += 5 {
				if err := idx.Delete(ctx, vector.ID(i)); err != nil {
					t.Fatal(err)
				}
			}
			qs := randVecs(r, 40, dim)
			odd := &vector.SearchOptions{Filter: vector.FilterFunc(func(id vector.ID) bool { return id%2 == 1 })}
			for _, opts := range []*vector.SearchOptions{nil, odd} {
				batch, err := idx.SearchBatch(ctx, qs, 10, opts)
				if err != nil {
					t.Fatal(err)
				}
				for i, q := range qs {
					a, err := idx.Search(ctx, q, 10, opts)
					if err != nil {
						t.Fatal(err)
					}
					b, err := serial.Search(ctx, q, 10, opts)
					if err != nil {
						t.Fatal(err)
					}
					if !equalResults(a, b) || !equalResults(a, batch[i]) {
						t.Fatalf("query %d: parallel %v\nserial %v\nbatch %v", i, a, b, batch[i])
					}
				}
			}
		})
	}
}

// equalResults compares ids exactly and distances to within float32
// rounding: the serial path scores with the single-vector kernel and the
// block scans with the four-row batch kernel, which sum in another order.
func equalResults(a, b []vector.Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		d := math.Abs(float64(a[i].Distance - b[i].Distance))
		if a[i].ID != b[i].ID || d > 1e-5*math.Max(1, math.Abs(float64(a[i].Distance))) {
			return false
		}
	}
	return true
}

func TestSearchBatchBadInput(t *testing.T) {
	idx := flat.New(memStore(t, 4, vector.Cosine))
	ctx := context.Background()
	if _, err := idx.SearchBatch(ctx, []vector.Vector{{1, 0, 0, 0}, {0, 0, 0, 0}}, 3, nil); !errors.Is(err, vector.ErrZeroVector) {
		t.Fatalf("zero query: %v", err)
	}
	if _, err := idx.SearchBatch(ctx, []vector.Vector{{1, 0, 0}}, 3, nil); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Fatalf("short query: %v", err)
	}
	if _, err := idx.SearchBatch(ctx, []vector.Vector{{1, 0, 0, 0}}, 0, nil); !errors.Is(err, vector.ErrInvalidK) {
		t.Fatalf("k=0: %v", err)
	}
	got, err := idx.SearchBatch(ctx, nil, 3, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("no queries: %v %v", got, err)
	}
}

func TestSearchCancelledMidScan(t *testing.T) {
	s := memStore(t, 8, vector.L2)
	idx := flat.New(s)
	r := rand.New(rand.NewPCG(1, 1))
	ctx := context.Background()
	vs := randVecs(r, 20000, 8)
	ids := make([]vector.ID, len(vs))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := idx.AddBatch(ctx, ids, vs); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	calls := 0
	stopper := vector.FilterFunc(func(vector.ID) bool {
		calls++
		if calls == 100 {
			cancel()
		}
		return true
	})
	// One worker calls the filter, so no race on calls.
	_, err := flat.New(plainStore{s}).Search(cctx, vs[0], 5, &vector.SearchOptions{Filter: stopper})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Search cancelled mid-scan = %v, want context.Canceled", err)
	}
}

func TestScoresSetExactly(t *testing.T) {
	s := memStore(t, 2, vector.L2)
	idx := flat.New(s)
	ctx := context.Background()
	for i := range 64 * 1000 {
		if err := s.Put(ctx, vector.ID(i), vector.Vector{float32(i), 1}); err != nil {
			t.Fatal(err)
		}
	}
	// At 64,000 vectors the limit is 1,000 ids.
	if !idx.ScoresSetExactly(1000, 10, 0) || idx.ScoresSetExactly(1001, 10, 0) {
		t.Fatalf("ScoresSetExactly around 1,000 of 64,000: %v, %v", idx.ScoresSetExactly(1000, 10, 0), idx.ScoresSetExactly(1001, 10, 0))
	}
}
