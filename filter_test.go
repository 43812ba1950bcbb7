package cairn

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestFilterMatch(t *testing.T) {
	md, err := normalizeMetadata(map[string]any{"topic": "go", "year": 2021.0, "stars": 5.0, "draft": false})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		f    *Filter
		want bool
	}{
		{Eq("topic", "go"), true},
		{Eq("topic", "rust"), false},
		{Eq("year", 2021), true}, // int matches the stored float64
		{Eq("year", int64(2021)), true},
		{Eq("year", float32(2021)), true},
		{Eq("year", "2021"), false}, // a string never equals a number
		{Eq("draft", false), true},
		{Eq("missing", "x"), false},
		{Ne("topic", "rust"), true},
		{Ne("topic", "go"), false},
		{Ne("missing", "x"), true},
		{In("topic", "rust", "go"), true},
		{In("topic", "rust", "zig"), false},
		{In("year", 2020, 2021), true},
		{In("topic"), false},
		{In("missing", "x"), false},
		{Lt("year", 2022), true},
		{Lt("year", 2021), false},
		{Lte("year", 2021), true},
		{Gt("year", 2021), false},
		{Gt("year", 2020.5), true},
		{Gte("year", 2021), true},
		{Gte("topic", 1), false}, // not a number: no match
		{Gte("missing", 1), false},
		{And(Eq("topic", "go"), Gte("stars", 4)), true},
		{And(Eq("topic", "go"), Gte("stars", 6)), false},
		{And(), true},
		{Or(), false},
		{Or(Eq("topic", "rust"), Eq("draft", false)), true},
		{Or(Eq("topic", "rust"), Eq("draft", true)), false},
		{Not(Eq("topic", "go")), false},
		{Not(Not(Eq("topic", "go"))), true},
		{And(Or(Lt("year", 2000), Gt("year", 2020)), Not(In("topic", "java"))), true},
	}
	for _, tc := range cases {
		m, err := tc.f.compile()
		if err != nil {
			t.Errorf("%v: %v", tc.f, err)
			continue
		}
		if got := m(&record{md: md}); got != tc.want {
			t.Errorf("%v on %v = %v, want %v", tc.f, md, got, tc.want)
		}
		if got := m(&record{}); got && tc.f.op != opNe && tc.f.op != opNot && tc.f.op != opAnd {
			t.Errorf("%v matches empty metadata", tc.f)
		}
	}
}

func TestFilterMalformed(t *testing.T) {
	for _, f := range []*Filter{
		nil,
		{},
		Eq("", "x"),
		Eq("k", []string{"x"}),
		Eq("k", nil),
		Eq("k", math.NaN()),
		In("k", "a", map[string]int{}),
		Lt("k", "a"),
		Gte("k", true),
		Gt("k", math.Inf(1)),
		And(Eq("k", 1), nil),
		Or(Eq("k", 1), Eq("", 1)),
		Not(nil),
		Not(Lt("k", "z")),
		{op: opNot},
		{op: opEq, key: "k"},
	} {
		if _, err := f.compile(); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%v: error %v, want ErrInvalidOptions", f, err)
		}
	}
}

func TestFilterString(t *testing.T) {
	f := And(Eq("topic", "go"), Or(Gte("year", 2020), Not(In("tag", "a", 1))), Ne("draft", true))
	want := `(topic = "go" and (year >= 2020 or not tag in ["a", 1]) and draft != true)`
	if got := f.String(); got != want {
		t.Errorf("String = %s\nwant     %s", got, want)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	md, err := normalizeMetadata(map[string]any{"s": "x", "i": 3, "u": uint8(7), "f": 1.5, "b": true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, md) {
		t.Errorf("%v after round trip, was %v", back, md)
	}
	if m := back.toMap(); m["i"] != 3.0 || m["u"] != 7.0 || m["b"] != true || m["s"] != "x" {
		t.Errorf("integers not stored as float64, or other values changed: %v", m)
	}
	if _, err := decodeMetadata([]byte(`{"x":[1]}`)); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("list in stored metadata: %v", err)
	}
	if _, err := decodeMetadata([]byte(`{`)); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("bad JSON: %v", err)
	}
	if md, err := normalizeMetadata(nil); md != nil || err != nil {
		t.Errorf("nil metadata: %v, %v", md, err)
	}
}

