package cairn_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

var deleteRounds = flag.Int("cairn.delete.rounds", 0, "rounds of TestDeleteCollectionRacing per index kind (0: 100, 40 under -race, 15 with -short)")

// TestDeleteCollectionRacing deletes a collection of a file while four
// writers and two readers use it, round after round, and checks that
// every call either succeeds before the delete takes effect or returns an
// error wrapping vector.ErrNotFound (never ErrCorrupt, never ErrClosed),
// that no write started after the delete returned succeeds, that the
// handle then answers ErrNotFound to every call, that the collection
// made again under the name is empty, and that the file, reopened, no
// longer holds it.
func TestDeleteCollectionRacing(t *testing.T) {
	rounds := 100
	if cairn.RaceEnabled {
		// Each round runs the whole race (four writers, two readers and
		// the delete beside them), so 40 rounds of each kind still give
		// the race detector every kind of call against the delete, in
		// about 9 s there rather than 22; the plain run of test.sh runs
		// all 100.
		rounds = 40
	}
	if testing.Short() {
		rounds = 15
	}
	if *deleteRounds > 0 {
		rounds = *deleteRounds
	}
	const dim = deleteDim
	configs := []cairn.CollectionConfig{
		{Dim: dim, Index: cairn.Flat, TTL: time.Hour, KeepHistory: &cairn.HistoryPolicy{Versions: 3}},
		{Dim: dim, Index: cairn.HNSW, HNSW: hnsw.Options{M: 8, EfConstruction: 32, Seed: 1}},
		{Dim: dim, Index: cairn.QFlat},
		{Dim: dim, Index: cairn.Auto, AutoThreshold: 40, HNSW: hnsw.Options{M: 8, EfConstruction: 32, Seed: 1}},
	}
	for _, cfg := range configs {
		t.Run(cfg.Index.String(), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "cairn.db")
			opts := &cairn.Options{SQLite: &sqlitestore.Options{Sync: sqlitestore.SyncNormal}}
			db, err := cairn.Open(ctx, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for round := range rounds {
				deleteRacingRound(t, db, cfg, round)
				if t.Failed() {
					t.Fatalf("round %d failed", round)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = cairn.Open(ctx, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Collection(ctx, "c"); !errors.Is(err, vector.ErrNotFound) {
				t.Errorf("reopened: Collection(c): got %v, want ErrNotFound", err)
			}
			if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
				t.Errorf("reopened: Collections: got %v, %v; want none", infos, err)
			}
		})
	}
}

// deleteRacingRound is one round of TestDeleteCollectionRacing.
func deleteRacingRound(t *testing.T, db *cairn.DB, cfg cairn.CollectionConfig, round int) {
	ctx := context.Background()
	c, err := db.CreateCollection(ctx, "c", cfg)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if n, err := c.Count(ctx); n != 0 || err != nil {
		t.Fatalf("created again: Count: got %d, %v; want an empty collection", n, err)
	}
	item := func(id string, i int) cairn.Item {
		v := make([]float32, deleteDim)
		v[i%deleteDim], v[(i+1)%deleteDim] = 1, float32(i%5)+0.5
		return cairn.Item{ID: id, Embedding: v, Text: fmt.Sprint("word ", id), Metadata: map[string]any{"i": i}}
	}
	seed := make([]cairn.Item, 16)
	for i := range seed {
		seed[i] = item(fmt.Sprint("seed", i), i)
	}
	if err := c.Add(ctx, seed...); err != nil {
		t.Fatal(err)
	}

	// check fails t unless err is nil or wraps ErrNotFound, and reports
	// whether it was nil. A call that began after the delete returned
	// must not succeed.
	var deleted atomic.Bool
	check := func(op string, after bool, err error) bool {
		switch {
		case err == nil && after:
			t.Errorf("round %d: %s began after the delete returned and succeeded", round, op)
		case err != nil && !errors.Is(err, vector.ErrNotFound):
			t.Errorf("round %d: %s: %v, want nil or ErrNotFound", round, op, err)
		}
		return err == nil
	}
	var (
		g     sync.WaitGroup
		acked atomic.Int64
		stop  = make(chan struct{})
	)
	for w := range 4 {
		g.Go(func() {
			for j := 0; ; j++ {
				id := fmt.Sprintf("w%d-%d", w, j)
				after := deleted.Load()
				ok := check("add", after, c.Add(ctx, item(id, j)))
				if ok && j%3 == 2 {
					after = deleted.Load()
					ok = check("upsert", after, c.Upsert(ctx, item(id, j+1)))
				}
				if ok && j%4 == 3 {
					after = deleted.Load()
					ok = check("delete", after, c.Delete(ctx, id))
				}
				if !ok {
					return
				}
				acked.Add(1)
			}
		})
	}
	q := item("q", 3).Embedding
	for range 2 {
		g.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := deleted.Load()
				_, err := c.Query(ctx, q, 5, nil)
				check("query", after, err)
				_, err = c.Query(ctx, q, 5, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "word", Filter: cairn.Gte("i", 1)})
				check("hybrid query", after, err)
				_, err = c.QueryText(ctx, "word", 5, &cairn.QueryOptions{Mode: cairn.KeywordMode})
				check("keyword query", after, err)
				_, err = c.Get(ctx, "seed1")
				check("get", after, err)
				_, err = c.Find(ctx, cairn.Lt("i", 3), 10)
				check("find", after, err)
				_, err = c.Count(ctx)
				check("count", after, err)
				_, err = c.Info(ctx)
				check("info", after, err)
				_, err = c.Tenants(ctx)
				check("tenants", after, err)
				for _, err := range c.Items(ctx, &cairn.ItemsOptions{Embeddings: true}) {
					check("items", after, err)
				}
				if cfg.KeepHistory != nil {
					_, err = c.History(ctx, "seed1")
					check("history", after, err)
					var s *cairn.Snapshot
					if s, err = c.AsOf(ctx, time.Now()); err == nil {
						s.Close()
					}
					check("as of", after, err)
					_, err = c.Restore(ctx, time.Now(), &cairn.RestoreOptions{DryRun: true})
					check("restore", after, err)
				}
			}
		})
	}
	// Let some writes land first, a different number each round.
	for acked.Load() < int64(round%7) {
		runtime.Gosched()
	}
	if err := db.DeleteCollection(ctx, "c"); err != nil {
		t.Errorf("round %d: delete: %v", round, err)
	}
	deleted.Store(true)
	close(stop)
	g.Wait()

	// The handle answers ErrNotFound to every call.
	notFound := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("round %d: after the delete, %s: got %v, want ErrNotFound", round, op, err)
		}
	}
	notFound("add", c.Add(ctx, item("late", 1)))
	notFound("upsert", c.Upsert(ctx, item("seed1", 1)))
	notFound("delete", c.Delete(ctx, "seed1"))
	_, err = c.DeleteIfExists(ctx, "seed1")
	notFound("delete if exists", err)
	_, err = c.DeleteWhere(ctx, cairn.And())
	notFound("delete where", err)
	_, err = c.Get(ctx, "seed1")
	notFound("get", err)
	_, err = c.Find(ctx, nil, 0)
	notFound("find", err)
	_, err = c.Query(ctx, q, 3, nil)
	notFound("query", err)
	_, err = c.Query(ctx, q, 3, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "word"})
	notFound("hybrid query", err)
	_, err = c.QueryText(ctx, "word", 3, &cairn.QueryOptions{Mode: cairn.KeywordMode})
	notFound("keyword query", err)
	_, err = c.Count(ctx)
	notFound("count", err)
	_, err = c.Info(ctx)
	notFound("info", err)
	_, err = c.RemoveExpired(ctx)
	notFound("remove expired", err)
	for _, err := range c.Items(ctx, nil) {
		notFound("items", err)
	}
	if cfg.KeepHistory != nil {
		_, err = c.History(ctx, "seed1")
		notFound("history", err)
		_, err = c.AsOf(ctx, time.Now())
		notFound("as of", err)
		_, err = c.Restore(ctx, time.Now(), nil)
		notFound("restore", err)
	}
	if _, err := db.Collection(ctx, "c"); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("round %d: Collection(c) after the delete: got %v, want ErrNotFound", round, err)
	}
}

