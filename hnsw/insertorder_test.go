package hnsw_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestSearchBesideInsertsFindsK searches while inserts run (under -race)
// and checks that every search returns k results: a node becomes
// reachable on a layer only once its lists on that layer and every layer
// below are set, so no search strands on a node that has no layer-0
// links yet.
func TestSearchBesideInsertsFindsK(t *testing.T) {
	const seeded, total, k = 300, 3300, 10
	ds := recall.Clustered(total, 20, 16, 11)
	s := memStore(t, ds.Dim, ds.Metric)
	// A small M gives many upper-layer nodes, and so many chances to land
	// on one being linked.
	ix := newIndex(t, s, &hnsw.Options{M: 4, EfConstruction: 64})
	ctx := context.Background()
	for i := range seeded {
		if err := ix.Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
			t.Fatal(err)
		}
	}
	var next atomic.Int64
	next.Store(seeded)
	var adding sync.WaitGroup
	for range 3 {
		adding.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				if err := ix.Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var searching sync.WaitGroup
	var short atomic.Int64
	for w := range 2 {
		searching.Go(func() {
			for q := w; ; q++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := ix.SearchWith(ctx, ds.Queries[q%len(ds.Queries)], k, &hnsw.SearchOptions{Ef: 16})
				if err != nil {
					t.Error(err)
					return
				}
				if len(res) != k {
					short.Add(1)
				}
			}
		})
	}
	adding.Wait()
	close(stop)
	searching.Wait()
	if n := short.Load(); n > 0 {
		t.Errorf("%d searches beside inserts returned fewer than %d results", n, k)
	}
}
