package versions

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// model is what State must answer, kept the plain way: every version with
// its state and ExpiresAt.
type model struct {
	state   map[vector.ID]int // numbered, published, retired (evicted ones leave)
	expires map[vector.ID]int64
	marked  map[vector.ID]bool
}

const (
	numbered = iota
	published
	retired
)

// sees is the rule: published, not marked, not expired at now.
func (m *model) sees(id vector.ID, now int64) bool {
	at, ok := m.expires[id]
	return m.state[id] == published && !m.marked[id] && (!ok || at > now)
}

// TestStateAgainstModel drives State and the model through random
// writes, sweeps and clock moves (back as well as forward), and checks
// every answer of a View against the model at each step.
func TestStateAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		m := &model{state: map[vector.ID]int{}, expires: map[vector.ID]int64{}, marked: map[vector.ID]bool{}}
		vs := New(func(id vector.ID) (int64, bool) {
			at, ok := m.expires[id]
			if !ok {
				at = None
			}
			return at, m.state[id] == published && m.stateKnown(id)
		})
		var (
			next  vector.ID = 1
			now   int64     = 1000
			taken []Entry
		)
		ids := func(want int) []vector.ID {
			var out []vector.ID
			for id, s := range m.state {
				if s == want {
					out = append(out, id)
				}
			}
			slices.Sort(out)
			return out
		}
		for step := range 400 {
			switch op := rng.IntN(9); op {
			case 0, 1: // number and publish a version, perhaps expiring
				id := next
				next++
				vs.Numbered(1)
				m.state[id] = numbered
				if rng.IntN(2) == 0 {
					break // stays numbered for a while
				}
				fallthrough
			case 2: // publish a numbered version
				if ns := ids(numbered); len(ns) > 0 {
					id := ns[rng.IntN(len(ns))]
					at := int64(None)
					if rng.IntN(2) == 0 {
						at = now + int64(rng.IntN(200)) - 50
						if at <= now-50 {
							at = now + 1
						}
						m.expires[id] = at
					}
					m.state[id] = published
					vs.Publish(id, at)
				}
			case 3: // retire a published version
				if ps := ids(published); len(ps) > 0 {
					id := ps[rng.IntN(len(ps))]
					at, ok := m.expires[id]
					if !ok {
						at = None
					}
					vs.Retire(id, at)
					m.state[id] = retired
					delete(m.marked, id)
				}
			case 4: // evict a retired version, or abandon a numbered one
				pool := append(ids(retired), ids(numbered)...)
				if len(pool) > 0 {
					id := pool[rng.IntN(len(pool))]
					vs.Evicted(1)
					delete(m.state, id)
					delete(m.expires, id)
				}
			case 5: // the clock moves, perhaps back
				now += int64(rng.IntN(80)) - 20
			case 6: // a sweep marks what is due
				n := 1 + rng.IntN(4)
				before := vs.Marked()
				var hidden []vector.ID
				vs.MarkDue(now, n, func(id vector.ID) { hidden = append(hidden, id) })
				if got := vs.Marked() - before; got > n {
					t.Fatalf("seed %d step %d: marked %d, asked for %d", seed, step, got, n)
				}
				for i, e := range vs.exp.marked[before:] {
					if i >= len(hidden) || hidden[i] != e.ID {
						t.Fatalf("seed %d step %d: told of %v, marked %v", seed, step, hidden, vs.exp.marked[before:])
					}
				}
				if len(hidden) != vs.Marked()-before {
					t.Fatalf("seed %d step %d: told of %v, marked %v", seed, step, hidden, vs.exp.marked[before:])
				}
				// The model learns which: every entry just marked is
				// current (older ones may have been retired since).
				for _, e := range vs.exp.marked[before:] {
					if !vs.Current(e) {
						t.Fatalf("seed %d step %d: marked entry %v is stale", seed, step, e)
					}
					m.marked[e.ID] = true
				}
			case 7: // a batch takes marked versions, then succeeds or fails
				if taken == nil && vs.Marked() > 0 {
					taken, _ = vs.TakeMarked(1 + rng.IntN(3))
				} else if taken != nil {
					if rng.IntN(2) == 0 {
						for _, e := range taken {
							if vs.Current(e) {
								at := m.expires[e.ID]
								vs.Retire(e.ID, at)
								m.state[e.ID] = retired
								delete(m.marked, e.ID)
							}
						}
						vs.Swept(len(taken))
					} else {
						vs.Unswept(taken)
					}
					taken = nil
				}
			case 8: // ExpiringBy agrees with the model
				t0 := now + int64(rng.IntN(100))
				need := 1 + rng.IntN(4)
				have := 0
				for id, s := range m.state {
					if at, ok := m.expires[id]; ok && s == published && at <= t0 && !m.marked[id] && !inEntries(taken, id) {
						have++
					}
				}
				if got := vs.ExpiringBy(t0, need); got != (have >= need) {
					t.Fatalf("seed %d step %d: ExpiringBy(%d, %d) = %v, model has %d", seed, step, t0, need, got, have)
				}
				var due []vector.ID
				for id, s := range m.state {
					if at, ok := m.expires[id]; ok && s == published && at <= now && !m.marked[id] && !inEntries(taken, id) {
						due = append(due, id)
					}
				}
				got := vs.View(now).AppendDue(nil)
				slices.Sort(due)
				slices.Sort(got)
				if !slices.Equal(got, due) {
					t.Fatalf("seed %d step %d: AppendDue = %v, model has %v", seed, step, got, due)
				}
			}
			check(t, vs, m, now, next, seed, step)
		}
	}
}

