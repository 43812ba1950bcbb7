package cairn_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
)

// TestReadsLeaveFileUnchanged opens a file holding a collection of each
// index kind, all with a TTL and none expired, runs every read on each
// (queries in every mode, with filters; Get, Find, Count, Items, Info,
// Collections), waits for each collection's expiry sweep (which finds
// nothing), and closes it: round after round, the file's bytes must not
// change. An Auto collection with a recall target is sent enough queries
// to measure its ways to the target on them in the background; one HNSW
// collection has no graph saved, so each open rebuilds it.
func TestReadsLeaveFileUnchanged(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	const dim, n = 8, 300
	graph := hnsw.Options{M: 8, EfConstruction: 40, Seed: 3}
	configs := map[string]cairn.CollectionConfig{
		"flat":         {Dim: dim, Index: cairn.Flat},
		"hnsw":         {Dim: dim, Index: cairn.HNSW, HNSW: graph},
		"hnsw-unsaved": {Dim: dim, Index: cairn.HNSW, HNSW: graph}, // its graph deleted from the file below
		"qflat":        {Dim: dim, Index: cairn.QFlat},
		"auto-below":   {Dim: dim, AutoThreshold: 2 * n, HNSW: graph},
		"auto-above":   {Dim: dim, AutoThreshold: n / 2, HNSW: graph},
		"auto-target":  {Dim: dim, AutoThreshold: n / 2, HNSW: hnsw.Options{M: 8, EfConstruction: 40, Seed: 3, TargetRecall: 0.9}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range configs {
		cfg.TTL = time.Hour
		c := mustCollection(t, db, name, cfg)
		items := make([]cairn.Item, n)
		for i := range items {
			items[i] = cairn.Item{ID: fmt.Sprint("id", i), Embedding: randVec(r, dim), Text: fmt.Sprintf("text %d word%d", i, i%7),
				Metadata: map[string]any{"i": i, "odd": i%2 == 1}}
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Without a saved graph, each open rebuilds it, and must not save it.
	sdb, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sdb.Collection(ctx, "hnsw-unsaved")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.DeleteIndex(ctx, "hnsw"); err != nil {
		t.Fatal(err)
	}
	if err := sdb.Close(); err != nil {
		t.Fatal(err)
	}
	want := fileSum(t, path)

	rounds := 3
	if testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		db, err := cairn.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			swept = make(map[string]bool)
			all   = make(chan struct{})
		)
		db.SetSweptHookForTest(func(coll string, removed int, err error) {
			if removed != 0 || err != nil {
				t.Errorf("round %d: sweep of %q: removed %d, %v; want 0, nil", round, coll, removed, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !swept[coll] {
				swept[coll] = true
				if len(swept) == len(configs) {
					close(all)
				}
			}
		})
		infos, err := db.Collections(ctx)
		if err != nil || len(infos) != len(configs) {
			t.Fatalf("round %d: Collections: got %d, %v", round, len(infos), err)
		}
		for name := range configs {
			c, err := db.Collection(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			readEverything(t, c, r, dim)
			if name == "auto-target" {
				// Enough plain vector queries that the scan in use is
				// measured against the graph on them, in the background.
				for range hnsw.MinRealQueries + 50 {
					if _, err := c.Query(ctx, randVec(r, dim), 10, nil); err != nil {
						t.Fatal(err)
					}
				}
				c.WaitRoutedForTest()
				if info, err := c.Info(ctx); err != nil || info.Recall.Route == nil || info.Recall.Route.Queries < hnsw.MinRealQueries {
					t.Fatalf("round %d: %s: no measurement on the queries: %+v, %v", round, name, info.Recall.Route, err)
				}
			}
		}
		<-all // every collection swept once
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := fileSum(t, path); got != want {
			t.Fatalf("round %d: the file changed (sha256 %x, was %x) though nothing was written", round, got, want)
		}
	}
}

// readEverything runs every kind of read on c, failing t on an error.
func readEverything(t *testing.T, c *cairn.Collection, r *rand.Rand, dim int) {
	t.Helper()
	ctx := context.Background()
	q := randVec(r, dim)
	filter := cairn.And(cairn.Gte("i", 10), cairn.Eq("odd", true))
	queries := []*cairn.QueryOptions{
		nil,
		{Filter: filter},
		{Mode: cairn.KeywordMode, Keywords: "word3"},
		{Mode: cairn.HybridMode, Keywords: "word3"},
		{Mode: cairn.HybridMode, Keywords: "text", Filter: filter},
	}
	for _, o := range queries {
		emb := q
		if o != nil && o.Mode == cairn.KeywordMode {
			emb = nil
		}
		if rs, err := c.Query(ctx, emb, 5, o); err != nil || len(rs) == 0 {
			t.Fatalf("%s: query %+v: %d results, %v", c.Name(), o, len(rs), err)
		}
	}
	if _, err := c.QueryText(ctx, "word5", 5, &cairn.QueryOptions{Mode: cairn.KeywordMode}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "id1", "id2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Find(ctx, filter, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Count(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Info(ctx); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*cairn.ItemsOptions{nil, {Embeddings: true, Filter: filter}} {
		for _, err := range c.Items(ctx, o) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fileSum returns the sha256 of the file at path.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
