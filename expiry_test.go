package cairn_test

// This file tests time and expiry: the times items keep (across upserts
// and reopening), TTL, expired items hidden from every read, the sweep
// through the write path, time-range filters, and their bad input. Time
// moves by a fake clock, never by sleeping.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// timeStore opens a store on clk, in memory or (path not empty) in a
// file, without the background sweeper unless sweep is set.
func timeStore(t *testing.T, path string, clk *cairn.FakeClock, sweep bool) *cairn.DB {
	t.Helper()
	db := cairn.OpenMemory(nil)
	if path != "" {
		var err error
		if db, err = cairn.Open(context.Background(), path, nil); err != nil {
			t.Fatal(err)
		}
	}
	db.SetClockForTest(clk.Now)
	if !sweep {
		db.NoSweeperForTest()
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// forEachStore runs fn over a memory store and a file store (path "" for
// memory).
func forEachStore(t *testing.T, fn func(t *testing.T, path string)) {
	t.Run("memory", func(t *testing.T) { fn(t, "") })
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "t.db")) })
}

func getOne(t *testing.T, c *cairn.Collection, id string) cairn.Item {
	t.Helper()
	its, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return its[0]
}

// TestItemTimes checks that the store sets CreatedAt and UpdatedAt, that
// an Upsert keeps the one and moves the other, that results carry them,
// and that a file keeps them across a reopen.
func TestItemTimes(t *testing.T) {
	forEachStore(t, func(t *testing.T, path string) {
		ctx := context.Background()
		clk := cairn.NewFakeClock()
		t0 := clk.Now()
		db := timeStore(t, path, clk, false)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
		if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, Text: "alpha"}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		t1 := clk.Now()
		if err := c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 1}, Text: "alpha two"},
			cairn.Item{ID: "b", Embedding: []float32{0, 1}}); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			a, b := getOne(t, c, "a"), getOne(t, c, "b")
			if !a.CreatedAt.Equal(t0) || !a.UpdatedAt.Equal(t1) || !a.ExpiresAt.IsZero() {
				t.Fatalf("%s: a has times %v %v %v, want %v %v and none", when, a.CreatedAt, a.UpdatedAt, a.ExpiresAt, t0, t1)
			}
			if !b.CreatedAt.Equal(t1) || !b.UpdatedAt.Equal(t1) {
				t.Fatalf("%s: b has times %v %v, want %v", when, b.CreatedAt, b.UpdatedAt, t1)
			}
			rs, err := c.Query(ctx, []float32{1, 1}, 1, nil)
			if err != nil || len(rs) != 1 || rs[0].ID != "a" || !rs[0].CreatedAt.Equal(t0) || !rs[0].UpdatedAt.Equal(t1) {
				t.Fatalf("%s: query %+v, %v", when, rs, err)
			}
		}
		check("written")
		if path == "" {
			return
		}
		db.Close()
		db = timeStore(t, path, clk, false)
		c, err := db.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		check("reopened")
	})
}

// TestImportedTimesKept checks that times given with an Add (as an import
// carries them) are kept, and their rules.
func TestImportedTimesKept(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	db := timeStore(t, "", clk, false)
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	created := clk.Now().Add(-48 * time.Hour)
	updated := clk.Now().Add(-time.Hour)
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, CreatedAt: created, UpdatedAt: updated}); err != nil {
		t.Fatal(err)
	}
	if a := getOne(t, c, "a"); !a.CreatedAt.Equal(created) || !a.UpdatedAt.Equal(updated) {
		t.Fatalf("times %v %v, want %v %v", a.CreatedAt, a.UpdatedAt, created, updated)
	}
	// An Upsert keeps the stored CreatedAt, whatever it is given.
	if err := c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if a := getOne(t, c, "a"); !a.CreatedAt.Equal(created) || !a.UpdatedAt.Equal(clk.Now()) {
		t.Fatalf("after upsert: times %v %v, want %v %v", a.CreatedAt, a.UpdatedAt, created, clk.Now())
	}
}

