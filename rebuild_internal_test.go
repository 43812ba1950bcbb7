package cairn

// This file tests the rebuilding of a graph without its expired items
// (rebuild.go), with writes landing while it runs.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// storePath returns "" for the memory store, else a file's path.
func storePath(t *testing.T, store string) string {
	if store == "memory" {
		return ""
	}
	return filepath.Join(t.TempDir(), "c.cairn")
}

// rebuildFixture is an HNSW collection of n items, of which the first
// expire expire a minute after clk's time.
func rebuildFixture(t *testing.T, path string, clk *FakeClock, n, expire int) (*DB, *Collection) {
	t.Helper()
	was := rebuildMin
	rebuildMin = 64
	t.Cleanup(func() { rebuildMin = was })
	ctx := context.Background()
	db := OpenMemory(nil)
	if path != "" {
		var err error
		if db, err = Open(ctx, path, nil); err != nil {
			t.Fatal(err)
		}
	}
	db.clock = clk.Now
	db.noSweeper = true
	c, err := db.GetOrCreateCollection(ctx, "c", CollectionConfig{Dim: 8, Index: HNSW})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}
		if i < expire {
			items[i].ExpiresAt = clk.Now().Add(time.Minute)
		}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	return db, c
}

func randVec(r *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// checkGraph checks that the collection's graph holds exactly the visible
// versions, that nothing retired is left unevicted, and that a query wide
// enough returns every item that Items lists, each found by its own
// vector.
func checkGraph(t *testing.T, c *Collection, want int) {
	t.Helper()
	ctx := context.Background()
	c.mu.RLock()
	h, ok := c.idx.(*hnsw.Index)
	vis := c.visibleIDs()
	unpub := c.cat.ver.Hidden()
	c.mu.RUnlock()
	c.life.rebuild.mu.Lock()
	rebuilding, deferred := c.life.rebuild.running, len(c.life.rebuild.deferred)
	c.life.rebuild.mu.Unlock()
	if !ok {
		t.Fatalf("index %T, want HNSW", c.idx)
	}
	if err := h.Verify(); err != nil {
		t.Fatal(err)
	}
	if h.Len() != len(vis) || len(vis) != want {
		t.Fatalf("graph holds %d, %d visible, want %d", h.Len(), len(vis), want)
	}
	if unpub != 0 || rebuilding || deferred != 0 {
		t.Fatalf("after the sweep: %d unpublished, rebuilding %v, %d deferred", unpub, rebuilding, deferred)
	}
	var items []Item
	for it, err := range c.Items(ctx, &ItemsOptions{Embeddings: true}) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if len(items) != want {
		t.Fatalf("Items lists %d, want %d", len(items), want)
	}
	for _, it := range items {
		rs, err := c.Query(ctx, it.Embedding, 1, &QueryOptions{Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].ID != it.ID {
			t.Fatalf("query by %q's vector returned %v", it.ID, rs)
		}
	}
}

// TestRebuildOnMassExpiry expires most of an HNSW collection, in memory
// and in a file, while writes land between the rebuild's build and its
// catch-up: items added, deleted, and upserted with new vectors. The sweep
// must rebuild the graph, and the new one must hold exactly what readers
// see; a file must reopen with the same items.
func TestRebuildOnMassExpiry(t *testing.T) {
	for _, store := range []string{"memory", "file"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			path := storePath(t, store)
			clk := NewFakeClock()
			db, c := rebuildFixture(t, path, clk, 600, 480)
			defer db.Close()
			c.mu.RLock()
			old := c.idx
			c.mu.RUnlock()
			r := rand.New(rand.NewPCG(3, 4))
			ran := false
			rebuildHook = func() {
				ran = true
				var add []Item
				for i := range 50 {
					add = append(add, Item{ID: fmt.Sprint("new", i), Embedding: randVec(r, 8)})
				}
				if err := c.Add(ctx, add...); err != nil {
					t.Error(err)
				}
				for i := 480; i < 500; i++ {
					if err := c.Delete(ctx, fmt.Sprint(i)); err != nil {
						t.Error(err)
					}
				}
				for i := 500; i < 520; i++ {
					if err := c.Upsert(ctx, Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}); err != nil {
						t.Error(err)
					}
				}
			}
			defer func() { rebuildHook = nil }()
			clk.Advance(time.Minute)
			n, err := c.RemoveExpired(ctx)
			if err != nil || n != 480 {
				t.Fatalf("RemoveExpired: %d, %v", n, err)
			}
			if !ran {
				t.Fatal("the sweep did not rebuild the graph")
			}
			c.mu.RLock()
			same := c.idx == old
			c.mu.RUnlock()
			if same {
				t.Fatal("the graph was not replaced")
			}
			checkGraph(t, c, 120-20+50)
			if path == "" {
				return
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db2, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db2.Close()
			db2.clock = clk.Now
			c2, err := db2.Collection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, c2, 150)
		})
	}
}

