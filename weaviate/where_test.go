package weaviate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// types of the collection the translation tests assume.
var testTypes = typeOf(func(k string) (string, bool) {
	t, ok := map[string]string{"kind": typeText, "year": typeNumber, "pinned": typeBool}[k]
	return t, ok
})

func gql(c cond) string {
	if c.w == nil {
		if c.val {
			return "TRUE"
		}
		return "FALSE"
	}
	return c.w.gql()
}

func TestTranslate(t *testing.T) {
	cases := []struct {
		f    *cairn.Filter
		want string
	}{
		{cairn.Eq("kind", "fact"), `{operator: Equal, path: ["m_kind"], valueText: "fact"}`},
		{cairn.Eq("year", 2020), `{operator: Equal, path: ["m_year"], valueNumber: 2020}`},
		{cairn.Eq("pinned", true), `{operator: Equal, path: ["m_pinned"], valueBoolean: true}`},
		{cairn.Eq("year", "2020"), `FALSE`}, // a string never equals a number
		{cairn.Eq("missing", 1), `FALSE`},
		{cairn.Ne("missing", 1), `TRUE`},
		{cairn.Ne("kind", "fact"), `{operator: Not, operands: [{operator: Equal, path: ["m_kind"], valueText: "fact"}]}`},
		{cairn.In("kind", "a", 3, "b"), `{operator: Or, operands: [{operator: Equal, path: ["m_kind"], valueText: "a"}, {operator: Equal, path: ["m_kind"], valueText: "b"}]}`},
		{cairn.In("kind"), `FALSE`},
		{cairn.Gte("year", 2021.5), `{operator: GreaterThanEqual, path: ["m_year"], valueNumber: 2021.5}`},
		{cairn.Lt("kind", 3), `FALSE`},
		{cairn.And(), `TRUE`},
		{cairn.Or(), `FALSE`},
		{cairn.And(cairn.Eq("missing", 1), cairn.Eq("kind", "x")), `FALSE`},
		{cairn.Or(cairn.Ne("missing", 1), cairn.Eq("kind", "x")), `TRUE`},
		{cairn.Not(cairn.Not(cairn.Eq("kind", "x"))), `{operator: Equal, path: ["m_kind"], valueText: "x"}`},
		{cairn.Eq("Odd Key", "q\"uote"), `FALSE`},
	}
	for _, c := range cases {
		got, err := translate(c.f, testTypes)
		if err != nil {
			t.Fatalf("translate(%v): %v", c.f, err)
		}
		if gql(got) != c.want {
			t.Errorf("translate(%v) = %s\nwant %s", c.f, gql(got), c.want)
		}
	}
	odd := typeOf(func(k string) (string, bool) { return typeText, k == "Odd Key" })
	got, err := translate(cairn.Eq("Odd Key", "q\"uote"), odd)
	if err != nil || gql(got) != `{operator: Equal, path: ["m__4fdd_20_4bey"], valueText: "q\"uote"}` {
		t.Errorf("translate(odd key) = %s, %v", gql(got), err)
	}
}

func TestTranslateInvalid(t *testing.T) {
	bad := []*cairn.Filter{nil, {}, cairn.Eq("", 1), cairn.Lt("year", "x"), cairn.Not(nil), cairn.Eq("k", []int{1}),
		cairn.Eq("k", struct{}{}), cairn.And(cairn.Eq("year", 1), cairn.In("k", map[string]int{})),
		cairn.TimeRange(cairn.Created, time.Time{}, time.Now())} // not supported by the cluster store
	for _, f := range bad {
		if _, err := translate(f, testTypes); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("translate(%v) = %v, want ErrInvalidOptions", f, err)
		}
	}
}

// FuzzTranslateJSON feeds the translator arbitrary filter documents: it
// must never panic, must fail only with ErrInvalidOptions, and whatever
// ParseFilter accepts it must translate.
func FuzzTranslateJSON(f *testing.F) {
	for _, s := range []string{
		`{"kind":{"$eq":"fact"}}`, `{"year":{"$gte":2020,"$lt":2025}}`, `{"tag":{"$in":["a","b"]}}`,
		`{"tag":{"$nin":["a"]}}`, `{"$or":[{"kind":"fact"},{"pinned":true}]}`, `{"$not":{"year":1}}`,
		`{"$and":[]}`, `{"k":{"$in":null}}`, `{"":1}`, `[1]`, `{"a":{"$x":1}}`, `{"a":1}}`, `{"a":1} ]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := translateJSON(data, testTypes)
		if err != nil && !errors.Is(err, vector.ErrInvalidOptions) {
			t.Fatalf("translateJSON(%q) = %v, not ErrInvalidOptions", data, err)
		}
		if err == nil && !json.Valid(data) {
			t.Fatalf("translateJSON(%q) took what is not one JSON value", data)
		}
		if err == nil && c.w != nil {
			var b strings.Builder
			c.w.graphQL(&b)
		}
		if pf, perr := cairn.ParseFilter(data); perr == nil {
			if _, err := translate(pf, testTypes); err != nil && !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("translate(ParseFilter(%q)) = %v", data, err)
			}
		}
	})
}