// TestTTL checks a collection's time-to-live: it sets ExpiresAt from each
// write, an explicit ExpiresAt overrides it, and it is stored with the
// collection.
func TestTTL(t *testing.T) {
	forEachStore(t, func(t *testing.T, path string) {
		ctx := context.Background()
		clk := cairn.NewFakeClock()
		db := timeStore(t, path, clk, false)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, TTL: time.Hour})
		t0 := clk.Now()
		soon := t0.Add(time.Minute)
		if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}},
			cairn.Item{ID: "b", Embedding: []float32{0, 1}, ExpiresAt: soon}); err != nil {
			t.Fatal(err)
		}
		if a := getOne(t, c, "a"); !a.ExpiresAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("a expires %v, want %v", a.ExpiresAt, t0.Add(time.Hour))
		}
		if b := getOne(t, c, "b"); !b.ExpiresAt.Equal(soon) {
			t.Fatalf("b expires %v, want %v", b.ExpiresAt, soon)
		}
		clk.Advance(30 * time.Minute)
		if err := c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}}); err != nil {
			t.Fatal(err)
		}
		if a := getOne(t, c, "a"); !a.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
			t.Fatalf("upserted a expires %v, want %v", a.ExpiresAt, clk.Now().Add(time.Hour))
		}
		if path == "" {
			return
		}
		db.Close()
		db = timeStore(t, path, clk, false)
		c, err := db.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if c.Config().TTL != time.Hour {
			t.Fatalf("reopened TTL %v, want 1h", c.Config().TTL)
		}
	})
}

// TestExpiredHiddenFromEveryRead checks that once an item's ExpiresAt has
// come, and before any sweep, no read returns it: Get, Find, Items,
// Count, Query in every mode, with and without a filter; a Delete does
// not find it, and an Add of its id succeeds.
func TestExpiredHiddenFromEveryRead(t *testing.T) {
	forEachStore(t, func(t *testing.T, path string) {
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			t.Run(kind.String(), func(t *testing.T) {
				if path != "" {
					path = filepath.Join(t.TempDir(), "t.db")
				}
				testExpiredHidden(t, path, kind)
			})
		}
	})
}

