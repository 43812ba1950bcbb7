package hnsw_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestConcurrent runs adds, batch adds, deletes and searches at once (run
// under -race), then checks the graph and that every id it reports is
// searchable.
func TestConcurrent(t *testing.T) {
	ds := recall.Clustered(1200, 50, 16, 7)
	s := memStore(t, ds.Dim, ds.Metric)
	ix := newIndex(t, s, &hnsw.Options{M: 6, EfConstruction: 32, Workers: 3})
	ctx := context.Background()
	var wg sync.WaitGroup
	// Four adders of single vectors: ids 0..399.
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < 400; i += 4 {
				if err := ix.Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// A batch adder: ids 400..1199 in batches of 100.
	wg.Go(func() {
		for b := 400; b < 1200; b += 100 {
			ids := make([]vector.ID, 100)
			for i := range ids {
				ids[i] = vector.ID(b + i)
			}
			if err := ix.AddBatch(ctx, ids, ds.Base[b:b+100]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	// A deleter of even ids below 400, once they exist.
	wg.Go(func() {
		for i := 0; i < 400; i += 2 {
			if i%50 == 0 {
				// Repair the pending deletes now and then.
				if err := ix.Flush(ctx); err != nil {
					t.Error(err)
					return
				}
			}
			for {
				err := ix.Delete(ctx, vector.ID(i))
				if err == nil {
					break
				}
				if !errors.Is(err, vector.ErrNotFound) {
					t.Error(err)
					return
				}
			}
		}
	})
	// A deleter of every tenth batch id, racing the batch inserts: a
	// Delete of an id whose insert has not finished finds nothing.
	wg.Go(func() {
		for i := 400; i < 1200; i += 10 {
			for {
				err := ix.Delete(ctx, vector.ID(i))
				if err == nil {
					break
				}
				if !errors.Is(err, vector.ErrNotFound) {
					t.Error(err)
					return
				}
			}
		}
	})
	// Two searchers.
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 300 {
				q := ds.Queries[r.IntN(len(ds.Queries))]
				if _, err := ix.Search(ctx, q, 5, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	if want := 1200 - 200 - 80; ix.Len() != want || s.Len() != want {
		t.Fatalf("Len %d, store %d, want %d", ix.Len(), s.Len(), want)
	}
	// Every remaining vector finds itself.
	missed := 0
	for i := 1; i < 1200; i += 7 {
		if i < 400 && i%2 == 0 || i >= 400 && i%10 == 0 {
			continue
		}
		got, err := ix.Search(ctx, ds.Base[i], 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Distance > 1e-5 {
			missed++
		}
	}
	if missed > 2 {
		t.Errorf("%d vectors not found as their own nearest neighbour", missed)
	}
}
