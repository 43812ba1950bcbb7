package vector

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSlotTable checks the store's id table against a map through random
// puts and deletes, slots reused as the store reuses them.
func TestSlotTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab slotTable
	var keyOf []ID
	var free []uint32
	want := map[ID]uint32{}
	for step := range 20000 {
		if len(want) > 0 && r.IntN(3) == 0 {
			for id, sl := range want {
				tab.remove(id, keyOf)
				delete(want, id)
				free = append(free, sl)
				break
			}
		} else {
			id := ID(r.Uint64N(1 << 40))
			if _, ok := want[id]; ok {
				continue
			}
			var sl uint32
			if n := len(free); n > 0 {
				sl, free = free[n-1], free[:n-1]
				keyOf[sl] = id
			} else {
				sl = uint32(len(keyOf))
				keyOf = append(keyOf, id)
			}
			tab.put(sl, keyOf)
			want[id] = sl
		}
		if step%997 == 0 || step == 19999 {
			if tab.n != len(want) {
				t.Fatalf("step %d: %d entries, want %d", step, tab.n, len(want))
			}
			for id, sl := range want {
				if got, ok := tab.get(id, keyOf); !ok || got != sl {
					t.Fatalf("step %d: id %d at %d, %v; want %d", step, id, got, ok, sl)
				}
			}
			for range 100 {
				id := ID(r.Uint64N(1 << 40))
				if _, in := want[id]; !in {
					if got, ok := tab.get(id, keyOf); ok {
						t.Fatalf("step %d: absent id %d found at %d", step, id, got)
					}
				}
			}
		}
	}
}

// TestStoreMemoryHonest checks MemStore.Memory against the growth of the
// Go heap as the store fills.
func TestStoreMemoryHonest(t *testing.T) {
	const n, dim = 20000, 16
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := NewMemStore(dim, L2)
	if err != nil {
		t.Fatal(err)
	}
	v := make(Vector, dim)
	for i := range n {
		v[0] = float32(i)
		if err := s.Put(t.Context(), ID(i)*7919, v); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	m := s.Memory()
	t.Logf("Memory %+v = %d, heap growth %d", m, m.Total(), grown)
	if m.Vectors != n*dim*4 || m.Spare < 0 {
		t.Errorf("Memory %+v: want Vectors %d and Spare ≥ 0", m, n*dim*4)
	}
	if d := float64(m.Total()-grown) / float64(grown); d < -0.1 || d > 0.1 {
		t.Errorf("Memory total %d, heap grew by %d (%.0f%% off)", m.Total(), grown, 100*d)
	}
	runtime.KeepAlive(s)
}