func testExpiredHidden(t *testing.T, path string, kind cairn.IndexKind) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	db := timeStore(t, path, clk, false)
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: kind})
	var items []cairn.Item
	for i := range 40 {
		it := cairn.Item{ID: fmt.Sprint("k", i), Embedding: []float32{1, float32(i) / 40},
			Text: "common word", Metadata: map[string]any{"even": i%2 == 0}}
		if i < 20 {
			it.ExpiresAt = clk.Now().Add(time.Hour)
			it.Text = "common doomed"
		}
		items = append(items, it)
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if n := cairn.MustCount(t, c); n != 40 {
		t.Fatalf("Count %d before expiry, want 40", n)
	}
	clk.Advance(time.Hour) // ExpiresAt has come: expired
	live := func(id string) bool { var i int; fmt.Sscanf(id, "k%d", &i); return i >= 20 }
	if n := cairn.MustCount(t, c); n != 20 {
		t.Fatalf("Count %d after expiry, want 20", n)
	}
	if info, err := c.Info(ctx); err != nil || info.Count != 20 {
		t.Fatalf("Info.Count %d, %v", info.Count, err)
	}
	if _, err := c.Get(ctx, "k3"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Get of an expired item: %v, want ErrNotFound", err)
	}
	for _, f := range []*cairn.Filter{nil, cairn.Eq("even", true), cairn.And(cairn.Eq("even", true), cairn.Ne("x", 1))} {
		found, err := c.Find(ctx, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range found {
			if !live(it.ID) {
				t.Fatalf("Find(%v) returned expired %q", f, it.ID)
			}
		}
		want := 20
		if f != nil {
			want = 10
		}
		if len(found) != want {
			t.Fatalf("Find(%v): %d items, want %d", f, len(found), want)
		}
		n := 0
		for it, err := range c.Items(ctx, &cairn.ItemsOptions{Filter: f, Embeddings: true}) {
			if err != nil {
				t.Fatal(err)
			}
			if !live(it.ID) {
				t.Fatalf("Items(%v) returned expired %q", f, it.ID)
			}
			n++
		}
		if n != want {
			t.Fatalf("Items(%v): %d, want %d", f, n, want)
		}
		for _, mode := range []cairn.QueryMode{cairn.VectorMode, cairn.KeywordMode, cairn.HybridMode} {
			o := &cairn.QueryOptions{Filter: f, Mode: mode}
			var q []float32
			if mode != cairn.KeywordMode {
				q = []float32{1, 0} // nearest the expired items
			}
			if mode != cairn.VectorMode {
				o.Keywords = "common doomed"
			}
			rs, err := c.Query(ctx, q, 10, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 10 {
				t.Fatalf("%v query, filter %v: %d results, want 10", mode, f, len(rs))
			}
			for _, r := range rs {
				if !live(r.ID) {
					t.Fatalf("%v query, filter %v, returned expired %q", mode, f, r.ID)
				}
			}
		}
	}
	if n, err := c.DeleteIfExists(ctx, "k1", "k30"); err != nil || n != 1 {
		t.Fatalf("DeleteIfExists of an expired and a live item: %d, %v; want 1", n, err)
	}
	if err := c.Delete(ctx, "k2"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Delete of an expired item: %v, want ErrNotFound", err)
	}
	if n, err := c.DeleteWhere(ctx, cairn.Eq("even", true)); err != nil || n != 9 {
		t.Fatalf("DeleteWhere counted %d, %v; want the 9 live even items", n, err)
	}
	// An Add of an expired item's id stores a new item.
	if err := c.Add(ctx, cairn.Item{ID: "k3", Embedding: []float32{0, 1}, Text: "reborn"}); err != nil {
		t.Fatalf("Add over an expired item: %v", err)
	}
	if got := getOne(t, c, "k3"); got.Text != "reborn" || !got.ExpiresAt.IsZero() || !got.CreatedAt.Equal(clk.Now()) {
		t.Fatalf("re-added k3: %+v", got)
	}
	// The sweep removes the 19 others, through the write path.
	n, err := c.RemoveExpired(ctx)
	if err != nil || n != 19 {
		t.Fatalf("RemoveExpired: %d, %v; want 19", n, err)
	}
	if n, err := c.RemoveExpired(ctx); err != nil || n != 0 {
		t.Fatalf("second RemoveExpired: %d, %v; want 0", n, err)
	}
	if n := cairn.MustCount(t, c); n != 11 {
		t.Fatalf("Count after the sweep %d, want 11", n)
	}
	rs, err := c.Query(ctx, nil, 10, &cairn.QueryOptions{Mode: cairn.KeywordMode, Keywords: "doomed"})
	if err != nil || len(rs) != 0 {
		t.Fatalf("keyword index after the sweep: %v, %v", ids(rs), err)
	}
	if path == "" {
		return
	}
	db.Close()
	db = timeStore(t, path, clk, false)
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if n := cairn.MustCount(t, c); n != 11 {
		t.Fatalf("Count after reopening %d, want 11", n)
	}
	if n, err := c.RemoveExpired(ctx); err != nil || n != 0 {
		t.Fatalf("RemoveExpired after reopening: %d, %v; want 0 (swept before)", n, err)
	}
}

// TestSweeperInBackground checks that the background sweeper removes
// items that expire while the collection is open (woken by the write that
// set the soonest ExpiresAt) and those that expired while the file was
// closed (at open).
func TestSweeperInBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	clk := cairn.NewFakeClock()
	swept := make(chan int, 100)
	open := func() *cairn.DB {
		db, err := cairn.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.SetClockForTest(clk.Now)
		db.SetSweptHookForTest(func(_ string, n int, err error) {
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			if n > 0 {
				swept <- n
			}
		})
		return db
	}
	db := open()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	// An item must expire in the future: the clock moves after the Add,
	// and a second write wakes the sweeper.
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, ExpiresAt: clk.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if err := c.Add(ctx, cairn.Item{ID: "w", Embedding: []float32{0, 1}, ExpiresAt: clk.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-swept:
		if n != 1 {
			t.Fatalf("background sweep removed %d, want 1", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("no background sweep within a minute")
	}
	if err := c.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 1}, ExpiresAt: clk.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	clk.Advance(2 * time.Hour) // b and w expire while the file is closed
	db = open()
	defer db.Close()
	if _, err := db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-swept:
		if n != 2 {
			t.Fatalf("sweep at open removed %d, want 2", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("no sweep at open within a minute")
	}
}

// TestTimeRangeFilter checks TimeRange over each time, in Find and Query,
// and its JSON form.
func TestTimeRangeFilter(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	db := timeStore(t, "", clk, false)
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	t0 := clk.Now()
	for i := range 6 {
		it := cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}}
		if i%2 == 0 {
			it.ExpiresAt = t0.Add(time.Duration(100+i) * time.Hour)
		}
		if err := c.Add(ctx, it); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour) // item i created at t0 + i h
	}
	if err := c.Upsert(ctx, cairn.Item{ID: "1", Embedding: []float32{1, 1}}); err != nil { // updated at t0 + 6h
		t.Fatal(err)
	}
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	cases := []struct {
		f    *cairn.Filter
		json string
		want []string
	}{
		{cairn.TimeRange(cairn.Created, h(1), h(3)), `{"$created":{"$gte":"2026-03-01T13:00:00Z","$lt":"2026-03-01T15:00:00Z"}}`, []string{"1", "2"}},
		{cairn.TimeRange(cairn.Created, h(4), time.Time{}), `{"$created":{"$gte":"2026-03-01T17:00:00+01:00"}}`, []string{"4", "5"}},
		{cairn.TimeRange(cairn.Created, time.Time{}, h(1)), `{"$created":{"$lt":"2026-03-01T13:00:00Z"}}`, []string{"0"}},
		{cairn.TimeRange(cairn.Updated, h(6), time.Time{}), `{"$updated":{"$gte":"2026-03-01T18:00:00Z"}}`, []string{"1"}},
		{cairn.TimeRange(cairn.Expires, time.Time{}, time.Time{}), `{"$expires":{}}`, []string{"0", "2", "4"}},
		{cairn.TimeRange(cairn.Expires, h(101), h(104)), `{"$expires":{"$gte":"2026-03-05T17:00:00Z","$lt":"2026-03-05T20:00:00Z"}}`, []string{"2"}},
		{cairn.TimeRange(cairn.Created, h(2), h(2)), `{"$created":{"$gte":"2026-03-01T14:00:00Z","$lt":"2026-03-01T14:00:00Z"}}`, nil},
		{cairn.And(cairn.TimeRange(cairn.Created, h(1), time.Time{}), cairn.Not(cairn.TimeRange(cairn.Expires, time.Time{}, time.Time{}))),
			`{"$and":[{"$created":{"$gte":"2026-03-01T13:00:00Z"}},{"$not":{"$expires":{}}}]}`, []string{"1", "3", "5"}},
	}
	for _, tc := range cases {
		parsed, err := cairn.ParseFilter([]byte(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if parsed.String() != tc.f.String() {
			t.Fatalf("%s parses to %v, want %v", tc.json, parsed, tc.f)
		}
		for _, f := range []*cairn.Filter{tc.f, parsed} {
			found, err := c.Find(ctx, f, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range found {
				got = append(got, it.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Find(%v) = %v, want %v", f, got, tc.want)
			}
			rs, err := c.Query(ctx, []float32{1, 0}, 10, &cairn.QueryOptions{Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			if r := ids(rs); len(r) != len(tc.want) {
				t.Fatalf("Query(%v) = %v, want %v", f, r, tc.want)
			}
		}
	}
}

// TestTimeBadInput checks that bad times, TTLs and time ranges are typed
// errors that change nothing.
func TestTimeBadInput(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	db := timeStore(t, filepath.Join(t.TempDir(), "t.db"), clk, false)
	if _, err := db.CreateCollection(ctx, "neg", cairn.CollectionConfig{Dim: 2, TTL: -time.Second}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("negative TTL: %v, want ErrInvalidOptions", err)
	}
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	if err := c.Add(ctx, cairn.Item{ID: "keep", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	now := clk.Now()
	for name, it := range map[string]cairn.Item{
		"ExpiresAt in the past":   {ExpiresAt: now.Add(-time.Second)},
		"ExpiresAt now":           {ExpiresAt: now},
		"UpdatedAt before create": {CreatedAt: now, UpdatedAt: now.Add(-time.Hour)},
		"CreatedAt in the future": {CreatedAt: now.Add(time.Hour)},
		"year 3000":               {ExpiresAt: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		it.ID, it.Embedding = "bad", []float32{0, 1}
		for _, write := range []func(context.Context, ...cairn.Item) error{c.Add, c.Upsert} {
			err := write(ctx, cairn.Item{ID: "ok", Embedding: []float32{1, 1}}, it)
			if !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("%s: %v, want ErrInvalidOptions", name, err)
			}
		}
		it.ID = "keep"
		if err := c.Upsert(ctx, it); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("%s: an Upsert of a stored item: %v, want ErrInvalidOptions", name, err)
		}
	}
	if n := cairn.MustCount(t, c); n != 1 {
		t.Fatalf("Count %d after refused writes, want 1", n)
	}
	if k := getOne(t, c, "keep"); k.Embedding[0] != 1 || !k.ExpiresAt.IsZero() {
		t.Fatalf("stored item changed: %+v", k)
	}
	bad := []*cairn.Filter{
		cairn.TimeRange(cairn.Created, now, now.Add(-time.Nanosecond)),
		cairn.TimeRange(cairn.TimeField(9), time.Time{}, time.Time{}),
		cairn.And(cairn.Eq("a", 1), cairn.TimeRange(cairn.Updated, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{})),
	}
	for _, f := range bad {
		if _, err := c.Find(ctx, f, 0); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("Find(%v): %v, want ErrInvalidOptions", f, err)
		}
		if _, err := c.Query(ctx, []float32{1, 0}, 1, &cairn.QueryOptions{Filter: f}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("Query(%v): %v, want ErrInvalidOptions", f, err)
		}
		if _, err := c.DeleteWhere(ctx, f); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("DeleteWhere(%v): %v, want ErrInvalidOptions", f, err)
		}
	}
	for _, js := range []string{
		`{"$created":{"$gte":"2026-03-02T00:00:00Z","$lt":"2026-03-01T00:00:00Z"}}`,
		`{"$created":{"$gt":"2026-03-02T00:00:00Z"}}`,
		`{"$created":{"$gte":1}}`,
		`{"$created":{"$gte":"yesterday"}}`,
		`{"$created":"2026-03-02T00:00:00Z"}`,
		`{"$created":{"$gte":"0001-01-01T00:00:00Z"}}`,
		`{"$expires":{"$lt":"9999-01-01T00:00:00Z"}}`,
		`{"$touched":{}}`,
	} {
		if _, err := cairn.ParseFilter([]byte(js)); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("ParseFilter(%s): %v, want ErrInvalidOptions", js, err)
		}
	}
}

// TestSweepDuringQueriesAndWrites runs sweeps beside queries and writes
// (for the race detector) and checks that no query returns an item
// expired at its start.
func TestSweepDuringQueriesAndWrites(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	db := timeStore(t, "", clk, false)
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 4, Index: cairn.HNSW})
	const n = 2000
	items := make([]cairn.Item, n)
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i % 17), float32(i % 5), 1}, Text: "word"}
		if i%4 != 0 {
			items[i].ExpiresAt = clk.Now().Add(time.Duration(1+i%3) * time.Minute)
		}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	var g sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		cairn.QueryUnexpiredUntil(t, &g, stop, clk, func() ([]cairn.Result, error) {
			return c.Query(ctx, nil, 20, &cairn.QueryOptions{Mode: cairn.KeywordMode, Keywords: "word"})
		})
	}
	g.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Upsert(ctx, cairn.Item{ID: fmt.Sprint(i % n), Embedding: []float32{0, 1, 1, 1}, Text: "word"}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	total := 0
	for range 3 {
		clk.Advance(time.Minute)
		removed, err := c.RemoveExpired(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total += removed
	}
	close(stop)
	g.Wait()
	if total == 0 {
		t.Fatal("the sweeps removed nothing")
	}
	found, err := c.Find(ctx, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range found {
		if !it.ExpiresAt.IsZero() {
			t.Fatalf("%q, expiring at %v, survived the sweeps", it.ID, it.ExpiresAt)
		}
	}
	if cnt := cairn.MustCount(t, c); cnt != len(found) {
		t.Fatalf("Count %d, Find %d", cnt, len(found))
	}
}

// TestOpenSchemaV1File opens sqlitestore/testdata/schema-v1.db, a file
// of the build before item times: its items read back with no times, an
// Upsert gives one its first CreatedAt, and a new item keeps its times.
func TestOpenSchemaV1File(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("sqlitestore", "testdata", "schema-v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	clk := cairn.NewFakeClock()
	db := timeStore(t, path, clk, false)
	c, err := db.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	a := getOne(t, c, "a")
	if a.Text != "the user likes Go" || a.Metadata["topic"] != "go" || !a.CreatedAt.IsZero() || !a.UpdatedAt.IsZero() {
		t.Fatalf("item of a version-1 file: %+v", a)
	}
	if err := c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0, 0, 0}, Text: "still Go"}); err != nil {
		t.Fatal(err)
	}
	if a := getOne(t, c, "a"); !a.CreatedAt.Equal(clk.Now()) || !a.UpdatedAt.Equal(clk.Now()) {
		t.Fatalf("upserted item of a version-1 file: times %v %v", a.CreatedAt, a.UpdatedAt)
	}
	if found, err := c.Find(ctx, cairn.TimeRange(cairn.Created, time.Time{}, time.Time{}), 0); err != nil || len(found) != 1 {
		t.Fatalf("items with a CreatedAt: %d, %v; want 1", len(found), err)
	}
}

