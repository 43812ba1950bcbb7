package cairn_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// Integers beyond 2^53, which a float64 rounds, must stay themselves
// through metadata, filters (Go and JSON) and a file, reopened.
func TestExactIntegersThroughFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "exact.db")
	const big = int64(1) << 53
	ns := map[string]any{
		"a": big, "b": big + 1, "c": big + 3, "max": int64(math.MaxInt64), "min": int64(math.MinInt64),
		"f": 2.5, "u": uint64(big + 1),
	}
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	var items []cairn.Item
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for k := range ns {
			if !yield(k) {
				return
			}
		}
	}) {
		items = append(items, cairn.Item{ID: id, Embedding: []float32{1, 0}, Metadata: map[string]any{"n": ns[id]}})
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = cairn.Open(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	// Read back: each number is the same value; integers a float64 holds
	// come back as float64 (as before), the others as int64.
	want := map[string]any{
		"a": float64(big), "b": big + 1, "c": big + 3, "max": int64(math.MaxInt64), "min": float64(math.MinInt64),
		"f": 2.5, "u": big + 1,
	}
	got, err := c.Get(ctx, slices.Collect(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})...)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if v := it.Metadata["n"]; v != want[it.ID] {
			t.Errorf("%s: n = %v (%T), want %v (%T)", it.ID, v, v, want[it.ID], want[it.ID])
		}
	}
	query := func(f *cairn.Filter) []string {
		t.Helper()
		res, err := c.Query(ctx, []float32{1, 0}, 10, &cairn.QueryOptions{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range res {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		return ids
	}
	parse := func(s string) *cairn.Filter {
		t.Helper()
		f, err := cairn.ParseFilter([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		f    *cairn.Filter
		want []string
	}{
		{"Eq int64", cairn.Eq("n", big+1), []string{"b", "u"}},
		{"Eq float64 2^53", cairn.Eq("n", float64(big)), []string{"a"}},
		{"Eq uint64", cairn.Eq("n", uint64(big+1)), []string{"b", "u"}},
		{"In", cairn.In("n", big+3, int64(math.MaxInt64)), []string{"c", "max"}},
		{"Gt 2^53", cairn.Gt("n", big), []string{"b", "c", "max", "u"}},
		{"Lt 2^53+3", cairn.Lt("n", big+3), []string{"a", "b", "f", "min", "u"}},
		{"Lt float 2^63", cairn.Lt("n", math.Exp2(63)), []string{"a", "b", "c", "f", "max", "min", "u"}},
		{"Gte MaxInt64", cairn.Gte("n", int64(math.MaxInt64)), []string{"max"}},
		{"JSON eq", parse(`{"n": 9007199254740993}`), []string{"b", "u"}},
		{"JSON range", parse(`{"n": {"$gt": 9007199254740992, "$lte": 9007199254740995}}`), []string{"b", "c", "u"}},
		{"JSON $in", parse(`{"n": {"$in": [9223372036854775807, 9007199254740992]}}`), []string{"a", "max"}},
		{"JSON $ne", parse(`{"n": {"$ne": 9007199254740993}}`), []string{"a", "c", "f", "max", "min"}},
	} {
		if got := query(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %s matched %v, want %v", tc.name, tc.f, got, tc.want)
		}
	}
	// A filter's JSON form keeps the integer too.
	b, err := json.Marshal(cairn.Eq("n", big+1))
	if err != nil || string(b) != `{"n":{"$eq":9007199254740993}}` {
		t.Errorf("MarshalJSON = %s, %v", b, err)
	}
}

// What no int64 or float64 holds exactly is refused, not rounded.
func TestInexactIntegersRefused(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	item := func(id string, md map[string]any) cairn.Item {
		return cairn.Item{ID: id, Embedding: []float32{1, 0}, Metadata: md}
	}
	for _, v := range []any{uint64(math.MaxUint64), uint64(1)<<63 + 1, json.Number("9223372036854775809")} {
		if err := c.Add(ctx, item("x", map[string]any{"n": v})); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Add with n = %v: error = %v, want ErrInvalidOptions", v, err)
		}
	}
	if _, err := cairn.ParseFilter([]byte(`{"n": 18446744073709551615}`)); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("ParseFilter(2^64-1) error = %v, want ErrInvalidOptions", err)
	}
	// Beyond int64 but exactly a float64: kept, as that float64.
	if err := c.Add(ctx, item("big", map[string]any{"n": uint64(1) << 63, "j": json.Number("9223372036854775808")})); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if md := got[0].Metadata; md["n"] != math.Exp2(63) || md["j"] != math.Exp2(63) {
		t.Errorf("metadata 2^63 read back as %v", md)
	}
}
