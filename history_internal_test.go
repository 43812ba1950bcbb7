package cairn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// modelItem is what the history model remembers of an item.
type modelItem struct {
	text    string
	tag     string
	vec     []float32
	expires time.Time // zero: never
}

// modelState is the collection as the model has it at a time.
type modelState struct {
	at    time.Time
	items map[string]modelItem
}

// alive returns the items of s visible at t.
func (s modelState) alive(t time.Time) map[string]modelItem {
	out := make(map[string]modelItem, len(s.items))
	for k, it := range s.items {
		if it.expires.IsZero() || it.expires.After(t) {
			out[k] = it
		}
	}
	return out
}

// checkItems fails t unless items are exactly want.
func checkItems(t *testing.T, what string, items []Item, want map[string]modelItem) {
	t.Helper()
	got := make(map[string]Item, len(items))
	for _, it := range items {
		got[it.ID] = it
	}
	if len(got) != len(want) || len(items) != len(want) {
		t.Fatalf("%s: %d items (%d distinct), want %d: got %v, want %v", what, len(items), len(got), len(want),
			slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("%s: %q missing", what, k)
		}
		if g.Text != w.text || g.Metadata["tag"] != w.tag || !slices.Equal(g.Embedding, w.vec) || !g.ExpiresAt.Equal(w.expires) {
			t.Fatalf("%s: %q = %q %v %v (expires %v), want %q %v %v (expires %v)", what, k,
				g.Text, g.Metadata["tag"], g.Embedding, g.ExpiresAt, w.text, w.tag, w.vec, w.expires)
		}
	}
}

// TestHistoryAgainstModel runs random writes, deletes, expiries, sweeps,
// restores and (in a file) reopens on a collection that keeps history,
// under a clock that moves a second per step, and checks AsOf at random
// past times, and the collection after each restore, against a model
// that keeps every state.
func TestHistoryAgainstModel(t *testing.T) {
	for _, file := range []bool{false, true} {
		for _, kind := range []IndexKind{Flat, HNSW} {
			t.Run(fmt.Sprintf("file=%v/%v", file, kind), func(t *testing.T) {
				seeds := uint64(4)
				if raceEnabled {
					seeds = 1
				}
				for seed := range seeds {
					testHistoryAgainstModel(t, file, kind, seed)
				}
			})
		}
	}
}

