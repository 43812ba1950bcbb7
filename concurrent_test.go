package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// TestConcurrentAddDistinct runs many goroutines adding distinct ids, one
// item per call, to one collection while others query it; run it with
// -race. Every item must be there afterwards, found by Get and (under
// exact search) as its own nearest neighbour, and a persistent store must
// hold all of them after reopening.
func TestConcurrentAddDistinct(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			name := map[bool]string{false: "memory", true: "sqlite"}[persistent] + "/" + kind.String()
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				path := filepath.Join(t.TempDir(), "c.db")
				open := func() *cairn.DB {
					if !persistent {
						return cairn.OpenMemory(nil)
					}
					db, err := cairn.Open(ctx, path, nil)
					if err != nil {
						t.Fatal(err)
					}
					return db
				}
				db := open()
				defer func() { db.Close() }()
				const dim, writers, each = 8, 16, 20
				c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: dim, Index: kind})
				vecs := make(map[string][]float32)
				r := rand.New(rand.NewPCG(1, 2))
				for w := range writers {
					for i := range each {
						vecs[fmt.Sprintf("w%d-%d", w, i)] = randVec(r, dim)
					}
				}
				var wg sync.WaitGroup
				errs := make(chan error, writers+2)
				stop := make(chan struct{})
				for w := range writers {
					wg.Go(func() {
						for i := range each {
							id := fmt.Sprintf("w%d-%d", w, i)
							if err := c.Add(ctx, cairn.Item{ID: id, Embedding: vecs[id], Metadata: map[string]any{"w": w}}); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				var readers sync.WaitGroup
				for q := range 2 {
					readers.Go(func() {
						r := rand.New(rand.NewPCG(uint64(q), 3))
						for {
							select {
							case <-stop:
								return
							default:
							}
							res, err := c.Query(ctx, randVec(r, dim), 5, &cairn.QueryOptions{Filter: cairn.Eq("w", q)})
							if err != nil {
								errs <- err
								return
							}
							for _, x := range res {
								if x.Metadata["w"] != float64(q) {
									errs <- fmt.Errorf("result %s does not match the filter", x.ID)
									return
								}
							}
						}
					})
				}
				wg.Wait()
				close(stop)
				readers.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				check := func(c *cairn.Collection) {
					t.Helper()
					if cairn.MustCount(t, c) != writers*each {
						t.Fatalf("Count = %d, want %d", cairn.MustCount(t, c), writers*each)
					}
					for id, v := range vecs {
						if _, err := c.Get(ctx, id); err != nil {
							t.Fatal(err)
						}
						if kind != cairn.Flat {
							continue
						}
						res, err := c.Query(ctx, v, 1, nil)
						if err != nil || len(res) != 1 || res[0].ID != id {
							t.Fatalf("nearest to %s's vector: %v, %v", id, res, err)
						}
					}
				}
				check(c)
				if persistent {
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					db = open()
					c, err := db.Collection(ctx, "c")
					if err != nil {
						t.Fatal(err)
					}
					check(c)
				}
			})
		}
	}
}

// TestConcurrentAddSameID races two Adds of the same id, many times: each
// time exactly one wins and the other gets ErrDuplicateID, and the item
// holds the winner's vector.
func TestConcurrentAddSameID(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: op.kind, Metric: vector.L2})
		const rounds = 30
		for round := range rounds {
			id := fmt.Sprint("x", round)
			var (
				start sync.WaitGroup
				wg    sync.WaitGroup
				errs  [2]error
			)
			start.Add(1)
			for g := range 2 {
				wg.Go(func() {
					start.Wait()
					errs[g] = c.Add(ctx, cairn.Item{ID: id, Embedding: []float32{float32(round), float32(g)}})
				})
			}
			start.Done()
			wg.Wait()
			winner := -1
			for g, err := range errs {
				switch {
				case err == nil:
					if winner >= 0 {
						t.Fatalf("round %d: both Adds of %s succeeded", round, id)
					}
					winner = g
				case !errors.Is(err, vector.ErrDuplicateID):
					t.Fatalf("round %d: Add %d: %v, want nil or ErrDuplicateID", round, g, err)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: neither Add of %s succeeded: %v", round, id, errs)
			}
			got, err := c.Get(ctx, id)
			if err != nil || got[0].Embedding[1] != float32(winner) {
				t.Fatalf("round %d: Get = %v, %v; want the vector of Add %d", round, got, err, winner)
			}
		}
		if cairn.MustCount(t, c) != rounds {
			t.Fatalf("Count = %d, want %d", cairn.MustCount(t, c), rounds)
		}
	})
}

// TestUpsertsSeenWhole runs writers that each own a few items and upsert
// all of them together, round after round, with the round's number in
// every vector and in the metadata, while readers query for every item
// (k = math.MaxInt) and Get them. Each answer must hold no item twice,
// the items of one writer all at the same round, and each item's vector
// and metadata from the same write: old and new versions of an item are
// both in the index while a write is in flight, and readers see exactly
// one. Exact search must return every item; graph search need not (under
// this churn of a tiny graph of near-duplicates, hnsw can leave live nodes
// unreachable for a while, as it did before versions by id).
func TestUpsertsSeenWhole(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: op.kind, Metric: vector.L2})
		const writers, each, rounds = 4, 8, 10
		batch := func(w, round int) []cairn.Item {
			b := make([]cairn.Item, each)
			for i := range b {
				b[i] = cairn.Item{ID: fmt.Sprintf("w%d-%d", w, i), Embedding: []float32{float32(w*each + i), float32(round)},
					Metadata: map[string]any{"w": w, "round": round}}
			}
			return b
		}
		var keys []string
		for w := range writers {
			if err := c.Add(ctx, batch(w, 0)...); err != nil {
				t.Fatal(err)
			}
			for _, it := range batch(w, 0) {
				keys = append(keys, it.ID)
			}
		}
		errs := make(chan error, writers+2)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for round := 1; round <= rounds; round++ {
					if err := c.Upsert(ctx, batch(w, round)...); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for range 2 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					res, err := c.Query(ctx, []float32{0, 0}, math.MaxInt, nil)
					if err != nil {
						errs <- err
						return
					}
					round := map[float64]float64{} // writer → round seen
					seen := map[string]bool{}
					for _, r := range res {
						w, rd := r.Metadata["w"].(float64), r.Metadata["round"].(float64)
						if seen[r.ID] {
							errs <- fmt.Errorf("%s twice in one answer", r.ID)
							return
						}
						seen[r.ID] = true
						if got, ok := round[w]; ok && got != rd {
							errs <- fmt.Errorf("writer %v's items at rounds %v and %v in one answer", w, got, rd)
							return
						}
						round[w] = rd
					}
					if len(res) != writers*each && op.kind == cairn.Flat {
						errs <- fmt.Errorf("%d items in an answer, want %d", len(res), writers*each)
						return
					}
					items, err := c.Get(ctx, keys...)
					if err != nil {
						errs <- err
						return
					}
					for _, it := range items {
						if float64(it.Embedding[1]) != it.Metadata["round"].(float64) {
							errs <- fmt.Errorf("%s: vector of round %v, metadata of round %v", it.ID, it.Embedding[1], it.Metadata["round"])
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if cairn.MustCount(t, c) != writers*each {
			t.Fatalf("Count = %d, want %d", cairn.MustCount(t, c), writers*each)
		}
	})
}
