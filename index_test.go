package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
)

// TestAutoSwitches checks that an Auto collection searches exactly below
// its threshold and with HNSW from it on, and answers the same way across
// the switch.
func TestAutoSwitches(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	const dim, threshold = 8, 200
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: dim, AutoThreshold: threshold, HNSW: hnsw.Options{M: 8}})
	r := rand.New(rand.NewPCG(3, 4))
	add := func(lo, hi int) {
		t.Helper()
		items := make([]cairn.Item, 0, hi-lo)
		for i := lo; i < hi; i++ {
			items = append(items, cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, dim)})
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
	}
	add(0, threshold-1)
	if got := cairn.MustInfo(t, c).Index; got != cairn.Flat {
		t.Fatalf("below threshold: index %v, want flat", got)
	}
	q := randVec(r, dim)
	before, err := c.Query(ctx, q, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(threshold-1, threshold)
	info := cairn.MustInfo(t, c)
	if info.Index != cairn.HNSW || info.Config.Index != cairn.Auto || info.Count != threshold {
		t.Fatalf("at threshold: %+v", info)
	}
	after, err := c.Query(ctx, q, 5, &cairn.QueryOptions{Ef: 200})
	if err != nil {
		t.Fatal(err)
	}
	// The new item may enter the top 5; the others must still be found.
	found := map[string]bool{}
	for _, r := range after {
		found[r.ID] = true
	}
	for _, r := range before {
		if !found[r.ID] && !found[fmt.Sprint(threshold-1)] {
			t.Errorf("after the switch, %s is missing from %v", r.ID, ids(after))
		}
	}
	// Deleting below the threshold keeps the graph.
	if err := c.Delete(ctx, "0", "1", "2"); err != nil {
		t.Fatal(err)
	}
	if got := cairn.MustInfo(t, c).Index; got != cairn.HNSW {
		t.Errorf("after shrinking: index %v, want hnsw kept", got)
	}
}

func TestIndexKinds(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW, cairn.QFlat, cairn.Auto} {
		c := mustCollection(t, db, kind.String(), cairn.CollectionConfig{Dim: 4, Index: kind})
		if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 2, 3, 4}}, cairn.Item{ID: "b", Embedding: []float32{4, 3, 2, 1}}); err != nil {
			t.Fatal(err)
		}
		want := kind
		if kind == cairn.Auto {
			want = cairn.Flat
		}
		if got := cairn.MustInfo(t, c).Index; got != want {
			t.Errorf("%v: index in use %v, want %v", kind, got, want)
		}
		res, err := c.Query(ctx, []float32{4, 3, 2, 0}, 1, &cairn.QueryOptions{Ef: 10})
		if err != nil || len(res) != 1 || res[0].ID != "b" {
			t.Errorf("%v: query = %v, %v", kind, res, err)
		}
		if _, err := c.Query(ctx, []float32{4, 3, 2, 0}, 1, &cairn.QueryOptions{Ef: -1}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%v: Ef = -1: %v", kind, err)
		}
	}
	_, err := db.CreateCollection(ctx, "bad", cairn.CollectionConfig{Dim: 4, Index: cairn.HNSW, HNSW: hnsw.Options{M: 1}})
	if !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("M = 1: %v", err)
	}
	if _, err := db.CreateCollection(ctx, "bad", cairn.CollectionConfig{Dim: 4, Index: 7}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("index kind 7: %v", err)
	}
	if _, err := db.CreateCollection(ctx, "bad", cairn.CollectionConfig{Dim: 4, Index: cairn.QFlat, QFlat: qflat.Options{Rescore: -1}}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("rescore -1: %v", err)
	}
}

// TestAutoSwitchDoesNotBlockQueries checks that while an Auto collection
// builds its graph, queries still run (with exact search).
func TestAutoSwitchDoesNotBlockQueries(t *testing.T) {
	ctx := context.Background()
	var c *cairn.Collection
	var once sync.Once
	queried := make(chan error, 1)
	var named atomic.Value // the collection name progress was reported for
	db := cairn.OpenMemory(&cairn.Options{IndexProgress: func(coll string, done, total int) {
		named.Store(coll)
		once.Do(func() {
			go func() {
				res, err := c.Query(ctx, []float32{1, 0, 0, 0}, 3, nil)
				if err == nil && len(res) != 3 {
					err = fmt.Errorf("%d results", len(res))
				}
				queried <- err
			}()
			select {
			case err := <-queried:
				queried <- err
			case <-time.After(10 * time.Second):
				queried <- errors.New("query blocked by the graph build")
			}
		})
	}})
	defer db.Close()
	c = mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 4, AutoThreshold: 100})
	r := rand.New(rand.NewPCG(8, 8))
	items := make([]cairn.Item, 150)
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, 4)}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-queried:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("the graph was built without reporting progress")
	}
	if cairn.MustInfo(t, c).Index != cairn.HNSW {
		t.Fatalf("index %v after the switch", cairn.MustInfo(t, c).Index)
	}
	if got := named.Load(); got != "c" {
		t.Fatalf("progress reported for collection %v, want c", got)
	}
}