func testHistoryAgainstModel(t *testing.T, file bool, kind IndexKind, seed uint64) {
	ctx := context.Background()
	clk := NewFakeClock()
	path := filepath.Join(t.TempDir(), "h.cairn")
	open := func() (*DB, *Collection) {
		db := OpenMemory(nil)
		if file {
			var err error
			if db, err = Open(ctx, path, nil); err != nil {
				t.Fatal(err)
			}
		}
		db.clock, db.noSweeper = clk.Now, true
		c, err := db.GetOrCreateCollection(ctx, "h", CollectionConfig{Dim: 4, Metric: vector.L2, Index: kind, KeepHistory: &HistoryPolicy{}})
		if err != nil {
			t.Fatal(err)
		}
		return db, c
	}
	db, c := open()
	defer func() { db.Close() }()
	r := rand.New(rand.NewPCG(seed, 1))
	cur := map[string]modelItem{}
	states := []modelState{{at: clk.Now(), items: map[string]modelItem{}}}
	const keys = 24
	for step := range 400 {
		clk.Advance(time.Second)
		now := clk.Now()
		key := fmt.Sprint("k", r.IntN(keys))
		op := r.IntN(20)
		if testing.Verbose() {
			t.Logf("step %d at %v: op %d on %s", step, now.Format("05"), op, key)
		}
		switch {
		case op < 9: // upsert
			it := modelItem{text: fmt.Sprint("v", step), tag: fmt.Sprint("t", r.IntN(3)), vec: []float32{float32(step), 1, float32(r.IntN(9)), 2}}
			if r.IntN(4) == 0 {
				it.expires = now.Add(time.Duration(1+r.IntN(20)) * time.Second)
			}
			if err := c.Upsert(ctx, Item{ID: key, Text: it.text, Metadata: map[string]any{"tag": it.tag}, Embedding: it.vec, ExpiresAt: it.expires}); err != nil {
				t.Fatal(err)
			}
			cur[key] = it
		case op < 13: // delete
			n, err := c.DeleteIfExists(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cur[key]; ok && (cur[key].expires.IsZero() || cur[key].expires.After(now)) != (n == 1) {
				t.Fatalf("step %d: delete of %q removed %d", step, key, n)
			}
			delete(cur, key)
		case op < 15:
			if _, err := c.RemoveExpired(ctx); err != nil {
				t.Fatal(err)
			}
		case op < 17: // restore to a past state, all or some ids
			s := states[r.IntN(len(states))]
			var o RestoreOptions
			if r.IntN(3) == 0 {
				o.IDs = []string{key, fmt.Sprint("k", r.IntN(keys))}
			}
			res, err := c.Restore(ctx, s.at, &o)
			if err != nil {
				t.Fatal(err)
			}
			if o.IDs == nil {
				cur = s.alive(now)
			} else {
				for _, id := range o.IDs {
					if it, ok := s.alive(now)[id]; ok {
						cur[id] = it
					} else {
						delete(cur, id)
					}
				}
			}
			items, err := c.Find(ctx, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkItems(t, fmt.Sprintf("step %d: after restore to %v (%d put, %d deleted)", step, s.at, len(res.Put), len(res.Deleted)), items, alive(cur, now))
		case op < 18 && file:
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, c = open()
		default: // check a past state
			s := states[r.IntN(len(states))]
			snap, err := c.AsOf(ctx, s.at)
			if err != nil {
				t.Fatal(err)
			}
			items, err := snap.Find(ctx, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkItems(t, fmt.Sprintf("step %d: as of %v", step, s.at), items, s.alive(s.at))
			snap.Close()
		}
		states = append(states, modelState{at: now, items: maps.Clone(cur)})
	}
	for _, s := range states[len(states)-20:] {
		snap, err := c.AsOf(ctx, s.at)
		if err != nil {
			t.Fatal(err)
		}
		items, _ := snap.Find(ctx, nil, 0)
		checkItems(t, fmt.Sprintf("as of %v", s.at), items, s.alive(s.at))
		snap.Close()
	}
}

// clockedDB returns a store in memory or (file) in a new file, on clk,
// without a sweeper, closed when the test ends.
func clockedDB(t *testing.T, file bool, clk *FakeClock) *DB {
	t.Helper()
	db := OpenMemory(nil)
	if file {
		var err error
		if db, err = Open(context.Background(), filepath.Join(t.TempDir(), "h.cairn"), nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { db.Close() })
	db.clock, db.noSweeper = clk.Now, true
	return db
}

func alive(m map[string]modelItem, t time.Time) map[string]modelItem {
	return modelState{items: m}.alive(t)
}

// TestHistoryCallsClosedOrDeleted checks that the history calls of a
// collection without history report, as every call does, a deleted
// collection as vector.ErrNotFound and a closed store as vector.ErrClosed,
// not ErrNoHistory.
func TestHistoryCallsClosedOrDeleted(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			clk := NewFakeClock()
			db := clockedDB(t, file, clk)
			gone, err := db.CreateCollection(ctx, "gone", CollectionConfig{Dim: 2})
			if err != nil {
				t.Fatal(err)
			}
			plain, err := db.CreateCollection(ctx, "plain", CollectionConfig{Dim: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteCollection(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			calls := func(c *Collection) []error {
				_, e1 := c.History(ctx, "a")
				_, e2 := c.AsOf(ctx, clk.Now())
				_, e3 := c.Restore(ctx, clk.Now(), nil)
				return []error{e1, e2, e3}
			}
			for i, err := range calls(gone) {
				if !errors.Is(err, vector.ErrNotFound) {
					t.Errorf("call %d of a deleted collection: %v, want ErrNotFound", i, err)
				}
			}
			db.Close()
			for i, err := range calls(plain) {
				if !errors.Is(err, vector.ErrClosed) {
					t.Errorf("call %d of a closed store: %v, want ErrClosed", i, err)
				}
			}
		})
	}
}

// TestHistoryVersions reads the versions of one item through creation,
// upserts, a delete and a re-creation, and the errors of the history
// calls.
func TestHistoryVersions(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			clk := NewFakeClock()
			db := clockedDB(t, file, clk)
			start := clk.Now()
			c, err := db.CreateCollection(ctx, "v", CollectionConfig{Dim: 2, KeepHistory: &HistoryPolicy{}})
			if err != nil {
				t.Fatal(err)
			}
			plain, err := db.CreateCollection(ctx, "plain", CollectionConfig{Dim: 2})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := plain.History(ctx, "a"); !errors.Is(err, ErrNoHistory) {
				t.Fatalf("History of a plain collection: %v", err)
			}
			if _, err := plain.AsOf(ctx, start); !errors.Is(err, ErrNoHistory) {
				t.Fatalf("AsOf of a plain collection: %v", err)
			}
			if _, err := c.History(ctx, "a"); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("History of an unknown id: %v", err)
			}
			times := make([]time.Time, 5)
			for i, text := range []string{"one", "two", "", "three"} {
				clk.Advance(time.Minute)
				times[i] = clk.Now()
				if text == "" {
					err = c.Delete(ctx, "a")
				} else {
					err = c.Upsert(ctx, Item{ID: "a", Text: text, Embedding: []float32{1, float32(i)}})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			vs, err := c.History(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			want := []struct {
				text        string
				absent      bool
				from, until time.Time
			}{
				{"three", false, times[3], time.Time{}},
				{"", true, times[2], times[3]},
				{"two", false, times[1], times[2]},
				{"one", false, times[0], times[1]},
				{"", true, time.Time{}, times[0]},
			}
			if len(vs) != len(want) {
				t.Fatalf("History: %d versions, want %d: %+v", len(vs), len(want), vs)
			}
			for i, w := range want {
				v := vs[i]
				if v.Item.ID != "a" || v.Item.Text != w.text || v.Absent != w.absent || !v.From.Equal(w.from) || !v.Until.Equal(w.until) {
					t.Fatalf("version %d = %+v, want %+v", i, v, w)
				}
			}
			if vs[2].Item.CreatedAt.Equal(vs[0].Item.CreatedAt) {
				t.Fatalf("the re-created item kept the CreatedAt of the deleted one")
			}
			if _, err := c.AsOf(ctx, start.Add(-time.Second)); !errors.Is(err, ErrBeforeHistory) {
				t.Fatalf("AsOf before the history: %v", err)
			}
			if _, err := c.AsOf(ctx, clk.Now().Add(time.Second)); !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("AsOf in the future: %v", err)
			}
			// Restore to "two", dry run first, then for real, then undo.
			res, err := c.Restore(ctx, times[1], &RestoreOptions{DryRun: true})
			if err != nil || !slices.Equal(res.Put, []string{"a"}) || !res.Undo.IsZero() {
				t.Fatalf("dry run = %+v, %v", res, err)
			}
			if got, _ := c.Get(ctx, "a"); got[0].Text != "three" {
				t.Fatalf("a dry run changed the item to %q", got[0].Text)
			}
			clk.Advance(time.Minute)
			if res, err = c.Restore(ctx, times[1], nil); err != nil {
				t.Fatal(err)
			}
			got, err := c.Get(ctx, "a")
			if err != nil || got[0].Text != "two" || !got[0].CreatedAt.Equal(vs[2].Item.CreatedAt) || !got[0].UpdatedAt.Equal(vs[2].Item.UpdatedAt) {
				t.Fatalf("after restore: %+v, %v; want %+v", got, err, vs[2].Item)
			}
			clk.Advance(time.Minute)
			if _, err := c.Restore(ctx, res.Undo, nil); err != nil {
				t.Fatal(err)
			}
			if got, _ := c.Get(ctx, "a"); got[0].Text != "three" {
				t.Fatalf("after undo: %q, want three", got[0].Text)
			}
			if vs, _ = c.History(ctx, "a"); len(vs) != 7 {
				t.Fatalf("History after a restore and its undo: %d versions, want 7", len(vs))
			}
			// Restore to before "a" existed deletes it.
			clk.Advance(time.Minute)
			if res, err = c.Restore(ctx, start, nil); err != nil || !slices.Equal(res.Deleted, []string{"a"}) {
				t.Fatalf("restore to the start = %+v, %v", res, err)
			}
			if n := mustCount(t, c); n != 0 {
				t.Fatalf("after restore to the start: %d items", n)
			}
		})
	}
}

// TestHistoryTrim keeps history by count and by age and checks what the
// sweep lets go of, and that AsOf refuses the times it no longer holds.
func TestHistoryTrim(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			clk := NewFakeClock()
			db := clockedDB(t, file, clk)
			byCount, err := db.CreateCollection(ctx, "count", CollectionConfig{Dim: 2, KeepHistory: &HistoryPolicy{Versions: 2}})
			if err != nil {
				t.Fatal(err)
			}
			byAge, err := db.CreateCollection(ctx, "age", CollectionConfig{Dim: 2, KeepHistory: &HistoryPolicy{For: time.Hour}})
			if err != nil {
				t.Fatal(err)
			}
			var times []time.Time
			for i := range 5 {
				clk.Advance(time.Minute)
				times = append(times, clk.Now())
				for _, c := range []*Collection{byCount, byAge} {
					if err := c.Upsert(ctx, Item{ID: "a", Text: fmt.Sprint(i), Embedding: []float32{1, float32(i)}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, c := range []*Collection{byCount, byAge} {
				if _, err := c.RemoveExpired(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if vs, _ := byCount.History(ctx, "a"); len(vs) != 3 || vs[2].Item.Text != "2" {
				t.Fatalf("by count: %d versions (oldest %q), want 3 (oldest \"2\")", len(vs), vs[len(vs)-1].Item.Text)
			}
			if _, err := byCount.AsOf(ctx, times[2].Add(-time.Second)); !errors.Is(err, ErrBeforeHistory) {
				t.Fatalf("AsOf before what the count keeps: %v", err)
			}
			snap, err := byCount.AsOf(ctx, times[3])
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := snap.Get(ctx, "a"); got[0].Text != "3" {
				t.Fatalf("as of the 4th write: %q", got[0].Text)
			}
			snap.Close()
			if vs, _ := byAge.History(ctx, "a"); len(vs) != 6 {
				t.Fatalf("by age, within the hour: %d versions, want 6", len(vs))
			}
			clk.Advance(time.Hour - 150*time.Second) // two states ended over an hour ago
			if _, err := byAge.RemoveExpired(ctx); err != nil {
				t.Fatal(err)
			}
			if vs, _ := byAge.History(ctx, "a"); len(vs) != 4 {
				t.Fatalf("by age, after the hour: %d versions, want 4", len(vs))
			}
			if _, err := byAge.AsOf(ctx, times[1].Add(-time.Second)); !errors.Is(err, ErrBeforeHistory) {
				t.Fatalf("AsOf before what the age keeps: %v", err)
			}
		})
	}
}

// TestHistoryTenants restores one tenant and checks that no other tenant,
// nor the collection itself, changes, and that a tenant's history and
// snapshots hold only its own items.
func TestHistoryTenants(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.cairn"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.clock, db.noSweeper = clk.Now, true
	c, err := db.CreateCollection(ctx, "mem", CollectionConfig{Dim: 2, KeepHistory: &HistoryPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := c.CreateTenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := c.CreateTenant(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	put := func(m MemoryCollection, id, text string) {
		t.Helper()
		clk.Advance(time.Second)
		if err := m.Upsert(ctx, Item{ID: id, Text: text, Embedding: []float32{1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	put(alice, "a", "alice 1")
	put(bob, "a", "bob 1")
	put(c, "a", "own 1")
	mark := clk.Now()
	put(alice, "a", "alice 2")
	put(alice, "b", "alice b")
	put(bob, "a", "bob 2")
	put(c, "a", "own 2")
	clk.Advance(time.Second)
	res, err := alice.Restore(ctx, mark, nil)
	if err != nil || !slices.Equal(res.Put, []string{"a"}) || !slices.Equal(res.Deleted, []string{"b"}) {
		t.Fatalf("alice's restore = %+v, %v", res, err)
	}
	for _, tc := range []struct {
		m    MemoryCollection
		want string
		n    int
	}{{alice, "alice 1", 1}, {bob, "bob 2", 1}, {c, "own 2", 1}} {
		got, err := tc.m.Get(ctx, "a")
		if err != nil || got[0].Text != tc.want {
			t.Fatalf("%s after alice's restore: %v, %v; want %q", tc.m.Name(), got, err, tc.want)
		}
		if n, _ := tc.m.Count(ctx); n != tc.n {
			t.Fatalf("%s holds %d items, want %d", tc.m.Name(), n, tc.n)
		}
	}
	vs, err := bob.History(ctx, "a")
	if err != nil || len(vs) != 3 || vs[0].Item.Text != "bob 2" || vs[1].Item.Text != "bob 1" {
		t.Fatalf("bob's history: %+v, %v", vs, err)
	}
	snap, err := bob.AsOf(ctx, mark)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	items, _ := snap.Find(ctx, nil, 0)
	if len(items) != 1 || items[0].Text != "bob 1" {
		t.Fatalf("bob as of the mark: %+v", items)
	}
}

// TestHistoryConcurrent runs writers beside History, AsOf and Restore
// calls and checks that every history read is well formed and that, once
// the writers stop, each id's newest version is the item Get returns.
func TestHistoryConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			db := OpenMemory(nil)
			if file {
				var err error
				if db, err = Open(ctx, filepath.Join(t.TempDir(), "c.cairn"), nil); err != nil {
					t.Fatal(err)
				}
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, KeepHistory: &HistoryPolicy{}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			const writers, rounds, keys = 4, 60, 8
			var g sync.WaitGroup
			for w := range writers {
				g.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 9))
					for i := range rounds {
						id := fmt.Sprint("k", r.IntN(keys))
						var err error
						if r.IntN(4) == 0 {
							_, err = c.DeleteIfExists(ctx, id)
						} else {
							err = c.Upsert(ctx, Item{ID: id, Text: fmt.Sprint(w, "/", i), Embedding: []float32{1, float32(i)}})
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			g.Go(func() {
				r := rand.New(rand.NewPCG(99, 9))
				for range rounds {
					id := fmt.Sprint("k", r.IntN(keys))
					vs, err := c.History(ctx, id)
					if errors.Is(err, vector.ErrNotFound) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if !vs[0].Until.IsZero() {
						t.Errorf("history of %s: the newest version has an end", id)
					}
					for i := 1; i < len(vs); i++ {
						if !vs[i].Until.Equal(vs[i-1].From) || vs[i].Absent && vs[i-1].Absent {
							t.Errorf("history of %s: versions %d and %d do not meet: %+v", id, i-1, i, vs)
							return
						}
					}
					snap, err := c.AsOf(ctx, time.Now())
					if err != nil {
						t.Error(err)
						return
					}
					snap.Close()
					if _, err := c.Restore(ctx, start, &RestoreOptions{IDs: []string{id}}); err != nil {
						t.Error(err)
						return
					}
				}
			})
			g.Wait()
			for k := range keys {
				id := fmt.Sprint("k", k)
				vs, err := c.History(ctx, id)
				if errors.Is(err, vector.ErrNotFound) {
					continue
				}
				got, gerr := c.Get(ctx, id)
				switch {
				case err != nil:
					t.Fatal(err)
				case vs[0].Absent != (gerr != nil):
					t.Fatalf("%s: newest version absent %v, Get error %v", id, vs[0].Absent, gerr)
				case gerr == nil && vs[0].Item.Text != got[0].Text:
					t.Fatalf("%s: newest version %q, Get %q", id, vs[0].Item.Text, got[0].Text)
				}
			}
		})
	}
}

// historyDB opens a store for the history tests, in memory or in a file
// of t's, with options o.
func historyDB(t *testing.T, file bool, o *Options) *DB {
	t.Helper()
	if !file {
		db := OpenMemory(o)
		t.Cleanup(func() { db.Close() })
		return db
	}
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "h.cairn"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestHistoryStampsInOrderOfEffect has a write that begins first take
// effect last (its text is being embedded meanwhile) and checks that it
// is stamped after the write that took effect before it: the item's
// UpdatedAt does not go back, no version of History ends before it
// begins, and AsOf at each version's From shows that version.
func TestHistoryStampsInOrderOfEffect(t *testing.T) {
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			ctx := context.Background()
			entered, release := make(chan struct{}), make(chan struct{})
			emb := EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
				close(entered)
				<-release
				return [][]float32{{0, 1}}, nil
			})
			db := historyDB(t, file, &Options{Embedder: emb})
			clk := NewFakeClock()
			db.clock = clk.Now
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, KeepHistory: &HistoryPolicy{}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Add(ctx, Item{ID: "x", Text: "first", Embedding: []float32{1, 0}}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			slow := make(chan error, 1)
			go func() { slow <- c.Upsert(ctx, Item{ID: "x", Text: "slow"}) }()
			<-entered
			clk.Advance(time.Second)
			if err := c.Upsert(ctx, Item{ID: "x", Text: "quick", Embedding: []float32{1, 1}}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			close(release)
			if err := <-slow; err != nil {
				t.Fatal(err)
			}
			vs, err := c.History(ctx, "x")
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, v := range vs {
				texts = append(texts, v.Item.Text)
			}
			if want := []string{"slow", "quick", "first", ""}; !slices.Equal(texts, want) {
				t.Fatalf("History: %q, want %q", texts, want)
			}
			if !vs[0].Item.UpdatedAt.After(vs[1].Item.UpdatedAt) {
				t.Errorf("UpdatedAt went back: %v after %v", vs[0].Item.UpdatedAt, vs[1].Item.UpdatedAt)
			}
			for i, v := range vs {
				if !v.Until.IsZero() && v.Until.Before(v.From) {
					t.Errorf("version %q ends (%v) before it begins (%v)", v.Item.Text, v.Until, v.From)
				}
				if i > 0 && !v.Until.Equal(vs[i-1].From) {
					t.Errorf("version %q ends at %v, the next begins at %v", v.Item.Text, v.Until, vs[i-1].From)
				}
				if v.Absent {
					continue
				}
				snap, err := c.AsOf(ctx, v.From)
				if err != nil {
					t.Fatal(err)
				}
				got, err := snap.Get(ctx, "x")
				snap.Close()
				if err != nil || got[0].Text != v.Item.Text {
					t.Errorf("AsOf the From of %q: %v, %v", v.Item.Text, got, err)
				}
			}
		})
	}
}

// TestStampsAfterLoad checks that a collection loaded again from its
// file (at Open, or a tenant loaded again after it was closed to save
// memory) times its writes after those it holds, as Item says, even when
// the clock has not moved on (a coarse clock) or has stepped back: a
// Restore's Undo must still give back the write before it, and a later
// version must not begin before an earlier one.
func TestStampsAfterLoad(t *testing.T) {
	ctx := context.Background()
	for _, back := range []time.Duration{0, time.Minute} {
		for _, tenant := range []bool{false, true} {
			t.Run(fmt.Sprint("back=", back, "/tenant=", tenant), func(t *testing.T) {
				clk := NewFakeClock()
				path := filepath.Join(t.TempDir(), "h.cairn")
				open := func() (*DB, MemoryCollection, func() (Restored, error), func(time.Time) (Restored, error), func() ([]Version, error)) {
					db, err := Open(ctx, path, &Options{TenantMemory: 1})
					if err != nil {
						t.Fatal(err)
					}
					db.clock, db.noSweeper = clk.Now, true
					c, err := db.GetOrCreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: Flat, KeepHistory: &HistoryPolicy{}})
					if err != nil {
						t.Fatal(err)
					}
					if !tenant {
						return db, c, nil, func(at time.Time) (Restored, error) { return c.Restore(ctx, at, nil) },
							func() ([]Version, error) { return c.History(ctx, "x") }
					}
					tn, err := c.GetOrCreateTenant(ctx, "a")
					if err != nil {
						t.Fatal(err)
					}
					return db, tn, nil, func(at time.Time) (Restored, error) { return tn.Restore(ctx, at, nil) },
						func() ([]Version, error) { return tn.History(ctx, "x") }
				}
				db, c, _, restore, history := open()
				clk.Advance(time.Second)
				t0 := clk.Now()
				clk.Advance(time.Second)
				if err := c.Add(ctx, Item{ID: "x", Text: "one", Embedding: []float32{1, 0}}); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				clk.Advance(-back)
				db, c, _, restore, history = open()
				defer db.Close()
				if err := c.Upsert(ctx, Item{ID: "x", Text: "two", Embedding: []float32{0, 1}}); err != nil {
					t.Fatal(err)
				}
				vs, err := history()
				if err != nil || len(vs) != 3 {
					t.Fatalf("History: %+v, %v", vs, err)
				}
				if vs[0].Item.UpdatedAt.Before(vs[1].Item.UpdatedAt) || vs[0].From.Before(vs[1].From) {
					t.Errorf("%q written at %v, %v, before %q at %v", vs[0].Item.Text, vs[0].Item.UpdatedAt, vs[0].From, vs[1].Item.Text, vs[1].Item.UpdatedAt)
				}
				if back > 0 {
					return // no Restore to t0: the clock shows a time before it
				}
				// a tenant is closed after each call (TenantMemory): the
				// Restore loads it again, at the same clock.
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db, c, _, restore, _ = open()
				defer db.Close()
				res, err := restore(t0)
				if err != nil || len(res.Deleted) != 1 {
					t.Fatalf("Restore: %+v, %v", res, err)
				}
				if _, err := restore(res.Undo); err != nil {
					t.Fatal(err)
				}
				got, err := c.Get(ctx, "x")
				if err != nil || got[0].Text != "two" {
					t.Fatalf("after the undo: %v, %v; want x as before the Restore, %q", got, err, "two")
				}
			})
		}
	}
}

// TestRestoreUndoKeepsWriteBefore runs Restores of one id beside
// Upserts of it, round after round, and where the Restore took effect
// after the Upsert, restores to its Undo: that must bring the Upsert's
// item back, the state just before the Restore.
func TestRestoreUndoKeepsWriteBefore(t *testing.T) {
	ctx := context.Background()
	db := historyDB(t, false, nil)
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: Flat, KeepHistory: &HistoryPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	filler := make([]Item, 1000) // history for each Restore to read: it takes a moment
	for i := range filler {
		filler[i] = Item{ID: fmt.Sprint("f", i), Embedding: []float32{1, float32(i)}}
	}
	if err := c.Add(ctx, append(filler, Item{ID: "x", Text: "original", Embedding: []float32{1, 0}})...); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	t0 := time.Now()
	time.Sleep(time.Millisecond)
	if err := c.Upsert(ctx, filler...); err != nil {
		t.Fatal(err)
	}
	after := 0
	for round := range 40 {
		want := fmt.Sprint("upsert ", round)
		var (
			res Restored
			g   sync.WaitGroup
		)
		g.Go(func() {
			var err error
			if res, err = c.Restore(ctx, t0, &RestoreOptions{IDs: []string{"x"}}); err != nil {
				t.Error(err)
			}
		})
		g.Go(func() {
			time.Sleep(time.Duration(round%8) * 50 * time.Microsecond)
			if err := c.Upsert(ctx, Item{ID: "x", Text: want, Embedding: []float32{0, 1}}); err != nil {
				t.Error(err)
			}
		})
		g.Wait()
		if got := getText(t, c, "x"); got != "original" || len(res.Put) == 0 {
			continue // the Upsert took effect after the Restore
		}
		after++
		if _, err := c.Restore(ctx, res.Undo, &RestoreOptions{IDs: []string{"x"}}); err != nil {
			t.Fatal(err)
		}
		if got := getText(t, c, "x"); got != want {
			t.Fatalf("round %d: the Restore took effect after %q; restored to its Undo, x is %q", round, want, got)
		}
		if err := c.Upsert(ctx, Item{ID: "x", Text: "between", Embedding: []float32{1, 1}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("the Restore took effect after the Upsert in %d of 40 rounds", after)
}

// getText returns the text of c's item id.
func getText(t *testing.T, c *Collection, id string) string {
	t.Helper()
	got, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got[0].Text
}

// TestRestoreTwice restores a collection to a time twice: the second
// restore finds every id as it was then and writes nothing, in memory
// and in a file, with embeddings not of unit length under cosine.
func TestRestoreTwice(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			db := historyDB(t, file, nil)
			clk := NewFakeClock()
			db.clock = clk.Now
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 3, KeepHistory: &HistoryPolicy{}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Add(ctx, Item{ID: "a", Text: "first", Embedding: []float32{3, 4, 0}, Metadata: map[string]any{"n": 1}},
				Item{ID: "b", Text: "kept", Embedding: []float32{0, 2, 1}}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			then := clk.Now()
			clk.Advance(time.Second)
			if err := c.Upsert(ctx, Item{ID: "a", Text: "second", Embedding: []float32{1, 1, 1}}); err != nil {
				t.Fatal(err)
			}
			if err := c.Add(ctx, Item{ID: "c", Text: "new", Embedding: []float32{1, 0, 0}}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			first, err := c.Restore(ctx, then, nil)
			if err != nil || !slices.Equal(first.Put, []string{"a"}) || !slices.Equal(first.Deleted, []string{"c"}) {
				t.Fatalf("first restore: %+v, %v", first, err)
			}
			versions, err := c.History(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			second, err := c.Restore(ctx, then, nil)
			if err != nil || len(second.Put) != 0 || len(second.Deleted) != 0 || !second.Undo.IsZero() {
				t.Fatalf("second restore: %+v, %v; want nothing to do", second, err)
			}
			if again, err := c.History(ctx, "a"); err != nil || len(again) != len(versions) {
				t.Fatalf("a's history: %d versions after the second restore, %d before (%v)", len(again), len(versions), err)
			}
			if got := getText(t, c, "a"); got != "first" {
				t.Fatalf("a = %q", got)
			}
		})
	}
}

// TestRestoreUndoAtStoppedClock restores, undoes the restore, and undoes
// the undo, all at one clock reading (a coarse clock): each Restore is
// stamped a nanosecond after the write before it, so the second Undo is a
// time after the clock's, which the store itself wrote at. Restoring to
// it, or reading AsOf it, must not be refused as a time in the future.
func TestRestoreUndoAtStoppedClock(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", file), func(t *testing.T) {
			db := historyDB(t, file, nil)
			clk := NewFakeClock()
			db.clock = clk.Now
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: Flat, KeepHistory: &HistoryPolicy{}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Add(ctx, Item{ID: "x", Text: "one", Embedding: []float32{1, 0}}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			t0 := clk.Now()
			clk.Advance(time.Second) // from here on the clock stays
			if err := c.Upsert(ctx, Item{ID: "x", Text: "two", Embedding: []float32{0, 1}}); err != nil {
				t.Fatal(err)
			}
			res, err := c.Restore(ctx, t0, nil) // x = "one"
			if err != nil || getText(t, c, "x") != "one" {
				t.Fatalf("restore to t0: %+v, %v", res, err)
			}
			undo, err := c.Restore(ctx, res.Undo, nil) // x = "two"
			if err != nil || getText(t, c, "x") != "two" {
				t.Fatalf("restore to its Undo: %+v, %v", undo, err)
			}
			snap, err := c.AsOf(ctx, undo.Undo)
			if err != nil {
				t.Fatalf("AsOf the second Undo %v (clock %v): %v", undo.Undo, clk.Now(), err)
			}
			if got, err := snap.Get(ctx, "x"); err != nil || got[0].Text != "one" {
				t.Errorf("AsOf the second Undo: x = %+v, %v; want \"one\"", got, err)
			}
			snap.Close()
			if _, err := c.Restore(ctx, undo.Undo, nil); err != nil {
				t.Fatalf("restore to the second Undo %v (clock %v): %v", undo.Undo, clk.Now(), err)
			}
			if got := getText(t, c, "x"); got != "one" {
				t.Errorf("after undoing the undo, x = %q, want \"one\"", got)
			}
		})
	}
}

// TestHistoryPolicyIsCopied: the policy a collection keeps is its own, so
// a caller changing the one it passed, or one Config or Info returned,
// neither changes what the collection reports nor trims its history.
func TestHistoryPolicyIsCopied(t *testing.T) {
	ctx := context.Background()
	clk := NewFakeClock()
	db := clockedDB(t, false, clk)
	hp := &HistoryPolicy{}
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, KeepHistory: hp})
	if err != nil {
		t.Fatal(err)
	}
	tn, err := c.CreateTenant(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		clk.Advance(time.Minute)
		if err := c.Upsert(ctx, Item{ID: "a", Embedding: []float32{1, float32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	hp.For = time.Second
	c.Config().KeepHistory.For = time.Second
	tn.Config().KeepHistory.Versions = 1
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	info.Config.KeepHistory.Versions = 1
	if got := *c.Config().KeepHistory; got != (HistoryPolicy{}) {
		t.Fatalf("Config().KeepHistory = %+v after the caller's changes, want the zero policy", got)
	}
	clk.Advance(time.Hour)
	if _, err := c.RemoveExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if vs, _ := c.History(ctx, "a"); len(vs) != 4 {
		t.Fatalf("%d versions after a sweep, want all 4 (the zero policy keeps every one)", len(vs))
	}
}
