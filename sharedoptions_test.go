package cairn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
)

// TestSharedOptionsConcurrent backs the doc comments that say a call only
// reads its options: one value of each serves many goroutines at once
// (run with -race), beside writes.
func TestSharedOptionsConcurrent(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	if err != nil {
		t.Fatal(err)
	}
	md := map[string]any{"k": "v", "imp": 0.5}
	for i := range 50 {
		if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{float32(i + 1), 1}, Text: fmt.Sprint("word w", i%3), Metadata: md}); err != nil {
			t.Fatal(err)
		}
	}
	keepAll := func(_ context.Context, _ string, cs []cairn.Result) ([]string, error) {
		ids := make([]string, len(cs))
		for i, r := range cs {
			ids[i] = r.ID
		}
		return ids, nil
	}
	opts := []*cairn.QueryOptions{
		{Filter: cairn.Eq("k", "v"), MinSimilarity: new(0.1), MMR: &cairn.MMR{Lambda: 0.5}},
		{Mode: cairn.HybridMode, Keywords: "word", Fusion: &cairn.Fusion{}, Rerank: &cairn.Rerank{Func: keepAll}},
		{Recency: &cairn.Recency{HalfLife: time.Hour, Importance: "imp"}, WithEmbeddings: true},
	}
	dedup := &cairn.Dedup{MinSimilarity: 0.99, Scope: []string{"k"}}
	items := &cairn.ItemsOptions{Filter: cairn.Eq("k", "v"), IDs: []string{"1", "2"}, Embeddings: true}
	emb := []float32{1, 2}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range 10 {
				for _, o := range opts {
					if _, err := c.Query(ctx, []float32{1, 1}, 5, o); err != nil {
						t.Error(err)
					}
				}
				if _, err := c.UpsertDedup(ctx, dedup, cairn.Item{ID: fmt.Sprint("u", g), Embedding: emb, Metadata: md}); err != nil {
					t.Error(err)
				}
				for _, err := range c.Items(ctx, items) {
					if err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()

	// The indexes' SearchOptions, with an allow-list, shared by searches
	// running beside adds.
	allow := vector.NewIDSet()
	for i := range 100 {
		allow.Add(vector.ID(2 * i))
	}
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() vector.Vector { return vector.Vector{r.Float32() + 0.1, r.Float32(), r.Float32(), r.Float32()} }
	type searcher struct {
		name   string
		add    func(vector.ID, vector.Vector) error
		search func() error
	}
	var ss []searcher
	{
		st, _ := vector.NewMemStore(4, vector.Cosine)
		x := flat.New(st)
		o := &vector.SearchOptions{Filter: allow}
		ss = append(ss, searcher{"flat", func(id vector.ID, v vector.Vector) error { return x.Add(ctx, id, v) },
			func() error { _, err := x.Search(ctx, vector.Vector{1, 0, 0, 0}, 5, o); return err }})
	}
	{
		st, _ := vector.NewMemStore(4, vector.Cosine)
		x, err := qflat.New(st, nil)
		if err != nil {
			t.Fatal(err)
		}
		o := &qflat.SearchOptions{SearchOptions: vector.SearchOptions{Filter: allow}, Rescore: 4}
		ss = append(ss, searcher{"qflat", func(id vector.ID, v vector.Vector) error { return x.Add(ctx, id, v) },
			func() error { _, err := x.SearchWith(ctx, vector.Vector{1, 0, 0, 0}, 5, o); return err }})
	}
	{
		st, _ := vector.NewMemStore(4, vector.Cosine)
		x, err := hnsw.New(st, &hnsw.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		o := &hnsw.SearchOptions{SearchOptions: vector.SearchOptions{Filter: allow}, Ef: 20}
		ss = append(ss, searcher{"hnsw", func(id vector.ID, v vector.Vector) error { return x.Add(ctx, id, v) },
			func() error { _, err := x.SearchWith(ctx, vector.Vector{1, 0, 0, 0}, 5, o); return err }})
	}
	for _, s := range ss {
		vs := make([]vector.Vector, 300)
		for i := range vs {
			vs[i] = vec()
		}
		for i := range 100 {
			if err := s.add(vector.ID(i), vs[i]); err != nil {
				t.Fatal(s.name, err)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 100; i < 300; i++ {
				if err := s.add(vector.ID(i), vs[i]); err != nil {
					t.Error(s.name, err)
				}
			}
		})
		for range 3 {
			wg.Go(func() {
				for range 50 {
					if err := s.search(); err != nil {
						t.Error(s.name, err)
					}
				}
			})
		}
		wg.Wait()
	}
}
