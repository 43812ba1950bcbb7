package recall_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestConcurrentUse runs the package's functions on one Dataset from
// several goroutines at once; under -race it checks that a Dataset is only
// read and that the functions share no state.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	ds := recall.Clustered(300, 12, 16, 5)
	want, err := recall.GroundTruth(ctx, ds, 10)
	if err != nil {
		t.Fatal(err)
	}
	idx := newScan(t, 16, false)
	if _, err := recall.Build(ctx, idx, ds.Base, nil); err != nil {
		t.Fatal(err)
	}
	opts := &recall.MeasureOptions{Threads: 2, Warmup: 2}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			got, err := recall.GroundTruth(ctx, ds, 10)
			if err != nil || !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("goroutine %d: ground truth differs (%v)", g, err)
			}
			st, err := recall.Measure(ctx, idx, ds, want, opts)
			if err != nil || st.Recall[10] != 1 {
				t.Errorf("goroutine %d: measure %v, recall %v", g, err, st.Recall)
			}
			res, _ := idx.Search(ctx, ds.Queries[g], 10, nil)
			if r := recall.At(res, want[g], 10); r != 1 {
				t.Errorf("goroutine %d: At = %v", g, r)
			}
			_ = recall.Uniform(50, 5, 8, int64(g)) // generators share no state
		})
	}
	wg.Wait()
	var _ vector.Index = idx
}
