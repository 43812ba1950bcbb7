package hnsw_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestFilter checks that filtered searches return k allowed results when k
// exist, through the graph walk (a FilterFunc, and a large IDSet) and through the exact path (a small IDSet), and that the
// results are the exact top k of the allowed ids.
func TestFilter(t *testing.T) {
	ds := recall.Clustered(1500, 20, 16, 8)
	ix, _ := build(t, ds, &hnsw.Options{M: 8, EfConstruction: 64})
	ctx := context.Background()
	big := vector.NewIDSet()
	for i := 0; i < len(ds.Base); i++ {
		if i%2 == 1 {
			big.Add(vector.ID(i))
		}
	}
	// Walk the graph for every filter but the tiny sets.
	old := hnsw.SetFilterCrossover(1e-4)
	defer hnsw.SetFilterCrossover(old)
	for _, c := range []struct {
		name   string
		filter vector.Filter
		allow  func(vector.ID) bool
	}{
		{"every 50th", vector.FilterFunc(func(id vector.ID) bool { return id%50 == 3 }), func(id vector.ID) bool { return id%50 == 3 }},
		{"three ids", vector.NewIDSet(5, 17, 1499), func(id vector.ID) bool { return id == 5 || id == 17 || id == 1499 }},
		{"odd ids", big, func(id vector.ID) bool { return id%2 == 1 }},
		{"none", vector.NewIDSet(), func(vector.ID) bool { return false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var allowed []vector.ID
			for i := range ds.Base {
				if c.allow(vector.ID(i)) {
					allowed = append(allowed, vector.ID(i))
				}
			}
			for qi, q := range ds.Queries[:5] {
				got, err := ix.Search(ctx, q, 10, &vector.SearchOptions{Filter: c.filter})
				if err != nil {
					t.Fatal(err)
				}
				if want := min(10, len(allowed)); len(got) != want {
					t.Fatalf("query %d: %d results, want %d", qi, len(got), want)
				}
				for _, r := range got {
					if !c.allow(r.ID) {
						t.Fatalf("query %d: id %d not allowed", qi, r.ID)
					}
				}
				// Exact top k of the allowed ids.
				tk := vector.NewTopK(10)
				for _, id := range allowed {
					tk.Push(id, float32(ds.Metric.Distance(q, ds.Base[id])))
				}
				exact := tk.Results()
				hits := 0
				for _, r := range got {
					for _, e := range exact {
						if e.ID == r.ID {
							hits++
						}
					}
				}
				if len(exact) > 0 && float64(hits)/float64(len(exact)) < 0.8 {
					t.Errorf("query %d: %d of %d exact results found", qi, hits, len(exact))
				}
			}
		})
	}
}