// TestEncodeMetadataMatchesJSON checks the hand-written encoder against
// encoding/json: the same bytes, and a round trip to the same values,
// every string exactly (those that are not valid UTF-8, which JSON would
// rewrite, are refused).
func TestEncodeMetadataMatchesJSON(t *testing.T) {
	strs := []string{"", "plain", `quote"d`, `back\\slash`, "tab\there", "nl\n", "\x00\x1f", "<html>&", "é ü 日本", "\u2028"}
	nums := []float64{0, -0.0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345, 2.5e300, -3.25, 1 << 53}
	md := map[string]any{"b": true, "f": false}
	for i, s := range strs {
		md[fmt.Sprint("s", i)] = s
		md[s] = float64(i) // odd keys too
	}
	for i, f := range nums {
		md[fmt.Sprint("n", i)] = f
	}
	nmd, err := normalizeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeMetadata(nmd)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("encoded metadata is not JSON: %v\n%s", err, got)
	}
	json.Unmarshal(want, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("round trip differs:\n got %v\nwant %v", a, b)
	}
	for k, v := range md {
		if s, ok := v.(string); ok && a[k] != s {
			t.Errorf("%q: %q after round trip, want %q", k, a[k], s)
		}
	}
	for _, bad := range []map[string]any{{"k": "bad\xffutf8"}, {"bad\xffkey": 1}} {
		if _, err := normalizeMetadata(bad); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%q: %v, want ErrInvalidOptions", bad, err)
		}
	}
	if _, err := encodeMetadata(metadata{{"x", value{kind: kindNumber, num: math.Inf(1), box: math.Inf(1)}}}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Inf: %v", err)
	}
}

// FuzzFilter builds a filter tree from the fuzzer's bytes and checks that
// compiling and printing it never panic, and that when it compiles, the
// posting-list path and the full scan select the same records.
func FuzzFilter(f *testing.F) {
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{7, 0, 1, 1, 2, 3, 8, 2, 0, 5, 1})
	f.Add([]byte{9, 2, 0, 0, 4, 1, 3, 7, 1, 1, 6})
	keys := []string{"color", "n", "ok", "", "missing"}
	vals := []any{"red", "blue", 1, 2.5, true, false, nil, []int{1}, math.NaN(), int64(3), "3"}
	cat := newCatalog()
	for i := range 60 {
		raw := map[string]any{"color": []string{"red", "blue", "green"}[i%3], "n": i % 7, "ok": i%2 == 0}
		if i%11 == 0 {
			delete(raw, "n")
		}
		md, _ := normalizeMetadata(raw)
		cat.add(&record{id: vector.ID(i + 1), key: fmt.Sprint(i), md: md})
	}
	f.Fuzz(func(t *testing.T, prog []byte) {
		pos := 0
		next := func() int {
			if pos >= len(prog) {
				return 0
			}
			pos++
			return int(prog[pos-1])
		}
		var build func(depth int) *Filter
		build = func(depth int) *Filter {
			op := next() % 11
			if depth > 4 && op >= 7 {
				op %= 7
			}
			key, val := keys[next()%len(keys)], vals[next()%len(vals)]
			switch op {
			case 0:
				return Eq(key, val)
			case 1:
				return Ne(key, val)
			case 2:
				n := next() % 4
				vs := make([]any, n)
				for i := range vs {
					vs[i] = vals[next()%len(vals)]
				}
				return In(key, vs...)
			case 3:
				return Lt(key, val)
			case 4:
				return Lte(key, val)
			case 5:
				return Gt(key, val)
			case 6:
				return Gte(key, val)
			case 7, 8:
				n := next() % 4
				subs := make([]*Filter, n)
				for i := range subs {
					subs[i] = build(depth + 1)
				}
				if op == 7 {
					return And(subs...)
				}
				return Or(subs...)
			case 9:
				return Not(build(depth + 1))
			}
			return nil
		}
		flt := build(0)
		_ = flt.String()
		m, err := flt.compile()
		if err != nil {
			if !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("%v: error %v does not wrap ErrInvalidOptions", flt, err)
			}
			return
		}
		got := cat.match(flt, m)
		var want []vector.ID
		for _, r := range cat.live {
			if m(r) {
				want = append(want, r.id)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%v: postings give %v, a scan %v", flt, got, want)
		}
	})
}

