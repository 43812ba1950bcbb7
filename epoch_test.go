package cairn_test

// This file tests that the Unix epoch, and times before it, are times
// like any other: only the zero time.Time means "not given".

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// TestEpochTimesKept writes items whose times are the epoch, a
// nanosecond either side of it, 1920 and the earliest time the store
// holds, and checks that Get, Find by a range around the epoch (as a
// filter and as JSON), an Upsert and a reopen of the file keep each to the
// nanosecond; that an ExpiresAt at the epoch is a time in the past, not
// "never"; and that a time outside the years 1678 to 2262 is refused.
func TestEpochTimesKept(t *testing.T) {
	forEachStore(t, func(t *testing.T, path string) {
		ctx := context.Background()
		clk := cairn.NewFakeClock()
		db := timeStore(t, path, clk, false)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
		epoch := time.Unix(0, 0).UTC()
		ns := func(n int64) time.Time { return time.Unix(0, n).UTC() }
		want := map[string][2]time.Time{ // CreatedAt, UpdatedAt
			"epoch":    {epoch, epoch},
			"before":   {ns(-1), ns(-1)},
			"after":    {ns(1), ns(1)},
			"span":     {ns(-1), ns(1)},
			"1920":     {time.Date(1920, 5, 6, 7, 8, 9, 10, time.UTC), epoch},
			"earliest": {ns(math.MinInt64 + 1), ns(math.MinInt64 + 1)},
		}
		var items []cairn.Item
		for id, w := range want {
			items = append(items, cairn.Item{ID: id, Embedding: []float32{1, 0}, CreatedAt: w[0], UpdatedAt: w[1]})
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			for id, w := range want {
				it := getOne(t, c, id)
				if !it.CreatedAt.Equal(w[0]) || !it.UpdatedAt.Equal(w[1]) || !it.ExpiresAt.IsZero() {
					t.Fatalf("%s: %q has times %v %v %v, want %v %v and none", when, id, it.CreatedAt, it.UpdatedAt, it.ExpiresAt, w[0], w[1])
				}
			}
			ranges := []struct {
				f    *cairn.Filter
				want []string
			}{
				{cairn.TimeRange(cairn.Created, ns(-1), ns(1)), []string{"before", "epoch", "span"}},
				{cairn.TimeRange(cairn.Created, epoch, ns(2)), []string{"after", "epoch"}},
				{cairn.TimeRange(cairn.Updated, epoch, ns(1)), []string{"1920", "epoch"}},
				{cairn.TimeRange(cairn.Updated, time.Time{}, epoch), []string{"before", "earliest"}},
				{cairn.TimeRange(cairn.Created, time.Time{}, ns(-1)), []string{"1920", "earliest"}},
				{cairn.TimeRange(cairn.Expires, time.Time{}, time.Time{}), nil},
			}
			js, err := cairn.ParseFilter([]byte(`{"$created":{"$gte":"1969-12-31T23:59:59.999999999Z","$lt":"1970-01-01T00:00:00.000000001Z"}}`))
			if err != nil {
				t.Fatal(err)
			}
			ranges = append(ranges, struct {
				f    *cairn.Filter
				want []string
			}{js, []string{"before", "epoch", "span"}})
			for _, r := range ranges {
				found, err := c.Find(ctx, r.f, 0)
				if err != nil {
					t.Fatalf("%s: Find(%v): %v", when, r.f, err)
				}
				var got []string
				for _, it := range found {
					got = append(got, it.ID)
				}
				slices.Sort(got)
				if !slices.Equal(got, r.want) {
					t.Fatalf("%s: Find(%v) = %v, want %v", when, r.f, got, r.want)
				}
			}
		}
		check("written")

		// An Upsert keeps an epoch CreatedAt and moves UpdatedAt.
		if err := c.Upsert(ctx, cairn.Item{ID: "epoch", Embedding: []float32{0, 1}}); err != nil {
			t.Fatal(err)
		}
		if it := getOne(t, c, "epoch"); !it.CreatedAt.Equal(epoch) || !it.UpdatedAt.Equal(clk.Now()) {
			t.Fatalf("after Upsert: times %v %v, want %v %v", it.CreatedAt, it.UpdatedAt, epoch, clk.Now())
		}
		if err := c.Upsert(ctx, cairn.Item{ID: "epoch", Embedding: []float32{1, 0}, CreatedAt: epoch, UpdatedAt: epoch}); err != nil {
			t.Fatal(err)
		}
		check("upserted back")

		// An ExpiresAt at the epoch is in the past: refused, not taken for
		// "never".
		if err := c.Add(ctx, cairn.Item{ID: "expired", Embedding: []float32{1, 0}, ExpiresAt: epoch}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("Add with ExpiresAt at the epoch: %v, want ErrInvalidOptions", err)
		}
		for name, bad := range map[string]time.Time{
			"1600":                  time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
			"the least int64 ns":    ns(math.MinInt64),
			"after the largest ns":  ns(math.MaxInt64).Add(time.Nanosecond),
			"1677-09-21, before it": time.Date(1677, 9, 21, 0, 0, 0, 0, time.UTC),
		} {
			if err := c.Add(ctx, cairn.Item{ID: "bad", Embedding: []float32{1, 0}, CreatedAt: bad, UpdatedAt: clk.Now()}); !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("CreatedAt %s: %v, want ErrInvalidOptions", name, err)
			}
		}
		if n := cairn.MustCount(t, c); n != len(want) {
			t.Fatalf("Count %d, want %d", n, len(want))
		}

		if path == "" {
			return
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = timeStore(t, path, clk, false)
		var err error
		if c, err = db.Collection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		check("reopened")
	})
}

// TestEpochExpiresAt checks that an item of a collection with a TTL
// written on a clock at the epoch expires a TTL later, and that one whose
// ExpiresAt is the epoch, written just before, expires at it.
func TestEpochExpiresAt(t *testing.T) {
	forEachStore(t, func(t *testing.T, path string) {
		ctx := context.Background()
		clk := cairn.NewFakeClock()
		clk.Advance(time.Unix(0, -1).Sub(clk.Now())) // one nanosecond before the epoch
		db := timeStore(t, path, clk, false)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
		epoch := time.Unix(0, 0).UTC()
		if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, ExpiresAt: epoch}); err != nil {
			t.Fatal(err)
		}
		if it := getOne(t, c, "a"); !it.ExpiresAt.Equal(epoch) {
			t.Fatalf("ExpiresAt %v, want the epoch", it.ExpiresAt)
		}
		if found, err := c.Find(ctx, cairn.TimeRange(cairn.Expires, epoch, time.Unix(0, 1)), 0); err != nil || len(found) != 1 {
			t.Fatalf("Find by ExpiresAt at the epoch: %v, %v; want a", found, err)
		}
		clk.Advance(time.Nanosecond)
		if _, err := c.Get(ctx, "a"); !errors.Is(err, vector.ErrNotFound) {
			t.Fatalf("Get at the epoch of an item expiring then: %v, want ErrNotFound", err)
		}
		if n := cairn.MustCount(t, c); n != 0 {
			t.Fatalf("Count %d at the epoch, want 0", n)
		}
	})
}
