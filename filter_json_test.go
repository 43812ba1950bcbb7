package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"unicode/utf8"

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
	for _, m := range []map[string]any{{"k": "\xff"}, {"\xff": "v"}, {"k": map[string]any{"$in": []string{"a", "b\xfe"}}},
		{"$or": []any{map[string]any{"k": map[string]any{"$ne": "\xc3"}}}}, {"k": map[string]string{"$eq": "\xff"}}} {
		// JSON would read them as U+FFFD: another filter than asked for.
		if got, err := cairn.FilterOf(m); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("FilterOf(%q) = %v, %v; want an error wrapping ErrInvalidOptions", m, got, err)
		}
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

// FuzzFilterOf checks that FilterOf reads a filter the same from its JSON
// text and from the map a framework decodes it into (numbers kept as
// written): both fail with ErrInvalidOptions, or both give one filter.
func FuzzFilterOf(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"$or":[{"a":"x"},{"b":{"$gte":2}}]}`, `{"t":{"$nin":[true,1,"s"]}}`, `{"$not":{"a":{"$ne":0}}}`,
		`{"$created":{"$gte":"2026-01-01T00:00:00Z"}}`, `{"n":9007199254740993}`, `{"a":"<&>"}`, `{"a":2,"b":1}`, `{"b":1,"a":2}`, `{}`, `null`, `{"a":null}`,
		`{"a":{"$in":[]}}`, `{"$and":[]}`, `{"a":1.0}`, `{"a":1e2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fromText, terr := cairn.FilterOf(doc)
		if terr != nil && !errors.Is(terr, vector.ErrInvalidOptions) {
			t.Fatalf("FilterOf(%q): error %v does not wrap ErrInvalidOptions", doc, terr)
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if !utf8.Valid(doc) || dec.Decode(&m) != nil || m == nil || unsortedKeys(doc) {
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			return // more after the object
		}
		fromMap, merr := cairn.FilterOf(m)
		if merr != nil && !errors.Is(merr, vector.ErrInvalidOptions) {
			t.Fatalf("FilterOf(%v): error %v does not wrap ErrInvalidOptions", m, merr)
		}
		if (terr == nil) != (merr == nil) {
			t.Fatalf("FilterOf of %q: %v, %v as text; %v, %v as a map", doc, fromText, terr, fromMap, merr)
		}
		if terr == nil && fromText.String() != fromMap.String() {
			t.Fatalf("FilterOf of %q: %v as text, %v as a map", doc, fromText, fromMap)
		}
	})
}

// unsortedKeys reports whether an object in doc, valid JSON, names its
// keys out of order or one twice: a map keeps one of two, and
// json.Marshal writes them sorted, and the order of the conditions of an
// object is that of its keys.
func unsortedKeys(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		keys map[string]bool // nil for an array
		last string          // the last key
		key  bool            // the next token of the object is a key
	}
	var stack []*frame
	valueDone := func() { // a value ended: its object's next token is a key
		if len(stack) > 0 && stack[len(stack)-1].keys != nil {
			stack[len(stack)-1].key = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil && stack[n-1].key {
			if k, ok := tok.(string); ok {
				if len(stack[n-1].keys) > 0 && k <= stack[n-1].last {
					return true
				}
				stack[n-1].keys[k], stack[n-1].last, stack[n-1].key = true, k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// A filter's JSON, from MarshalJSON or through FilterOf, reads back as a
// filter that matches what the filter matched. encoding/json wrote 2^60
// as 1152921504606847000 (another integer), 2^63 as 9223372036854776000
// (refused by ParseFilter, no float64 holds it) and float32 0.1 as 0.1,
// which is not the 0.10000000149011612 metadata holds for it; and a key
// not valid UTF-8 as U+FFFD, another key.
func TestFilterJSONNumbers(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	const two60, two63 = float64(1 << 60), float64(1 << 63)
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0},
		Metadata: map[string]any{"n": two60, "u": two63, "m": -two63, "x": float32(0.1)}}); err != nil {
		t.Fatal(err)
	}
	matchesOne := func(what string, f *cairn.Filter) {
		t.Helper()
		if got, err := c.Find(ctx, f, 0); err != nil || len(got) != 1 {
			t.Errorf("%s: %s matches %d items (%v), want 1", what, f, len(got), err)
		}
	}
	for _, f := range []*cairn.Filter{
		cairn.Eq("n", two60), cairn.Gte("n", int64(1<<60)), cairn.In("n", 1, two60),
		cairn.Eq("u", two63), cairn.Lte("u", uint64(1<<63)), cairn.In("u", two63), cairn.Eq("m", -two63),
		cairn.Eq("x", float32(0.1)), cairn.In("x", float32(0.1)), cairn.Gte("x", float32(0.1)),
	} {
		out, err := json.Marshal(f)
		if err != nil {
			t.Fatalf("Marshal(%s): %v", f, err)
		}
		back, err := cairn.ParseFilter(out)
		if err != nil {
			t.Errorf("Marshal(%s) = %s, which ParseFilter refuses: %v", f, out, err)
			continue
		}
		matchesOne("read back from "+string(out), back)
	}
	for _, m := range []map[string]any{
		{"n": two60}, {"u": two63}, {"m": map[string]any{"$in": []any{-two63}}}, {"x": float32(0.1)},
	} {
		f, err := cairn.FilterOf(m)
		if err != nil {
			t.Errorf("FilterOf(%v): %v", m, err)
			continue
		}
		matchesOne(fmt.Sprintf("FilterOf(%v)", m), f)
	}
	if out, err := json.Marshal(cairn.Eq("k\xff", "v")); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Marshal of a key that is not UTF-8 = %s, %v; want an error wrapping ErrInvalidOptions", out, err)
	}
}

// TestFilterMarshalRoundTrip: what MarshalJSON writes, ParseFilter reads
// back as the same filter, or MarshalJSON refuses it.
func TestFilterMarshalRoundTrip(t *testing.T) {
	for _, f := range []*cairn.Filter{cairn.In("k"), cairn.Not(cairn.In("k")), cairn.Or(cairn.In("k"), cairn.Eq("a", 1))} {
		out, err := json.Marshal(f)
		if err != nil {
			t.Fatalf("Marshal(%s): %v", f, err)
		}
		back, err := cairn.ParseFilter(out)
		if err != nil {
			t.Fatalf("Marshal(%s) = %s, which does not parse: %v", f, out, err)
		}
		if back.String() != f.String() {
			t.Errorf("round trip %s -> %s -> %s", f, out, back)
		}
	}
	for _, f := range []*cairn.Filter{cairn.Eq("$created", 1), cairn.In("$or", "a"), cairn.Not(cairn.Gte("$x", 2))} {
		if out, err := json.Marshal(f); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Marshal(%s) = %s, %v; want an error wrapping ErrInvalidOptions", f, out, err)
		}
	}
}