// TestRebuildThenWrites rebuilds the graph without its marked versions and
// then, before the sweep deletes them, upserts some of them and deletes
// others: their old versions are not in the graph, and their eviction
// must not ask it to drop them. A file closed in that state (its graph
// lacks versions the file holds) must reopen whole.
func TestRebuildThenWrites(t *testing.T) {
	for _, store := range []string{"memory", "file"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			path := storePath(t, store)
			clk := NewFakeClock()
			db, c := rebuildFixture(t, path, clk, 500, 400)
			defer db.Close()
			clk.Advance(time.Minute)
			c.mu.Lock()
			c.cat.markExpired(c.now(), 1<<20)
			c.mu.Unlock()
			if ok, err := c.rebuildForSweep(ctx); !ok || err != nil {
				t.Fatalf("rebuildForSweep: %v, %v", ok, err)
			}
			c.life.rebuild.mu.Lock()
			left := len(c.life.rebuild.unindexed)
			c.life.rebuild.mu.Unlock()
			if left != 400 {
				t.Fatalf("%d versions left out of the graph, want 400", left)
			}
			// An expired item's id is free for a new one.
			r := rand.New(rand.NewPCG(5, 6))
			for i := range 10 {
				if err := c.Upsert(ctx, Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}); err != nil {
					t.Fatal(err)
				}
			}
			checkGraph(t, c, 110)
			if path != "" {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				var err error
				if db, err = Open(ctx, path, nil); err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				db.clock = clk.Now
				db.noSweeper = true
				if c, err = db.Collection(ctx, "c"); err != nil {
					t.Fatal(err)
				}
			}
			n, err := c.RemoveExpired(ctx)
			if err != nil || n != 390 {
				t.Fatalf("RemoveExpired: %d, %v", n, err)
			}
			checkGraph(t, c, 110)
			c.life.rebuild.mu.Lock()
			left = len(c.life.rebuild.unindexed)
			c.life.rebuild.mu.Unlock()
			if left != 0 {
				t.Fatalf("%d versions still left out after the sweep", left)
			}
		})
	}
}

// TestSortedDiff checks the catch-up's difference of two sorted id lists.
func TestSortedDiff(t *testing.T) {
	a := []vector.ID{1, 2, 4, 7, 9}
	b := []vector.ID{2, 3, 4, 8, 9, 10}
	ao, bo := sortedDiff(a, b)
	if !slices.Equal(ao, []vector.ID{1, 7}) || !slices.Equal(bo, []vector.ID{3, 8, 10}) {
		t.Fatalf("sortedDiff: %v, %v", ao, bo)
	}
	if ao, bo := sortedDiff(nil, a); ao != nil || !slices.Equal(bo, a) {
		t.Fatalf("sortedDiff(nil, a): %v, %v", ao, bo)
	}
}

