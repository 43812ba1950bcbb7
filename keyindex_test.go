package cairn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// mapResolver resolves ids from the test's own reference.
type mapResolver map[vector.ID]string

func (m mapResolver) keyOf(id vector.ID) string { return m[id] }

// TestKeyIndex checks the key index against a map under random adds and
// deletes, with full hashes and with hashes narrowed to two bits, so that
// most keys collide and the overflow and its promotions are exercised.
func TestKeyIndex(t *testing.T) {
	for _, mask := range []uint64{^uint64(0), 3} {
		t.Run(fmt.Sprintf("mask=%#x", mask), func(t *testing.T) {
			x := newKeyIndex()
			x.mask = mask
			ref := map[string]vector.ID{}
			keyOf := mapResolver{}
			rng := rand.New(rand.NewPCG(3, 4))
			next := vector.ID(1)
			for step := range 20_000 {
				k := fmt.Sprint("k", rng.IntN(300))
				if id, ok := ref[k]; ok && rng.IntN(2) == 0 {
					x.del(k, id)
					delete(ref, k)
					delete(keyOf, id)
				} else {
					id, existed := x.add(k, next, keyOf)
					if want, ok := ref[k]; existed != ok || (ok && id != want) {
						t.Fatalf("step %d: add(%q) = %d, %v; want %d, %v", step, k, id, existed, want, ok)
					}
					if !existed {
						ref[k], keyOf[next] = next, k
						next++
					}
				}
				probe := fmt.Sprint("k", rng.IntN(300))
				id, ok := x.get(probe, keyOf)
				if want, wok := ref[probe]; ok != wok || id != want {
					t.Fatalf("step %d: get(%q) = %d, %v; want %d, %v", step, probe, id, ok, want, wok)
				}
				if x.len() != len(ref) {
					t.Fatalf("step %d: len %d, want %d", step, x.len(), len(ref))
				}
			}
			if mask == 3 && len(x.more) == 0 {
				t.Fatal("narrowed hashes never collided: the overflow went untested")
			}
		})
	}
}

// TestCollectionKeyCollisions runs a collection whose key index hashes to
// two bits, so that nearly every key collides, through adds (a batch that
// repeats a key, too), gets, upserts and deletes.
func TestCollectionKeyCollisions(t *testing.T) {
	ctx := t.Context()
	db := OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Metric: vector.L2})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.cat.keys.mask = 3
	c.mu.Unlock()
	item := func(k string, x float32) Item { return Item{ID: k, Embedding: []float32{x, 1}} }
	var batch []Item
	for i := range 40 {
		batch = append(batch, item(fmt.Sprint("k", i), float32(i)))
	}
	if err := c.Add(ctx, append(batch, item("k7", 0))...); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("batch repeating k7: %v", err)
	}
	if err := c.Add(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, item("k3", 1)); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("Add of k3 again: %v", err)
	}
	if err := c.Delete(ctx, "k0", "k5", "k39"); err != nil {
		t.Fatal(err)
	}
	if err := c.Upsert(ctx, item("k5", 55), item("k6", 66), item("new", 99)); err != nil {
		t.Fatal(err)
	}
	want := map[string]float32{"k5": 55, "k6": 66, "new": 99}
	for i := 1; i < 39; i++ {
		if i != 5 && i != 6 {
			want[fmt.Sprint("k", i)] = float32(i)
		}
	}
	if mustCount(t, c) != len(want) {
		t.Fatalf("Count = %d, want %d", mustCount(t, c), len(want))
	}
	for k, x := range want {
		got, err := c.Get(ctx, k)
		if err != nil || got[0].Embedding[0] != x {
			t.Fatalf("Get(%s) = %v, %v; want x = %v", k, got, err, x)
		}
	}
	for _, k := range []string{"k0", "k39", "nope"} {
		if _, err := c.Get(ctx, k); !errors.Is(err, vector.ErrNotFound) {
			t.Fatalf("Get(%s): %v, want ErrNotFound", k, err)
		}
	}
	if len(c.cat.keys.more) == 0 {
		t.Fatal("no key collided: the test tests nothing")
	}
}