// TestMatchSetSharesPostings checks that an equality hands its posting
// list over as it is (no copy), and that the allow-list built from it
// through vector.IDSetOf allows exactly the matching ids.
func TestMatchSetSharesPostings(t *testing.T) {
	cat := newCatalog()
	for i := range 30 {
		md, _ := normalizeMetadata(map[string]any{"color": []string{"red", "blue", "green"}[i%3]})
		cat.add(&record{id: vector.ID(i + 1), key: fmt.Sprint(i), md: md})
	}
	f := Eq("color", "red")
	m, err := f.compile()
	if err != nil {
		t.Fatal(err)
	}
	got := cat.matchSet(f, m)
	if got.set == nil || got.len() != 10 {
		t.Fatalf("matchSet(Eq) = %d ids, set %v; want the posting list of 10", got.len(), got.set != nil)
	}
	if reflect.ValueOf(got.set).UnsafePointer() != reflect.ValueOf(cat.post["color"][value{kind: kindString, box: "red"}]).UnsafePointer() {
		t.Fatal("matchSet copied the posting list")
	}
	s := vector.IDSetOf(got.set)
	if s.Len() != 10 {
		t.Fatalf("IDSetOf: Len %d, want 10", s.Len())
	}
	for i := range 30 {
		id := vector.ID(i + 1)
		if want := i%3 == 0; s.Allow(id) != want {
			t.Errorf("Allow(%d) = %v, want %v", id, !want, want)
		}
	}
	// A conjunction with another condition is not the list itself.
	f2 := And(Eq("color", "red"), Ne("color", "blue"))
	m2, _ := f2.compile()
	if got := cat.matchSet(f2, m2); got.set != nil || got.len() != 10 {
		t.Fatalf("matchSet(And) = %d ids, set %v; want a slice of 10", got.len(), got.set != nil)
	}
	// In with two values is a union of lists: a slice.
	f3 := In("color", "red", "blue")
	m3, _ := f3.compile()
	if got := cat.matchSet(f3, m3); got.set != nil || got.len() != 20 {
		t.Fatalf("matchSet(In) = %d ids, set %v; want a slice of 20", got.len(), got.set != nil)
	}
}

// TestRecTable checks the id table against a map under random inserts,
// replacements and deletes, dense and far-off ids alike, and that pages
// are freed when they empty.
func TestRecTable(t *testing.T) {
	var tab recTable
	ref := map[vector.ID]*record{}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() vector.ID {
		switch rng.IntN(10) {
		case 0:
			return vector.ID(rng.Uint64()) // far beyond the table
		case 1:
			return vector.ID(rng.IntN(200_000))
		}
		return vector.ID(rng.IntN(5_000))
	}
	for range 50_000 {
		id := pick()
		if rng.IntN(3) == 0 {
			tab.del(id)
			delete(ref, id)
		} else {
			r := &record{id: id}
			tab.set(id, r)
			ref[id] = r
		}
		if probe := pick(); tab.get(probe) != ref[probe] {
			t.Fatalf("get(%d) = %p, want %p", probe, tab.get(probe), ref[probe])
		}
	}
	for id, r := range ref {
		if tab.get(id) != r {
			t.Fatalf("get(%d) = %p, want %p", id, tab.get(id), r)
		}
		tab.del(id)
	}
	for p, pg := range tab.pages {
		if pg != nil {
			t.Fatalf("page %d kept after its last record went (n = %d)", p, pg.n)
		}
	}
	if len(tab.pages) != 0 {
		t.Fatalf("%d pages left", len(tab.pages))
	}
}