// TestKeywordStatsCountOnlyTheSeen checks that BM25 counts only the items
// a read sees: once some items have expired, keyword scores equal those
// of a collection that never held them, before the sweep marks them, and
// in a read-only store, whose sweeper only marks them.
func TestKeywordStatsCountOnlyTheSeen(t *testing.T) {
	forEachStore(t, func(t *testing.T, path string) {
		ctx := context.Background()
		clk := cairn.NewFakeClock()
		db := timeStore(t, path, clk, false)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
		ref := mustCollection(t, timeStore(t, "", clk, false), "c", cairn.CollectionConfig{Dim: 2})
		words := []string{"agent", "memory", "vector", "kettle", "river", "stone", "tea"}
		for i := range 60 {
			var text []string
			for j := range 2 + i%5 {
				text = append(text, words[(i*7+j*j*3)%len(words)])
			}
			it := cairn.Item{ID: fmt.Sprint("k", i), Embedding: []float32{1, float32(i)}, Text: strings.Join(text, " ")}
			if i%3 == 0 {
				it.ExpiresAt = clk.Now().Add(time.Hour) // a third expire, most of them with "agent"
				it.Text += " agent agent"
			} else if err := ref.Add(ctx, it); err != nil {
				t.Fatal(err)
			}
			if err := c.Add(ctx, it); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(2 * time.Hour)
		same := func(t *testing.T, c *cairn.Collection, when string) {
			t.Helper()
			for _, q := range []string{"agent", "memory river", "agent tea stone", "kettle"} {
				for _, mode := range []cairn.QueryMode{cairn.KeywordMode, cairn.HybridMode} {
					var emb []float32
					if mode == cairn.HybridMode {
						emb = []float32{1, 3}
					}
					o := &cairn.QueryOptions{Mode: mode, Keywords: q}
					got, err := c.Query(ctx, emb, 60, o)
					if err != nil {
						t.Fatal(err)
					}
					want, err := ref.Query(ctx, emb, 60, o)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("%s, %v %q: %v, want %v", when, mode, q, ids(got), ids(want))
					}
					for i := range got {
						if got[i].ID != want[i].ID || got[i].KeywordScore != want[i].KeywordScore || got[i].Score != want[i].Score {
							t.Fatalf("%s, %v %q: result %d is %s (%v, %v), want %s (%v, %v)", when, mode, q, i,
								got[i].ID, got[i].KeywordScore, got[i].Score, want[i].ID, want[i].KeywordScore, want[i].Score)
						}
					}
				}
			}
		}
		same(t, c, "expired, not swept")
		if path == "" {
			return
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		ro, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		ro.SetClockForTest(clk.Now)
		marked := make(chan error, 1)
		ro.SetSweptHookForTest(func(_ string, _ int, err error) {
			select {
			case marked <- err:
			default:
			}
		})
		rc, err := ro.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if err := <-marked; err != nil {
			t.Fatalf("read-only sweep: %v", err)
		}
		same(t, rc, "read-only, marked")
	})
}