// TestBadInput checks that bad calls give typed errors and change nothing.
func TestBadInput(t *testing.T) {
	ds := recall.Clustered(50, 1, 8, 9)
	ix, s := build(t, ds, nil)
	ctx := context.Background()
	nan := append(vector.Vector(nil), ds.Base[0]...)
	nan[3] = float32(math.NaN())
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		name string
		call func() error
		want error
	}{
		{"add wrong dim", func() error { return ix.Add(ctx, 100, make(vector.Vector, 7)) }, vector.ErrDimensionMismatch},
		{"add NaN", func() error { return ix.Add(ctx, 100, nan) }, vector.ErrNonFinite},
		{"add zero under cosine", func() error { return ix.Add(ctx, 100, make(vector.Vector, 8)) }, vector.ErrZeroVector},
		{"add duplicate", func() error { return ix.Add(ctx, 3, ds.Base[0]) }, vector.ErrDuplicateID},
		{"add cancelled", func() error { return ix.Add(cancelled, 100, ds.Base[0]) }, context.Canceled},
		{"batch length mismatch", func() error { return ix.AddBatch(ctx, []vector.ID{100}, nil) }, vector.ErrInvalidOptions},
		{"batch repeated id", func() error {
			return ix.AddBatch(ctx, []vector.ID{100, 100}, ds.Base[:2])
		}, vector.ErrDuplicateID},
		{"batch existing id", func() error {
			return ix.AddBatch(ctx, []vector.ID{100, 4}, ds.Base[:2])
		}, vector.ErrDuplicateID},
		{"batch bad vector", func() error {
			return ix.AddBatch(ctx, []vector.ID{100, 101}, []vector.Vector{ds.Base[0], nan})
		}, vector.ErrNonFinite},
		{"delete missing", func() error { return ix.Delete(ctx, 100) }, vector.ErrNotFound},
		{"track missing", func() error { return ix.Track(ctx, []vector.ID{100}) }, vector.ErrNotFound},
		{"track indexed", func() error { return ix.Track(ctx, []vector.ID{1}) }, vector.ErrDuplicateID},
		{"untrack missing", func() error { return ix.Untrack(ctx, []vector.ID{1, 100}) }, vector.ErrNotFound},
		{"search k=0", func() error { _, err := ix.Search(ctx, ds.Base[0], 0, nil); return err }, vector.ErrInvalidK},
		{"search wrong dim", func() error { _, err := ix.Search(ctx, ds.Base[0][:4], 1, nil); return err }, vector.ErrDimensionMismatch},
		{"search NaN", func() error { _, err := ix.Search(ctx, nan, 1, nil); return err }, vector.ErrNonFinite},
		{"search negative ef", func() error {
			_, err := ix.SearchWith(ctx, ds.Base[0], 1, &hnsw.SearchOptions{Ef: -1})
			return err
		}, vector.ErrInvalidOptions},
		{"search cancelled", func() error { _, err := ix.Search(cancelled, ds.Base[0], 1, nil); return err }, context.Canceled},
		{"update bad vector", func() error { return ix.Update(ctx, 3, nan) }, vector.ErrNonFinite},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if ix.Len() != 50 || s.Len() != 50 {
				t.Fatalf("Len %d, store %d after a failed call, want 50", ix.Len(), s.Len())
			}
			if _, err := s.Get(100); err == nil {
				t.Fatal("id 100 reached the store")
			}
		})
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (*hnsw.Options)(nil).Validate(); err != nil {
		t.Errorf("nil options: %v", err)
	}
	if err := (&hnsw.Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	bad := &hnsw.Options{M: 1, EfConstruction: -1, EfSearch: hnsw.MaxEf + 1, LevelMult: math.NaN(), Workers: -2}
	err := bad.Validate()
	if !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("Validate: %v, want ErrInvalidOptions", err)
	}
	for _, field := range []string{"M", "EfConstruction", "EfSearch", "LevelMult", "Workers"} {
		if !contains(err.Error(), field+" =") {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	s := memStore(t, 4, vector.L2)
	if _, err := hnsw.New(s, bad); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("New with bad options: %v", err)
	}
	if _, err := hnsw.New(nil, nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("New with nil store: %v", err)
	}
	ix, err := hnsw.New(s, &hnsw.Options{M: 8})
	if err != nil {
		t.Fatal(err)
	}
	o := ix.Options()
	if o.M != 8 || o.EfConstruction != hnsw.DefaultEfConstruction || o.EfSearch != hnsw.DefaultEfSearch ||
		math.Abs(o.LevelMult-1/math.Log(8)) > 1e-12 || o.Seed != hnsw.DefaultSeed || o.Workers < 1 {
		t.Errorf("defaults not filled in: %+v", o)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestBuildCancelAndProgress cancels a bulk build from its progress
// callback: the build stops early, keeps what it linked (in the store and
// the index alike) and reports ctx's error.
func TestBuildCancelAndProgress(t *testing.T) {
	ds := recall.Clustered(3000, 1, 8, 10)
	s := memStore(t, ds.Dim, ds.Metric)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, last int
	ix := newIndex(t, s, &hnsw.Options{M: 4, EfConstruction: 16, Progress: func(done, total int) {
		calls++
		if done < last || total != 3000 {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
		if done >= 1000 {
			cancel()
		}
	}})
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	err := ix.AddBatch(ctx, ids, ds.Base)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("AddBatch: %v, want context.Canceled", err)
	}
	if n := ix.Len(); n < 1000 || n >= 3000 || s.Len() != n {
		t.Fatalf("after cancel: Len %d, store %d", n, s.Len())
	}
	if calls < 3 {
		t.Errorf("%d progress calls", calls)
	}
	// A second build completes and reports done == total at the end.
	calls, last = 0, 0
	ix2 := newIndex(t, memStore(t, ds.Dim, ds.Metric), &hnsw.Options{M: 4, EfConstruction: 16, Progress: func(done, total int) {
		calls++
		last = done
	}})
	if err := ix2.AddBatch(context.Background(), ids[:700], ds.Base[:700]); err != nil {
		t.Fatal(err)
	}
	if last != 700 {
		t.Errorf("last progress %d, want 700", last)
	}
}

// TestTrackUntrack indexes vectors already in a store, then removes some
// from the index only.
func TestTrackUntrack(t *testing.T) {
	ds := recall.Clustered(500, 5, 8, 11)
	s := memStore(t, ds.Dim, ds.Metric)
	ctx := context.Background()
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := s.PutBatch(ctx, ids, ds.Base); err != nil {
		t.Fatal(err)
	}
	ix := newIndex(t, s, nil)
	if err := ix.Track(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if err := ix.Untrack(ctx, ids[:100]); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 400 || s.Len() != 500 {
		t.Fatalf("Len %d, store %d", ix.Len(), s.Len())
	}
	got, err := ix.Search(ctx, ds.Base[5], 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.ID < 100 {
			t.Errorf("untracked id %d returned", r.ID)
		}
	}
}

// TestSearchCancelledMidway cancels a search from inside its walk (a filter
// that rejects everything makes it expand the whole graph) and expects
// ctx's error back.
func TestSearchCancelledMidway(t *testing.T) {
	ds := recall.Clustered(2000, 1, 8, 12)
	ix, _ := build(t, ds, &hnsw.Options{M: 4, EfConstruction: 16})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	f := vector.FilterFunc(func(vector.ID) bool {
		calls++
		if calls == 10 {
			cancel()
		}
		return false
	})
	_, err := ix.Search(ctx, ds.Queries[0], 5, &vector.SearchOptions{Filter: f})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Search: %v, want context.Canceled", err)
	}
	t.Logf("%d filter calls", calls)
	if calls >= len(ds.Base) {
		t.Errorf("the walk went on after cancellation: %d filter calls", calls)
	}
}

// TestScoresSetExactly checks the rule callers ask about: s² ≤
// FilterCrossover · max(ef, k) · n, with ef defaulting to EfSearch.
func TestScoresSetExactly(t *testing.T) {
	s, err := vector.NewMemStore(2, vector.L2)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := hnsw.New(s, &hnsw.Options{EfSearch: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 1000 {
		if err := ix.Add(ctx, vector.ID(i), vector.Vector{float32(i), float32(i % 7)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		s, k, ef int
		want     bool
	}{
		{374, 10, 0, true},   // 374² = 139,876 ≤ 14·10·1000
		{375, 10, 0, false},  // 140,625 > 140,000
		{529, 10, 20, true},  // ef 20: 279,841 ≤ 280,000
		{530, 20, 10, false}, // k 20 raises ef to 20: 280,900 > 280,000
		{1000, 100, 0, true}, // k 100: 1,000,000 ≤ 1,400,000
	} {
		if got := ix.ScoresSetExactly(c.s, c.k, c.ef); got != c.want {
			t.Errorf("ScoresSetExactly(%d, %d, %d) = %v, want %v", c.s, c.k, c.ef, got, c.want)
		}
	}
}

// TestWalkDistances: a search with WalkDistances finds what one without
// it finds, with the walk's distances, each within the two kernels'
// difference of the exact one; on codes, the exact ones.
func TestWalkDistances(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(2000, 40, 96, 5)
	for _, q := range []hnsw.Quantize{hnsw.QuantizeNone, hnsw.QuantizeInt8} {
		s := memStore(t, 96, vector.Cosine)
		ix := newIndex(t, s, &hnsw.Options{Quantize: q})
		for i, v := range ds.Base {
			if err := ix.Add(ctx, vector.ID(i+1), v); err != nil {
				t.Fatal(err)
			}
		}
		differ := 0
		for _, qv := range ds.Queries {
			exact, err := ix.SearchWith(ctx, qv, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			walked, err := ix.SearchWith(ctx, qv, 10, &hnsw.SearchOptions{WalkDistances: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(walked) != len(exact) {
				t.Fatalf("%d results with WalkDistances, %d without", len(walked), len(exact))
			}
			for i := range exact {
				if walked[i].ID != exact[i].ID {
					t.Fatalf("quantize %v: result %d is %d with WalkDistances, %d without", q, i, walked[i].ID, exact[i].ID)
				}
				d := math.Abs(float64(walked[i].Distance - exact[i].Distance))
				if d > 1e-5 || q != hnsw.QuantizeNone && d != 0 {
					t.Fatalf("quantize %v: result %d at %v with WalkDistances, %v without", q, i, walked[i].Distance, exact[i].Distance)
				}
				if d != 0 {
					differ++
				}
			}
		}
		t.Logf("quantize %v: %d distances differ in the last bits", q, differ)
		if q == hnsw.QuantizeNone && differ == 0 {
			t.Error("no distance differs from one scoring: the walk's were not kept")
		}
	}
}
