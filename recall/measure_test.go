package recall_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// scanIndex is a test index: a MemStore searched by a naive scan with
// Metric.Distance. If lossy, it ignores every vector whose id is odd, so
// that its recall is known to be about one half.
type scanIndex struct {
	s      *vector.MemStore
	lossy  bool
	calls  atomic.Int64
	memory int64
}

func newScan(t *testing.T, dim int, lossy bool) *scanIndex {
	s, err := vector.NewMemStore(dim, vector.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	return &scanIndex{s: s, lossy: lossy}
}

func (x *scanIndex) Add(ctx context.Context, id vector.ID, v vector.Vector) error {
	return x.s.Put(ctx, id, v)
}
func (x *scanIndex) Delete(ctx context.Context, id vector.ID) error { return x.s.Delete(ctx, id) }
func (x *scanIndex) Len() int                                       { return x.s.Len() }
func (x *scanIndex) Search(ctx context.Context, q vector.Vector, k int, _ *vector.SearchOptions) ([]vector.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.calls.Add(1)
	top := vector.NewTopK(k)
	x.s.ForEach(func(id vector.ID, v vector.Vector) error {
		if !x.lossy || id%2 == 0 {
			top.Push(id, float32(vector.Cosine.Distance(q, v)))
		}
		return nil
	})
	return top.Results(), nil
}

// reporting adds the optional MemoryBytes capability.
type reporting struct{ *scanIndex }

func (r reporting) MemoryBytes() int64 { return 12345 }

func TestBuildAndMeasure(t *testing.T) {
	ctx := context.Background()
	ds := recall.Clustered(300, 40, 16, 1)
	truth, err := recall.GroundTruth(ctx, ds, 100)
	if err != nil {
		t.Fatal(err)
	}
	idx := newScan(t, 16, false)
	var lastDone, lastTotal int
	bs, err := recall.Build(ctx, idx, ds.Base, func(d, n int) { lastDone, lastTotal = d, n })
	if err != nil {
		t.Fatal(err)
	}
	if bs.N != 300 || idx.Len() != 300 || bs.Time <= 0 || lastDone != 300 || lastTotal != 300 {
		t.Fatalf("build: %+v, len %d, progress %d/%d", bs, idx.Len(), lastDone, lastTotal)
	}
	// 300 vectors of 16 float32s must grow the heap by at least 19 KB.
	if bs.Bytes < 300*16*4 {
		t.Errorf("build memory %d bytes, want at least %d", bs.Bytes, 300*16*4)
	}
	ticks := 0
	st, err := recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{Warmup: 5, Threads: 2, Recall100: true, Progress: func(d, n int) {
		ticks++
		if d > n {
			t.Errorf("progress %d of %d", d, n)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// An exact index: recall 1 at every depth (no ties in clustered data).
	for _, k := range []int{1, 10, 100} {
		if r, ok := st.Recall[k]; !ok || r != 1 {
			t.Errorf("recall@%d = %v (%v), want 1", k, r, ok)
		}
	}
	if st.Queries != 40 || st.K != 10 || st.Threads != 2 {
		t.Errorf("stats %+v", st)
	}
	l := st.Latency
	if !(0 < l.P50 && l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.Max && l.Mean <= l.Max) {
		t.Errorf("latency not ordered: %+v", l)
	}
	if math.Abs(st.QPS*l.Mean.Seconds()-1) > 0.01 {
		t.Errorf("QPS %v does not match mean latency %v", st.QPS, l.Mean)
	}
	if st.QPSParallel <= 0 {
		t.Errorf("parallel QPS %v", st.QPSParallel)
	}
	// Warm-up 5 + timed 40 + parallel 40 + k=100 pass 40.
	if got := idx.calls.Load(); got != 125 {
		t.Errorf("%d searches, want 125", got)
	}
	if ticks == 0 {
		t.Error("no progress reported")
	}
}

func TestMeasureLossyIndex(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(400, 50, 8, 3)
	truth, _ := recall.GroundTruth(ctx, ds, 10)
	idx := newScan(t, 8, true)
	if _, err := recall.Build(ctx, reporting{idx}, ds.Base, nil); err != nil {
		t.Fatal(err)
	}
	st, err := recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{Threads: -1, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Half the base is invisible: recall@10 near 0.5, and only k = 1 and 10
	// measured (the truth is 10 deep).
	if r := st.Recall[10]; r < 0.35 || r > 0.65 {
		t.Errorf("recall@10 of a half-blind index %v, want about 0.5", r)
	}
	if _, ok := st.Recall[100]; ok || st.QPSParallel != 0 || idx.calls.Load() != 50 {
		t.Errorf("unexpected passes: %+v, %d calls", st, idx.calls.Load())
	}
}

func TestBuildMemoryReporter(t *testing.T) {
	ds := recall.Uniform(10, 0, 4, 1)
	bs, err := recall.Build(context.Background(), reporting{newScan(t, 4, false)}, ds.Base, nil)
	if err != nil || bs.Bytes != 12345 {
		t.Fatalf("bytes %d, %v", bs.Bytes, err)
	}
}

func TestMeasureErrors(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(50, 5, 4, 1)
	truth, _ := recall.GroundTruth(ctx, ds, 10)
	idx := newScan(t, 4, false)
	recall.Build(ctx, idx, ds.Base, nil)
	if _, err := recall.Measure(ctx, idx, ds, truth[:3], nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("short truth: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := recall.Measure(cctx, idx, ds, truth, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := recall.Build(cctx, newScan(t, 4, false), ds.Base, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build: %v", err)
	}
	boom := errors.New("boom")
	_, err := recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{Search: func(context.Context, vector.Vector, int) ([]vector.Result, error) {
		return nil, boom
	}})
	if !errors.Is(err, boom) {
		t.Errorf("search error: %v", err)
	}
}

func TestMeasureCustomSearch(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(100, 20, 4, 1)
	truth, _ := recall.GroundTruth(ctx, ds, 10)
	idx := newScan(t, 4, false)
	recall.Build(ctx, idx, ds.Base, nil)
	slow := func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
		time.Sleep(200 * time.Microsecond)
		return idx.Search(ctx, q, k, nil)
	}
	st, err := recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{Search: slow, K: 5, Threads: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Latency.P50 < 200*time.Microsecond || st.K != 5 || st.Recall[5] != 1 {
		t.Errorf("custom search not measured: %+v", st)
	}
}

func TestMeasureTinyBase(t *testing.T) {
	// Fewer base vectors than k: the truth holds all of them, and an exact
	// index has recall 1 at every k.
	ctx := context.Background()
	ds := recall.Uniform(5, 4, 8, 1)
	truth, _ := recall.GroundTruth(ctx, ds, 100)
	idx := newScan(t, 8, false)
	recall.Build(ctx, idx, ds.Base, nil)
	st, err := recall.Measure(ctx, idx, ds, truth, &recall.MeasureOptions{Recall100: true, Threads: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 10, 100} {
		if st.Recall[k] != 1 {
			t.Errorf("recall@%d = %v, want 1", k, st.Recall[k])
		}
	}
}