// TestRebuildDuringQueries rebuilds the graph while two goroutines query
// it by vector and one writes (for the race detector): no query returns an
// expired item, and afterwards the graph holds exactly what readers see.
func TestRebuildDuringQueries(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	db, c := rebuildFixture(t, "", clk, 800, 700)
	defer db.Close()
	c.mu.RLock()
	old := c.idx
	c.mu.RUnlock()
	var g sync.WaitGroup
	stop := make(chan struct{})
	for s := range 2 {
		r := rand.New(rand.NewPCG(uint64(s), 7))
		QueryUnexpiredUntil(t, &g, stop, clk, func() ([]Result, error) {
			return c.Query(ctx, randVec(r, 8), 10, nil)
		})
	}
	added := 0
	g.Go(func() {
		r := rand.New(rand.NewPCG(8, 9))
		for ; ; added++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Add(ctx, Item{ID: fmt.Sprint("w", added), Embedding: randVec(r, 8)}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	clk.Advance(time.Minute)
	n, err := c.RemoveExpired(ctx)
	close(stop)
	g.Wait()
	if err != nil || n != 700 {
		t.Fatalf("RemoveExpired: %d, %v", n, err)
	}
	c.mu.RLock()
	same := c.idx == old
	c.mu.RUnlock()
	if same {
		t.Fatal("the graph was not replaced")
	}
	checkGraph(t, c, 100+added)
}

// TestBuildAhead builds the graph ahead of a mass expiry, then writes
// before the expiry comes: items added, deleted, and expiring items
// upserted to live on. The sweep at the expiry must install the graph
// built ahead, which must then hold exactly what readers see.
func TestBuildAhead(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	db, c := rebuildFixture(t, "", clk, 600, 480)
	defer db.Close()
	at := clk.Now().Add(time.Minute).UnixNano()
	c.buildAhead(ctx, at) // too early: a minute ahead
	c.life.rebuild.mu.Lock()
	g := c.life.rebuild.ahead
	c.life.rebuild.mu.Unlock()
	if g != nil {
		t.Fatal("graph built a minute ahead of the expiry")
	}
	clk.Advance(55 * time.Second)
	c.buildAhead(ctx, at)
	c.life.rebuild.mu.Lock()
	g = c.life.rebuild.ahead
	c.life.rebuild.mu.Unlock()
	if g == nil {
		t.Fatal("no graph built ahead of the expiry")
	}
	if h := g.idx.(*hnsw.Index); h.Len() != 120 {
		t.Fatalf("graph built ahead holds %d, want 120", h.Len())
	}
	r := rand.New(rand.NewPCG(10, 11))
	for i := range 10 {
		if err := c.Add(ctx, Item{ID: fmt.Sprint("new", i), Embedding: randVec(r, 8)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 480; i < 485; i++ {
		if err := c.Delete(ctx, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if err := c.Upsert(ctx, Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(5 * time.Second)
	n, err := c.RemoveExpired(ctx)
	if err != nil || n != 475 {
		t.Fatalf("RemoveExpired: %d, %v", n, err)
	}
	c.mu.RLock()
	installed := c.idx == g.idx
	c.mu.RUnlock()
	if !installed {
		t.Fatal("the sweep did not install the graph built ahead")
	}
	checkGraph(t, c, 120+10-5+5)
}

// TestBuildAheadDropped builds the graph ahead of an expiry that does not
// come (the items are upserted to live on): the next look after it drops
// the graph, and the versions retired meanwhile leave the store.
func TestBuildAheadDropped(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	db, c := rebuildFixture(t, "", clk, 300, 200)
	defer db.Close()
	old := c.IndexForTest()
	at := clk.Now().Add(time.Minute).UnixNano()
	clk.Advance(55 * time.Second)
	c.buildAhead(ctx, at)
	c.life.rebuild.mu.Lock()
	built := c.life.rebuild.ahead != nil
	c.life.rebuild.mu.Unlock()
	if !built {
		t.Fatal("no graph built ahead of the expiry")
	}
	r := rand.New(rand.NewPCG(12, 13))
	for i := range 200 {
		if err := c.Upsert(ctx, Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(5*time.Second + 2*aheadGroup)
	if n, err := c.RemoveExpired(ctx); err != nil || n != 0 {
		t.Fatalf("RemoveExpired: %d, %v", n, err)
	}
	c.buildAhead(ctx, clk.Now().UnixNano())
	c.life.rebuild.mu.Lock()
	ahead, running := c.life.rebuild.ahead, c.life.rebuild.running
	c.life.rebuild.mu.Unlock()
	if ahead != nil || running {
		t.Fatalf("graph built ahead kept: %v, running %v", ahead != nil, running)
	}
	if c.IndexForTest() != old {
		t.Fatal("the graph changed")
	}
	checkGraph(t, c, 300)
}

// TestAheadLead checks the lead's bounds.
func TestAheadLead(t *testing.T) {
	if l := aheadLead(0, 8); l != 10*time.Second {
		t.Fatalf("lead for nothing: %v", l)
	}
	if l := aheadLead(1<<30, 768); l != 10*time.Minute {
		t.Fatalf("lead for a billion: %v", l)
	}
	if a, b := aheadLead(100000, 32), aheadLead(100000, 768); !(a < b) {
		t.Fatalf("lead at 32-d %v, at 768-d %v", a, b)
	}
}

// TestRebuildKeepsTargetCalibrated: a graph with a recall target, rebuilt
// without its expired items, answers under the target from the moment it
// is installed. The graph it replaces was calibrated (at a target no beam
// width reaches, to search exactly); the new one used to be installed
// before its first calibration ended, and searched at the default beam
// width meanwhile (in a probe of 4,000 × 32-d uniform vectors, recall@10
// 0.73 where the target was 0.99).
func TestRebuildKeepsTargetCalibrated(t *testing.T) {
	was := rebuildMin
	rebuildMin = 64
	t.Cleanup(func() { rebuildMin = was })
	ctx := context.Background()
	clk := NewFakeClock()
	db := OpenMemory(nil)
	defer db.Close()
	db.clock = clk.Now
	db.noSweeper = true
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 8, Index: HNSW,
		HNSW: hnsw.Options{TargetRecall: 0.9, M: 4, EfConstruction: 16}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	items := make([]Item, 1100)
	for i := range items {
		items[i] = Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}
		if i < 550 {
			items[i].ExpiresAt = clk.Now().Add(time.Minute)
		}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.IndexForTest().(*hnsw.Index).WaitCalibration(ctx); !ok || err != nil {
		t.Fatalf("the graph's calibration: %v, %v", ok, err)
	}
	clk.Advance(time.Minute)
	if err := c.markExpired(ctx, c.now()); err != nil {
		t.Fatal(err)
	}
	old := c.IndexForTest()
	if ok, err := c.rebuildForSweep(ctx); !ok || err != nil {
		t.Fatalf("rebuildForSweep: %v, %v", ok, err)
	}
	h := c.IndexForTest().(*hnsw.Index)
	if h == old {
		t.Fatal("the graph was not replaced")
	}
	if cal, ok := h.Calibration(); !ok || cal.Len != 550 {
		t.Fatalf("the graph installed by the rebuild has no calibration of its 550 nodes (%v, %+v): its queries go at the default beam width", ok, cal)
	}
}
