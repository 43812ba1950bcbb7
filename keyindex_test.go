package cairn

import (
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
