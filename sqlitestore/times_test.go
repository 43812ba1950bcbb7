package sqlitestore

// This file tests that an item's times are stored as given: 0, the Unix
// epoch, and negative times are times, and only a time not Valid is none.

import (
	"context"
	"database/sql"
	"math"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestItemTimesEpoch stores items whose times are the epoch, negative,
// the least and largest int64 and none, and checks that they read back
// the same (Valid or not) through GetItem and ForEachItem, before and
// after a reopen, and that none is NULL in the file and the epoch is 0.
func TestItemTimesEpoch(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "c", 2, vector.Cosine)
	none := sql.NullInt64{}
	want := map[vector.ID][3]sql.NullInt64{
		1: {nanos(0), nanos(0), nanos(0)},
		2: {nanos(-1), nanos(1), none},
		3: {nanos(math.MinInt64 + 1), nanos(math.MaxInt64), nanos(-5)},
		4: {none, none, none},
	}
	var items []Item
	for id, w := range want {
		it := itemFor(id, 2)
		it.Created, it.Updated, it.Expires = w[0], w[1], w[2]
		items = append(items, it)
	}
	if err := c.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			it, err := c.GetItem(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := [3]sql.NullInt64{it.Created, it.Updated, it.Expires}; got != w {
				t.Fatalf("%s: GetItem(%d) times %v, want %v", when, id, got, w)
			}
		}
		n := 0
		if err := c.ForEachPayload(ctx, func(it Item) error {
			n++
			if got := [3]sql.NullInt64{it.Created, it.Updated, it.Expires}; got != want[it.ID] {
				t.Fatalf("%s: ForEachPayload item %d times %v, want %v", when, it.ID, got, want[it.ID])
			}
			return nil
		}); err != nil || n != len(want) {
			t.Fatalf("%s: ForEachPayload: %d items, %v", when, n, err)
		}
	}
	check("written")
	var nulls, zeros int
	if err := db.withConn(func(conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE created IS NULL), count(*) FILTER (WHERE created = 0) FROM "+c.table).Scan(&nulls, &zeros)
	}); err != nil || nulls != 1 || zeros != 1 {
		t.Fatalf("created NULL in %d rows and 0 in %d (%v), want 1 and 1", nulls, zeros, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	check("reopened")
}
