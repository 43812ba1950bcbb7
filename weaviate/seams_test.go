package weaviate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/memorytest"
	"github.com/cairndb/cairn/vector"
)

// TestClusterRecreated: a handle to a collection deleted and made again
// under its name (with another dimension) neither writes nor deletes in
// the new one, which stays as its own handle made it.
func TestClusterRecreated(t *testing.T) {
	clusterAddrs(t)
	ctx := context.Background()
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			db := openCluster(t, &Options{Transport: tr})
			name := memorytest.Name(t)
			old, err := db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: 3, Index: cairn.Flat})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.DeleteCollection(context.Background(), name) })
			if err := old.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 2, 3}}); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteCollection(ctx, name); err != nil {
				t.Fatal(err)
			}
			dropped(t, db, old.(*Collection).Class())
			neu, err := db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
			if err != nil {
				t.Fatal(err)
			}
			if err := neu.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 2}}); err != nil {
				t.Fatal(err)
			}
			for _, call := range []struct {
				name string
				err  error
			}{
				{"Add", old.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 2, 3}})},
				{"Upsert", old.Upsert(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 2, 3}})},
				{"Delete", old.Delete(ctx, "x")},
				{"DeleteWhere", func() error { _, err := old.DeleteWhere(ctx, cairn.And()); return err }()},
			} {
				if !errors.Is(call.err, vector.ErrNotFound) {
					t.Errorf("%s through the deleted collection's handle: %v, want ErrNotFound", call.name, call.err)
				}
			}
			if n, err := neu.Count(ctx); err != nil || n != 1 {
				t.Fatalf("the new collection: Count = %d, %v; want 1", n, err)
			}
			if res, err := neu.Query(ctx, []float32{1, 2}, 5, nil); err != nil || len(res) != 1 || res[0].ID != "x" {
				t.Fatalf("the new collection: Query = %v, %v", res, err)
			}

			// The same for an index.
			oldIx, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: 3, Metric: vector.L2, Index: cairn.Flat})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.DropIndex(context.Background(), name) })
			if err := oldIx.Add(ctx, 1, vector.Vector{1, 2, 3}); err != nil {
				t.Fatal(err)
			}
			if err := db.DropIndex(ctx, name); err != nil {
				t.Fatal(err)
			}
			dropped(t, db, oldIx.Class())
			newIx, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: 2, Metric: vector.L2, Index: cairn.Flat})
			if err != nil {
				t.Fatal(err)
			}
			if err := newIx.Add(ctx, 1, vector.Vector{1, 2}); err != nil {
				t.Fatal(err)
			}
			if err := oldIx.Add(ctx, 2, vector.Vector{1, 2, 3}); !errors.Is(err, vector.ErrNotFound) {
				t.Errorf("Add through the dropped index's handle: %v, want ErrNotFound", err)
			}
			if err := oldIx.Delete(ctx, 1); !errors.Is(err, vector.ErrNotFound) {
				t.Errorf("Delete through the dropped index's handle: %v, want ErrNotFound", err)
			}
			if n := newIx.Len(); n != 1 {
				t.Errorf("the new index holds %d vectors, want 1", n)
			}
		})
	}
}

// TestClusterConfigKept: a collection's config reads back as it was made
// (QFlat served by Weaviate's flat index, AutoThreshold), and what the
// cluster cannot keep or serve is refused at once, as bad input.
func TestClusterConfigKept(t *testing.T) {
	clusterAddrs(t)
	ctx := context.Background()
	db := openCluster(t, nil)
	name := memorytest.Name(t)
	cfg := cairn.CollectionConfig{Dim: 2, Metric: vector.L2, Index: cairn.QFlat, AutoThreshold: 77}
	mc, err := db.CreateCollection(ctx, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.DeleteCollection(context.Background(), name) })
	if err := mc.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 2}, Metadata: map[string]any{"n": 1 << 53}}); err != nil {
		t.Fatal(err)
	}
	again, err := db.Collection(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Config(); got.Index != cairn.QFlat || got.AutoThreshold != 77 {
		t.Fatalf("Config after Collection: %+v, want QFlat and AutoThreshold 77", got)
	}
	infos, err := db.Collections(ctx)
	listed := false
	for _, in := range infos {
		listed = listed || in.Name == name
	}
	if err != nil || !listed {
		t.Fatalf("Collections: %v, %v; want %q listed", infos, err, name)
	}
	if res, err := again.Query(ctx, []float32{1, 2}, 1, nil); err != nil || len(res) != 1 {
		t.Fatalf("Query of the QFlat collection: %v, %v", res, err)
	}
	big := int64(1<<53 + 1)
	start := time.Now()
	for _, call := range []struct {
		name string
		err  error
	}{
		{"KeepHistory", func() error {
			_, err := db.CreateCollection(ctx, name+"-h", cairn.CollectionConfig{Dim: 2, KeepHistory: &cairn.HistoryPolicy{Versions: 1}})
			return err
		}()},
		{"a name not UTF-8", func() error { _, err := db.CreateCollection(ctx, "n\xff", cairn.CollectionConfig{Dim: 2}); return err }()},
		{"an id not UTF-8", mc.Add(ctx, cairn.Item{ID: "a\xff", Embedding: []float32{1, 2}})},
		{"a text not UTF-8", mc.Add(ctx, cairn.Item{ID: "b", Text: "t\xfe", Embedding: []float32{1, 2}})},
		{"an integer beyond 2^53", mc.Add(ctx, cairn.Item{ID: "c", Embedding: []float32{1, 2}, Metadata: map[string]any{"n": big}})},
		{"a filter on one", func() error { _, err := mc.Find(ctx, cairn.Eq("n", big), 0); return err }()},
		{"Recency", func() error {
			_, err := mc.Query(ctx, []float32{1, 2}, 1, &cairn.QueryOptions{Recency: &cairn.Recency{HalfLife: time.Hour}})
			return err
		}()},
	} {
		if !errors.Is(call.err, vector.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", call.name, call.err)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the refusals took %v: bad input was retried as if the cluster failed", d)
	}
	if err := db.DeleteCollection(ctx, name); err != nil {
		t.Fatalf("DeleteCollection of the QFlat collection: %v", err)
	}
}

