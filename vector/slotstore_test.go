package vector_test

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// slotOf returns the slot of id in s, failing the test if it has none.
func slotOf(t *testing.T, s *vector.MemStore, id vector.ID) uint32 {
	t.Helper()
	sl, ok := s.Slot(id)
	if !ok {
		t.Fatalf("Slot(%d): absent", id)
	}
	return sl
}

// TestMemStoreSlots checks the SlotStore contract: a slot's block holds
// the very memory Get returns, a held slot is not reused until its last
// hold is released, and holds of free slots or releases of slots not held
// change nothing.
func TestMemStoreSlots(t *testing.T) {
	const dim = 3
	ctx := context.Background()
	s, err := vector.NewMemStore(dim, vector.L2)
	if err != nil {
		t.Fatal(err)
	}
	var _ vector.SlotStore = s
	put := func(id vector.ID) uint32 {
		t.Helper()
		if err := s.Put(ctx, id, vector.Vector{float32(id), 1, 2}); err != nil {
			t.Fatal(err)
		}
		return slotOf(t, s, id)
	}
	for id := range vector.ID(300) { // two blocks
		put(id + 1)
	}
	for _, id := range []vector.ID{1, 256, 300} {
		sl := slotOf(t, s, id)
		b := s.SlotBlock(int(sl >> vector.SlotBlockShift))
		if len(b) != dim<<vector.SlotBlockShift {
			t.Fatalf("block of slot %d: %d floats", sl, len(b))
		}
		v, _ := s.Get(id)
		if row := b[int(sl&(1<<vector.SlotBlockShift-1))*dim:]; &row[0] != &v[0] {
			t.Errorf("id %d: the block's row is not the memory Get returns", id)
		}
	}
	if b := s.SlotBlock(2); b != nil {
		t.Errorf("SlotBlock(2) of a two-block arena: %d floats", len(b))
	}

	// Held twice, deleted: not reused until both holds are released.
	held := slotOf(t, s, 7)
	s.Hold(held)
	s.Hold(held)
	if err := s.Delete(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Slot(7); ok {
		t.Error("Slot of a deleted id")
	}
	if sl := put(1001); sl == held {
		t.Fatal("a held slot was reused")
	}
	s.Release(held)
	if sl := put(1002); sl == held {
		t.Fatal("a slot still held once was reused")
	}
	s.Release(held)
	if sl := put(1003); sl != held {
		t.Fatalf("put after the last release took slot %d, want the freed %d", sl, held)
	}

	// A slot freed without holds: a hold of it and a release do not free
	// it twice.
	freed := slotOf(t, s, 9)
	if err := s.Delete(ctx, 9); err != nil {
		t.Fatal(err)
	}
	s.Hold(freed)
	s.Release(freed)
	a, b := put(1004), put(1005)
	if a != freed || b == freed {
		t.Fatalf("puts took slots %d and %d after slot %d was freed once", a, b, freed)
	}
	// Releasing a live slot not held changes nothing.
	s.Release(slotOf(t, s, 10))
	if sl := put(1006); sl == slotOf(t, s, 10) {
		t.Fatal("a live slot was handed out")
	}
	// Holding a live slot keeps it through its delete; holds outlive
	// nothing else: Len counts only live vectors.
	h := slotOf(t, s, 11)
	s.Hold(h)
	if err := s.Delete(ctx, 11); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Len(), 300+6-3; got != want {
		t.Errorf("Len %d, want %d", got, want)
	}
	s.Release(h)
	if sl := put(1007); sl != h {
		t.Fatalf("put took slot %d, want the released %d", sl, h)
	}
}
