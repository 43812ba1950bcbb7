package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestHistoryKeepsPriors writes a key three times and deletes it, with
// priors, in a collection and in a tenant of it, and reads the states
// back, at each time, after a reopen and after trims.
func TestHistoryKeepsPriors(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	coll := mustCollection(t, db, "h", 4, vector.L2)
	ten, err := coll.CreateTenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	item := func(id vector.ID, text string) Item {
		it := itemFor(id, 4)
		it.Key, it.Text = "k", text
		return it
	}
	for _, c := range []*Collection{coll, ten} {
		if _, err := c.HistorySince(ctx); !errors.Is(err, vector.ErrNotFound) {
			t.Fatalf("HistorySince before StartHistory: %v", err)
		}
		if _, err := c.LastWrite(ctx); !errors.Is(err, vector.ErrNotFound) {
			t.Fatalf("LastWrite before StartHistory: %v", err)
		}
		if err := c.StartHistory(ctx, 5); err != nil {
			t.Fatal(err)
		}
		if err := c.StartHistory(ctx, 7); err != nil { // does not move it
			t.Fatal(err)
		}
		// t=10 create v1, t=20 replace by v2, t=30 by v3, t=40 delete.
		steps := []struct {
			items []Item
			drop  []vector.ID
			prior Prior
		}{
			{[]Item{item(1, "one")}, nil, Prior{Key: "k", Until: 10}},
			{[]Item{item(2, "two")}, []vector.ID{1}, Prior{Key: "k", Was: 1, Until: 20}},
			{[]Item{item(3, "three")}, []vector.ID{2}, Prior{Key: "k", Was: 2, Until: 30}},
			{nil, []vector.ID{3}, Prior{Key: "k", Was: 3, Until: 40}},
		}
		for _, s := range steps {
			if err := c.WriteItemsKeeping(ctx, s.items, s.drop, []Prior{s.prior}); err != nil {
				t.Fatal(err)
			}
			c.Evict(s.drop)
		}
		if err := c.WriteItemsKeeping(ctx, nil, nil, []Prior{{Key: "x", Was: 9, Until: 50}}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("a prior not in drop: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	coll, err = db.Collection(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if ten, err = coll.Tenant(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Collection{coll, ten} {
		if since, err := c.HistorySince(ctx); err != nil || since != 5 {
			t.Fatalf("HistorySince = %d, %v; want 5", since, err)
		}
		if last, err := c.LastWrite(ctx); err != nil || last != 40 {
			t.Fatalf("LastWrite = %d, %v; want 40", last, err)
		}
		h, err := c.History(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			until int64
			text  string
			id    vector.ID
		}{{10, "", 0}, {20, "one", 1}, {30, "two", 2}, {40, "three", 3}}
		if len(h) != len(want) {
			t.Fatalf("History: %d states, want %d", len(h), len(want))
		}
		for i, w := range want {
			if h[i].Until != w.until || h[i].Item.Text != w.text || h[i].Item.ID != w.id || h[i].Held() != (w.id != 0) {
				t.Fatalf("state %d = %+v, want %+v", i, h[i], w)
			}
			if w.id != 0 && !vecEqual(h[i].Item.Vector, vecFor(w.id, 4)) {
				t.Fatalf("state %d: vector not as written", i)
			}
		}
		at := func(t0 int64) (Past, int) {
			var ps []Past
			if err := c.StatesAt(ctx, t0, func(p Past) error { ps = append(ps, p); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(ps) == 0 {
				return Past{}, 0
			}
			return ps[0], len(ps)
		}
		for _, tc := range []struct {
			t    int64
			text string
			n    int
		}{{0, "", 1}, {10, "one", 1}, {19, "one", 1}, {20, "two", 1}, {35, "three", 1}, {40, "", 0}} {
			p, n := at(tc.t)
			if n != tc.n || p.Item.Text != tc.text {
				t.Fatalf("state at %d = %q (%d keys), want %q (%d)", tc.t, p.Item.Text, n, tc.text, tc.n)
			}
		}
	}
	// Trim the collection's by count, the tenant's by age.
	if n, err := coll.TrimHistory(ctx, math.MinInt64, 2); err != nil || n != 2 {
		t.Fatalf("TrimHistory by count = %d, %v; want 2", n, err)
	}
	if since, _ := coll.HistorySince(ctx); since != 20 {
		t.Fatalf("since after trim = %d, want 20", since)
	}
	if n, err := ten.TrimHistory(ctx, 31, 0); err != nil || n != 3 {
		t.Fatalf("TrimHistory by age = %d, %v; want 3", n, err)
	}
	if since, _ := ten.HistorySince(ctx); since != 30 {
		t.Fatalf("tenant's since after trim = %d, want 30", since)
	}
	if h, _ := ten.History(ctx, "k"); len(h) != 1 || h[0].Until != 40 {
		t.Fatalf("tenant's history after trim: %+v", h)
	}
	// The latest write is remembered when its state is trimmed too.
	if n, err := ten.TrimHistory(ctx, 41, 0); err != nil || n != 1 {
		t.Fatalf("TrimHistory of all = %d, %v; want 1", n, err)
	}
	for _, c := range []*Collection{coll, ten} {
		if last, err := c.LastWrite(ctx); err != nil || last != 40 {
			t.Fatalf("LastWrite after trims = %d, %v; want 40", last, err)
		}
	}
	if err := coll.DropTenant(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if ten, err = coll.CreateTenant(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if h, _ := ten.History(ctx, "k"); len(h) != 0 {
		t.Fatalf("a dropped tenant's history outlived it: %d states", len(h))
	}
	if err := db.DropCollection(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	coll = mustCollection(t, db, "h", 4, vector.L2)
	if h, _ := coll.History(ctx, "k"); len(h) != 0 {
		t.Fatalf("a dropped collection's history outlived it: %d states", len(h))
	}
	if _, err := coll.HistorySince(ctx); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("a dropped collection's history start outlived it: %v", err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

func vecEqual(a, b vector.Vector) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestForEachPast reads every kept state of a collection and of its
// tenant, over more than a page and with times that tie, by time and each
// once, only where it was kept.
func TestForEachPast(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
	coll := mustCollection(t, db, "h", 4, vector.L2)
	ten, err := coll.CreateTenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	n := 2*forEachPage + 10
	for i := range n {
		it := itemFor(vector.ID(i+1), 4)
		it.Key = fmt.Sprint("k", i)
		// Times out of the order written, three to a time.
		if err := coll.WriteItemsKeeping(ctx, []Item{it}, nil, []Prior{{Key: it.Key, Until: int64((i * 7919 % n) / 3)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ten.WriteItemsKeeping(ctx, nil, nil, []Prior{{Key: "t", Until: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		c    *Collection
		want int
	}{{coll, n}, {ten, 1}} {
		var got []Past
		err := c.c.ForEachPast(ctx, func(p Past) error {
			got = append(got, p)
			return nil
		})
		if err != nil || len(got) != c.want {
			t.Fatalf("ForEachPast: %d states, %v; want %d", len(got), err, c.want)
		}
		seen := map[string]bool{}
		for i, p := range got {
			if seen[p.Item.Key] || i > 0 && p.Until < got[i-1].Until {
				t.Fatalf("state %d (%q, until %d): repeated or out of order", i, p.Item.Key, p.Until)
			}
			seen[p.Item.Key] = true
		}
	}
}