// stateKnown reports whether the model holds id.
func (m *model) stateKnown(id vector.ID) bool { _, ok := m.state[id]; return ok }

func inEntries(es []Entry, id vector.ID) bool {
	for _, e := range es {
		if e.ID == id {
			return true
		}
	}
	return false
}

// check compares every answer of vs's view at now with the model.
func check(t *testing.T, vs *State, m *model, now int64, next vector.ID, seed uint64, step int) {
	t.Helper()
	v := vs.View(now)
	count, hiddenStored, hiddenPublished := 0, false, false
	var pub []vector.ID
	for id := vector.ID(0); id < next+2; id++ {
		want := m.sees(id, now)
		if got := v.Allow(id); got != want {
			t.Fatalf("seed %d step %d: Allow(%d) = %v, want %v (state %v)", seed, step, id, got, want, m.state[id])
		}
		if want {
			count++
		}
		s, stored := m.state[id]
		if stored && !want {
			hiddenStored = true
			if s == published {
				hiddenPublished = true
			}
		}
		if stored && s == published {
			pub = append(pub, id)
		}
	}
	if got := v.Count(); got != count {
		t.Fatalf("seed %d step %d: Count = %d, want %d", seed, step, got, count)
	}
	// Nil exactly when nothing is hidden: a nil filter with something
	// hidden would show it; a filter with nothing hidden costs a test per
	// id, which the expiry index's stale entries may ask for.
	if f := v.Filter(); f == nil && hiddenStored {
		t.Fatalf("seed %d step %d: Filter nil with versions hidden", seed, step)
	} else if f != nil {
		for id := range m.state {
			if f.Allow(id) != m.sees(id, now) {
				t.Fatalf("seed %d step %d: Filter.Allow(%d) = %v", seed, step, id, f.Allow(id))
			}
		}
	}
	if !hiddenStored && vs.Hidden() != 0 {
		t.Fatalf("seed %d step %d: Hidden = %d with nothing hidden", seed, step, vs.Hidden())
	}
	allow := v.OfPublished()
	if allow == nil && hiddenPublished {
		t.Fatalf("seed %d step %d: OfPublished nil with published versions hidden", seed, step)
	}
	kept := v.Keep(slices.Clone(pub))
	var want []vector.ID
	for _, id := range pub {
		if m.sees(id, now) {
			want = append(want, id)
		}
	}
	if !slices.Equal(kept, want) && len(kept)+len(want) > 0 {
		t.Fatalf("seed %d step %d: Keep = %v, want %v", seed, step, kept, want)
	}
}

// TestBitset checks the set against a map, with ids dense
// from 1, far off, and far off ones the bitmap grows to reach.
func TestBitset(t *testing.T) {
	var v bitset
	ref := map[vector.ID]bool{}
	n := 0
	add := func(id vector.ID) { v.set(id); ref[id] = true; n++ }
	for id := vector.ID(1); id < 5000; id++ {
		add(id)
	}
	add(1 << 50)
	add(1<<20 + 3) // far while the bitmap is small
	for id := vector.ID(5000); id < 80000; id++ {
		add(id) // grows the bitmap past 1<<20 + 3? not yet: 80000 < 1<<20
	}
	add(1 << 21) // within 64 words per version: the bitmap grows, and takes in 1<<20 + 3
	for _, id := range []vector.ID{7, 1 << 50, 1<<20 + 3} {
		v.clear(id)
		delete(ref, id)
	}
	for _, id := range []vector.ID{0, 1, 7, 8, 4999, 5000, 79999, 80000, 1<<20 + 2, 1<<20 + 3, 1 << 21, 1<<21 + 1, 1 << 50, 1<<50 + 1} {
		if got := v.Allow(id); got != ref[id] {
			t.Errorf("Allow(%d) = %v, want %v", id, got, ref[id])
		}
	}
	if len(v.words)*64 > 64*64*(n+1) {
		t.Errorf("bitmap of %d words for %d ids", len(v.words), n)
	}
}

// TestExpiryIndexBoundedByLive replaces versions with an ExpiresAt far
// ahead, again and again: the expiry index must not keep an entry for
// every version ever written until its time comes (it held 17,976
// entries for 3,000 live items after 15,000 upserts into a collection
// with a 30-day TTL, and grows with the writes of the whole TTL).
func TestExpiryIndexBoundedByLive(t *testing.T) {
	const live, writes = 10, 10000
	pub := map[vector.ID]int64{}
	vs := New(func(id vector.ID) (int64, bool) {
		at, ok := pub[id]
		return at, ok
	})
	cur := make([]vector.ID, live)
	var next vector.ID = 1
	for i := range live {
		vs.Numbered(1)
		cur[i], pub[next] = next, 1<<60+int64(next)
		vs.Publish(next, pub[next])
		next++
	}
	for i := range writes {
		old := cur[i%live]
		vs.Numbered(1)
		pub[next] = 1<<60 + int64(next)
		vs.Publish(next, pub[next])
		at := pub[old]
		delete(pub, old) // no longer published, as the catalog answers
		vs.Retire(old, at)
		vs.Evicted(1)
		cur[i%live] = next
		next++
	}
	if n := len(vs.exp.heap); n > 2*live+64 {
		t.Fatalf("after %d writes of %d items the expiry index holds %d entries", writes, live, n)
	}
	// Every published version is still in it, and due when its time comes.
	due := vs.View(1 << 61).AppendDue(nil)
	slices.Sort(due)
	if !slices.Equal(due, cur) {
		t.Fatalf("due at the end of time: %v, want %v", due, cur)
	}
}
