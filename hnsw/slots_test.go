package hnsw_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// checkDistances fails the test unless every result of a search of q is an
// id the store holds, at the distance from q to the store's vector of it:
// over the store's slots a node's vector is found from its number, so a
// node at the wrong slot would be scored on another vector.
func checkDistances(t *testing.T, ix *hnsw.Index, s vector.Store, q vector.Vector) {
	t.Helper()
	res, err := ix.SearchWith(context.Background(), q, 10, &hnsw.SearchOptions{Ef: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 10 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		v, err := s.Get(r.ID)
		if err != nil {
			t.Fatalf("result id %d: %v", r.ID, err)
		}
		if d := vector.SquaredL2(q, v); d != r.Distance {
			t.Fatalf("result id %d at distance %v, its stored vector at %v", r.ID, r.Distance, d)
		}
	}
}

// TestSlotsFollowStore churns an index over the store's slots (updates,
// deletes, adds into reused slots, untracking and tracking again the same
// stored vectors, whose slots their deleted nodes still hold) and checks
// after each step that the graph verifies (every node at its vector's
// slot) and that searches score the store's vectors; then that the store
// reuses the slots once the graph lets go of them, and that the saved
// graph loads onto a store that put the vectors in other slots.
func TestSlotsFollowStore(t *testing.T) {
	ctx := context.Background()
	const dim, n = 16, 1200
	r := rand.New(rand.NewPCG(7, 8))
	s := memStore(t, dim, vector.L2)
	ix := newIndex(t, s, &hnsw.Options{M: 8, EfConstruction: 48, Workers: 2})
	if !ix.Slotted() || ix.Inline() {
		t.Fatal("an index over a MemStore does not use its slots")
	}
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(ctx, ids, tieData(r, n, dim)); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		if err := ix.Verify(); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		for range 20 {
			checkDistances(t, ix, s, tieData(r, 1, dim)[0])
		}
	}
	check("the build")
	for i := 0; i < n; i += 3 {
		if err := ix.Update(ctx, vector.ID(i), tieData(r, 1, dim)[0]); err != nil {
			t.Fatal(err)
		}
	}
	check("updates")
	for i := 1; i < n; i += 7 {
		if err := ix.Delete(ctx, vector.ID(i)); err != nil {
			t.Fatal(err)
		}
	}
	check("deletes")
	for i := range n / 5 {
		if err := ix.Add(ctx, vector.ID(n+i), tieData(r, 1, dim)[0]); err != nil {
			t.Fatal(err)
		}
	}
	check("adds")
	// Untrack and track again: the vectors stay in their slots, which
	// their deleted nodes hold until unlinked.
	again := []vector.ID{2, 5, 10, n + 1}
	if err := ix.Untrack(ctx, again); err != nil {
		t.Fatal(err)
	}
	if err := ix.Track(ctx, again); err != nil {
		t.Fatal(err)
	}
	check("untrack and track")

	// Rounds of updating everything: the store's arena stays bounded,
	// for the graph hands the slots back as it unlinks their nodes.
	live := ix.Len()
	for round := range 4 {
		for i := range n {
			if err := ix.Update(ctx, vector.ID(i), tieData(r, 1, dim)[0]); err != nil && i%7 != 1 {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("rounds of updates")
	if slots := s.Memory().Vectors / (dim * 4); slots > int64(2*live) {
		t.Errorf("the store has %d slots for %d vectors after rounds of updates", slots, live)
	}

	// The saved graph onto a store that holds the same vectors in other
	// slots (put in reverse order, after others it deleted).
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var all []vector.ID
	var vs []vector.Vector
	if err := s.ForEach(func(id vector.ID, v vector.Vector) error {
		all, vs = append(all, id), append(vs, slices.Clone(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(all)
	slices.Reverse(vs)
	s2 := memStore(t, dim, vector.L2)
	for i := range 100 {
		if err := s2.Put(ctx, vector.ID(1<<40+i), vs[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s2.PutBatch(ctx, all, vs); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := s2.Delete(ctx, vector.ID(1<<40+i)); err != nil {
			t.Fatal(err)
		}
	}
	ix2 := newIndex(t, s2, nil)
	if _, err := ix2.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if err := ix2.Verify(); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		q := tieData(r, 1, dim)[0]
		o := &hnsw.SearchOptions{Ef: 40}
		want, err := ix.SearchWith(ctx, q, 10, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix2.SearchWith(ctx, q, 10, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("loaded onto other slots:\n got %v\nwant %v", got, want)
		}
	}
}

// TestDroppedIndexReleasesSlots checks that an index dropped with deleted
// nodes not yet unlinked does not keep their store slots from reuse: once
// it is garbage, the store hands the slots out again.
func TestDroppedIndexReleasesSlots(t *testing.T) {
	ctx := context.Background()
	const dim, n = 8, 400
	r := rand.New(rand.NewPCG(3, 4))
	s := memStore(t, dim, vector.L2)
	deleted := func() []uint32 {
		ix, err := hnsw.New(s, &hnsw.Options{M: 8})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]vector.ID, n)
		for i := range ids {
			ids[i] = vector.ID(i)
		}
		if err := ix.AddBatch(ctx, ids, tieData(r, n, dim)); err != nil {
			t.Fatal(err)
		}
		var slots []uint32
		for i := range 10 { // too few for a batch of unlinking
			sl, _ := s.Slot(vector.ID(i))
			slots = append(slots, sl)
			if err := ix.Delete(ctx, vector.ID(i)); err != nil {
				t.Fatal(err)
			}
		}
		// The index holds them: a put takes a new slot.
		if err := s.Put(ctx, 1000, tieData(r, 1, dim)[0]); err != nil {
			t.Fatal(err)
		}
		if sl, _ := s.Slot(1000); slices.Contains(slots, sl) {
			t.Fatalf("a put took slot %d, held by a deleted node", sl)
		}
		return slots
	}()
	deadline := time.Now().Add(10 * time.Second)
	for id := vector.ID(2000); ; id++ {
		runtime.GC()
		if err := s.Put(ctx, id, tieData(r, 1, dim)[0]); err != nil {
			t.Fatal(err)
		}
		if sl, _ := s.Slot(id); slices.Contains(deleted, sl) {
			return // released
		}
		// Not deleted again: the store reuses the slot freed last, which
		// would keep the released ones beneath it.
		if time.Now().After(deadline) {
			t.Fatal("the slots of a dropped index's deleted nodes were never released")
		}
		time.Sleep(time.Millisecond)
	}
}