// TestClusterFilterBeyondReach: a Go filter whose allowed vectors lie
// beyond the MaxResults nearest fails with ErrBeyondReach rather than
// answer short; one that finds k within reach answers.
func TestClusterFilterBeyondReach(t *testing.T) {
	clusterAddrs(t)
	ctx := context.Background()
	db := openCluster(t, nil)
	db.opt.MaxResults = 50 // as a cluster with QUERY_MAXIMUM_RESULTS 50
	name := memorytest.Name(t)
	ix, err := db.NewIndex(ctx, name, cairn.CollectionConfig{Dim: 2, Metric: vector.L2, Index: cairn.Flat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.DropIndex(context.Background(), name) })
	ids := make([]vector.ID, 100)
	vs := make([]vector.Vector, 100)
	for i := range ids {
		ids[i], vs[i] = vector.ID(i+1), vector.Vector{float32(i + 1), 0}
	}
	if err := ix.AddBatch(ctx, ids, vs); err != nil {
		t.Fatal(err)
	}
	far := vector.FilterFunc(func(id vector.ID) bool { return id > 90 })
	if res, err := ix.Search(ctx, vector.Vector{0, 0}, 5, &vector.SearchOptions{Filter: far}); !errors.Is(err, ErrBeyondReach) {
		t.Errorf("a filter beyond reach: %v, %v; want ErrBeyondReach", res, err)
	}
	near := vector.FilterFunc(func(id vector.ID) bool { return id%7 == 0 })
	res, err := ix.Search(ctx, vector.Vector{0, 0}, 5, &vector.SearchOptions{Filter: near})
	if err != nil || len(res) != 5 || res[0].ID != 7 || res[4].ID != 35 {
		t.Errorf("a filter within reach: %v, %v; want 7, 14, …, 35", res, err)
	}
}

// TestClusterFindBesideWrites: Find over three pages, while other items
// are deleted and added, returns every item no write touched, once each
// (paged by offset, it skipped and repeated some: a delete shifted the
// pages after it).
func TestClusterFindBesideWrites(t *testing.T) {
	clusterAddrs(t)
	ctx := context.Background()
	db := openCluster(t, nil)
	name := memorytest.Name(t)
	mc, err := db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: 2, Metric: vector.L2, Index: cairn.Flat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.DeleteCollection(context.Background(), name) })
	items := func(prefix string, n int) []cairn.Item {
		out := make([]cairn.Item, n)
		for i := range out {
			out[i] = cairn.Item{ID: fmt.Sprintf("%s%05d", prefix, i), Embedding: []float32{float32(i), 1}}
		}
		return out
	}
	// Victims first, interleaved in time with the kept items by batches.
	victims, kept := items("v", 300), items("k", 2*findPage+500)
	for i := 0; i < len(kept); i += 250 {
		if i/250 < len(victims)/30 {
			if err := mc.Add(ctx, victims[i/250*30:i/250*30+30]...); err != nil {
				t.Fatal(err)
			}
		}
		if err := mc.Add(ctx, kept[i:min(i+250, len(kept))]...); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // deletes the victims and adds new items, until stopped
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i < len(victims) {
				mc.Delete(ctx, victims[i].ID)
			}
			mc.Add(ctx, cairn.Item{ID: fmt.Sprintf("n%05d", i), Embedding: []float32{1, 2}})
		}
	})
	for round := range 3 {
		got, err := mc.Find(ctx, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, it := range got {
			count[it.ID]++
		}
		for _, it := range kept {
			if count[it.ID] != 1 {
				t.Errorf("round %d: kept item %s found %d times", round, it.ID, count[it.ID])
				break
			}
		}
	}
	close(stop)
	wg.Wait()
}
