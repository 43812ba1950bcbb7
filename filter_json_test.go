package cairn_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

func TestParseFilter(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"kind": "fact"}`, `kind = "fact"`},
		{`{"n": 3}`, `n = 3`},
		{`{"ok": true}`, `ok = true`},
		{`{"year": {"$gte": 2020, "$lt": 2025}}`, `(year >= 2020 and year < 2025)`},
		{`{"tag": {"$in": ["a", "b"]}}`, `tag in ["a", "b"]`},
		{`{"tag": {"$nin": ["a"]}}`, `not tag in ["a"]`},
		{`{"tag": {"$ne": "a"}}`, `tag != "a"`},
		{`{"$or": [{"kind": "fact"}, {"pinned": true}]}`, `(kind = "fact" or pinned = true)`},
		{`{"$and": []}`, `and()`},
		{`{"$not": {"a": 1}}`, `not a = 1`},
		{`{"a": 1, "b": {"$lte": 2}}`, `(a = 1 and b <= 2)`},
	}
	for _, c := range cases {
		f, err := cairn.ParseFilter([]byte(c.in))
		if err != nil {
			t.Errorf("ParseFilter(%s): %v", c.in, err)
			continue
		}
		if got := f.String(); got != c.want {
			t.Errorf("ParseFilter(%s) = %s, want %s", c.in, got, c.want)
		}
		// The canonical form parses back to the same filter.
		out, err := json.Marshal(f)
		if err != nil {
			t.Errorf("Marshal(%s): %v", c.want, err)
			continue
		}
		g, err := cairn.ParseFilter(out)
		if err != nil || g.String() != c.want {
			t.Errorf("round trip of %s through %s = %v, %v", c.in, out, g, err)
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	bad := []string{
		``, `null`, `[]`, `"a"`, `{}`, `{"a": null}`, `{"a": [1]}`, `{"a": {}}`,
		`{"a": {"$regex": "x"}}`, `{"$nor": []}`, `{"$and": {}}`, `{"$and": null}`,
		`{"a": {"$in": "x"}}`, `{"a": {"$in": [null]}}`, `{"a": {"$eq": {"b": 1}}}`,
		`{"a": 1, "a": 2}`, `{"a": 1} {"b": 2}`, `{"": 1}`, `{"a": 1e999}`,
		"{\"a\xff\": 1}", `{"$not": []}`, `{"a": 1`,
	}
	for _, in := range bad {
		if f, err := cairn.ParseFilter([]byte(in)); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("ParseFilter(%q) = %v, %v; want ErrInvalidOptions", in, f, err)
		}
	}
	deep := ""
	for range 100 {
		deep += `{"$not":`
	}
	deep += `{"a":1}`
	for range 100 {
		deep += `}`
	}
	if _, err := cairn.ParseFilter([]byte(deep)); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("a filter nested 100 deep: %v, want ErrInvalidOptions", err)
	}
	if _, err := json.Marshal(&cairn.Filter{}); err == nil {
		t.Error("Marshal of the zero Filter succeeded")
	}
}

// TestFilterJSONField checks that a Filter decodes as a field of a larger
// document, as tools receive it.
func TestFilterJSONField(t *testing.T) {
	var req struct {
		Filter *cairn.Filter `json:"filter"`
	}
	if err := json.Unmarshal([]byte(`{"filter": {"kind": {"$in": ["a", 2, false]}}}`), &req); err != nil {
		t.Fatal(err)
	}
	if got, want := req.Filter.String(), `kind in ["a", 2, false]`; got != want {
		t.Fatalf("filter = %s, want %s", got, want)
	}
}

// FuzzParseFilter: any input either parses to a filter whose canonical
// JSON parses back to the same filter, or fails with ErrInvalidOptions.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"$or":[{"a":"x"},{"b":{"$gte":2}}]}`, `{"t":{"$nin":[true,1,"s"]}}`, `{"$not":{"a":{"$ne":0}}}`,
		`{"$created":{"$gte":"2026-01-01T00:00:00Z","$lt":"2026-02-01T00:00:00.5+02:00"}}`, `{"$expires":{}}`, `{"$updated":{"$lt":"2030-01-01T00:00:00Z"},"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		flt, err := cairn.ParseFilter(data)
		if err != nil {
			if !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("error %v does not wrap ErrInvalidOptions", err)
			}
			return
		}
		out, err := json.Marshal(flt)
		if err != nil {
			t.Fatalf("Marshal(%s): %v", flt, err)
		}
		back, err := cairn.ParseFilter(out)
		if err != nil {
			t.Fatalf("canonical form %s does not parse: %v", out, err)
		}
		if back.String() != flt.String() {
			t.Fatalf("round trip %s -> %s -> %s", flt, out, back)
		}
	})
}

// TestFilterOf reads a filter in each form a framework hands one over.
func TestFilterOf(t *testing.T) {
	f := cairn.Eq("kind", "fact")
	for _, v := range []any{f, map[string]any{"kind": "fact"}, `{"kind":"fact"}`, []byte(`{"kind":"fact"}`), json.RawMessage(`{"kind":"fact"}`)} {
		got, err := cairn.FilterOf(v)
		if err != nil || got == nil || got.String() != f.String() {
			t.Errorf("FilterOf(%#v) = %v, %v; want %v", v, got, err, f)
		}
	}
	for _, v := range []any{nil, (*cairn.Filter)(nil), map[string]any{}, "", "  ", "null", "{}", []byte(" {} "), json.RawMessage(nil)} {
		if got, err := cairn.FilterOf(v); got != nil || err != nil {
			t.Errorf("FilterOf(%#v) = %v, %v; want no filter", v, got, err)
		}
	}
	if _, err := cairn.FilterOf([]string{"a"}); !errors.Is(err, cairn.ErrFilterType) || !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("FilterOf of a []string: %v, want ErrFilterType", err)
	}
	if _, err := cairn.FilterOf(`{"n":{"$nope":1}}`); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("FilterOf of a bad filter: %v, want ErrInvalidOptions", err)
	}
}

// TestFilterOfFloat32: a float32 in a filter map means the number
// metadata stores for it, so a filter finds the value it was given as
// metadata, as Eq does; JSON alone would write float32(0.1) as 0.1.
func TestFilterOfFloat32(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}, Metadata: map[string]any{"f": float32(0.1)}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		map[string]any{"f": float32(0.1)},
		map[string]any{"f": map[string]any{"$lte": float32(0.1)}},
		map[string]any{"f": map[string]any{"$in": []any{float32(0.1)}}},
		map[string]any{"f": map[string]any{"$in": []float32{0.1}}},
		map[string]any{"$or": []any{map[string]any{"f": float32(0.1)}}},
	} {
		f, err := cairn.FilterOf(v)
		if err != nil {
			t.Fatalf("FilterOf(%v): %v", v, err)
		}
		res, err := c.Query(ctx, []float32{1, 0}, 1, &cairn.QueryOptions{Filter: f})
		if err != nil || len(res) != 1 {
			t.Errorf("filter %v found %v, %v; want the item", v, res, err)
		}
	}
	// The caller's map is left as it was.
	m := map[string]any{"f": float32(0.1)}
	if _, err := cairn.FilterOf(m); err != nil || m["f"] != float32(0.1) {
		t.Errorf("FilterOf changed its map: %v, %v", m, err)
	}
	// A map that holds itself is refused, not followed forever.
	loop := map[string]any{}
	loop["$and"] = []any{loop}
	if _, err := cairn.FilterOf(loop); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("FilterOf of a map that holds itself = %v, want ErrInvalidOptions", err)
	}
}
