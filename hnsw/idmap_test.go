package hnsw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// TestIDMap checks the id table against a Go map over random puts and
// deletes, with ids chosen to collide in the table's low bits.
func TestIDMap(t *testing.T) {
	s, err := vector.NewMemStore(2, vector.L2)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	const slots = 3000
	ix.growLocked(slots)
	r := rand.New(rand.NewPCG(3, 4))
	want := map[vector.ID]node{}
	var free []node
	for s := node(0); s < slots; s++ {
		free = append(free, s)
	}
	for step := range 20000 {
		id := vector.ID(r.IntN(4000)) << (r.IntN(3) * 20)
		if s, ok := want[id]; ok && r.IntN(2) == 0 {
			ix.idDelete(id)
			ix.setID(s, 0)
			delete(want, id)
			free = append(free, s)
		} else if !ok && len(free) > 0 {
			s := free[len(free)-1]
			free = free[:len(free)-1]
			ix.setID(s, id)
			ix.idPut(s)
			want[id] = s
		}
		if step%1000 == 0 || step == 19999 {
			if ix.idLen() != len(want) {
				t.Fatalf("step %d: %d ids, want %d", step, ix.idLen(), len(want))
			}
			for id, s := range want {
				if got, ok := ix.idGet(id); !ok || got != s {
					t.Fatalf("step %d: id %d at %d, %v; want %d", step, id, got, ok, s)
				}
			}
			for range 100 {
				id := vector.ID(r.Uint64())
				if _, ok := want[id]; ok {
					continue
				}
				if got, ok := ix.idGet(id); ok {
					t.Fatalf("step %d: absent id %d found at %d", step, id, got)
				}
			}
		}
	}
	if got := ix.idMapBytes(); got > int64(len(want))*4*4 {
		t.Errorf("id table of %d bytes for %d ids", got, len(want))
	}
}

// TestGraphBytesHonest checks Stats.GraphBytes against the growth of the
// Go heap when a graph is built over vectors already in the store, over
// the store's slots and with the vectors inline.
func TestGraphBytesHonest(t *testing.T) {
	for _, slots := range []bool{true, false} {
		t.Run(fmt.Sprintf("slots=%v", slots), func(t *testing.T) {
			defer func(old bool) { useSlots = old }(useSlots)
			useSlots = slots
			const n, dim = 6000, 4
			s, err := vector.NewMemStore(dim, vector.L2)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, 6))
			ids := make([]vector.ID, n)
			vs := make([]vector.Vector, n)
			for i := range ids {
				ids[i] = vector.ID(i)
				vs[i] = vector.Vector{r.Float32(), r.Float32(), r.Float32(), r.Float32()}
			}
			ctx := t.Context()
			if err := s.PutBatch(ctx, ids, vs); err != nil {
				t.Fatal(err)
			}
			ix, err := New(s, &Options{EfConstruction: 20})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			settleHeap() // the last subtest's index, and its cleanups, gone
			runtime.ReadMemStats(&before)
			if err := ix.Track(ctx, ids); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&after)
			grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			got := ix.Stats().GraphBytes
			t.Logf("GraphBytes %d (%.0f a vector), heap growth %d", got, float64(got)/n, grown)
			if d := float64(got-grown) / float64(grown); d < -0.1 || d > 0.1 {
				t.Errorf("GraphBytes %d, heap grew by %d (%.0f%% off)", got, grown, 100*d)
			}
			m := ix.Stats().Memory
			t.Logf("Memory %+v", m)
			if m.Total() != got {
				t.Errorf("Memory's parts sum to %d, GraphBytes is %d", m.Total(), got)
			}
			m0 := 1 + 2*ix.Options().M
			vecs := int64(n * dim * 4) // the inline copies
			if ix.slots != nil {
				vecs = 0 // the store's slots: no copy
			}
			if m.Vectors != vecs || m.Links0 != int64(n*m0*4) || m.Codes != 0 {
				t.Errorf("Memory %+v: want Vectors %d, Links0 %d, no Codes", m, vecs, n*m0*4)
			}
			for _, part := range []int64{m.RowPad, m.Spare, m.Upper, m.Slots, m.IDMap, m.Locks, m.Deletes} {
				if part < 0 {
					t.Errorf("Memory %+v: a negative part", m)
				}
			}
			runtime.KeepAlive(ix)
		})
	}
}

// TestNearest checks the partial selection of repairs against a full sort.
func TestNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		n := r.IntN(300)
		cs := make([]cand, n)
		for i := range cs {
			cs[i] = cand{float32(r.IntN(50)), node(r.IntN(1000))}
		}
		want := slices.Clone(cs)
		sortCands(want)
		p := 1 + r.IntN(60)
		got := nearest(cs, p)
		if !slices.Equal(got, want[:min(p, n)]) {
			t.Fatalf("trial %d: n=%d p=%d: got %v, want %v", trial, n, p, got, want[:min(p, n)])
		}
	}
}

// settleHeap collects garbage until the heap stops shrinking: an object
// with a cleanup (an index over the store's slots) leaves garbage that a
// later cycle frees, once the cleanup has run.
func settleHeap() {
	var m runtime.MemStats
	last := uint64(math.MaxUint64)
	for range 10 {
		runtime.GC()
		time.Sleep(time.Millisecond) // for cleanups to run
		runtime.ReadMemStats(&m)
		if m.HeapAlloc >= last {
			return
		}
		last = m.HeapAlloc
	}
}