// deleteDim is the dimension of TestDeleteCollectionRacing's items.
const deleteDim = 8

// TestDeleteCollectionFails checks that a delete that fails (its ctx
// ended before it began) leaves the collection as it was: the handle goes
// on working, and the file keeps it.
func TestDeleteCollectionFails(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.HNSW})
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.DeleteCollection(cancelled, "c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("delete with an ended ctx: got %v, want context.Canceled", err)
	}
	if err := c.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{0, 1}}); err != nil {
		t.Fatalf("add after the failed delete: %v", err)
	}
	if rs, err := c.Query(ctx, []float32{1, 0}, 5, nil); err != nil || len(rs) != 2 {
		t.Fatalf("query after the failed delete: got %d results, %v; want 2", len(rs), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.Count(ctx); n != 2 || err != nil {
		t.Errorf("reopened: Count: got %d, %v; want 2", n, err)
	}
}

// endingCtx is a context that has not ended when first asked (Err), and
// has from then on: one that ends while a call is under way.
type endingCtx struct {
	context.Context
	asked atomic.Bool
}

func (c *endingCtx) Done() <-chan struct{} {
	if !c.asked.Load() {
		return nil
	}
	done := make(chan struct{})
	close(done)
	return done
}

func (c *endingCtx) Err() error {
	if c.asked.Swap(true) {
		return context.Canceled
	}
	return nil
}

// TestDeleteCollectionGoesToItsEnd: a delete whose ctx ends once it has
// begun, with the collection's tenants closed and a call in flight on one,
// goes to its end. It used to fail with the ctx's error at the file's
// drop, leaving the collection in place and the call in flight failed as
// if it had gone ("collection deleted" at the iteration's next page).
func TestDeleteCollectionGoesToItsEnd(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	tn, err := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat}).CreateTenant(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	items := make([]cairn.Item, 600) // more than a page of Items
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}}
	}
	if err := tn.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	var iterErr error
	deleted := false
	for _, err := range tn.Items(ctx, nil) {
		if err != nil {
			iterErr = err
			break
		}
		if !deleted {
			if err := db.DeleteCollection(&endingCtx{Context: ctx}, "c"); err != nil {
				t.Fatalf("a delete whose ctx ended once begun: %v, want it done", err)
			}
			deleted = true
		}
	}
	if !errors.Is(iterErr, vector.ErrNotFound) {
		t.Errorf("the iteration in flight: %v, want ErrNotFound (its collection deleted)", iterErr)
	}
	if _, err := db.Collection(ctx, "c"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Collection after the delete: %v, want ErrNotFound", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = cairn.Open(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(ctx, "c"); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("reopened: Collection: %v, want ErrNotFound", err)
	}
}
