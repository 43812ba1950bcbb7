package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
)

// TestCheckFindsDamage checks the checker: a database written as a log
// says passes, and one that lacks an acknowledged write, holds a write no
// log line left, or shows a write in flight in part fails.
func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	lines := []string{
		"try -1 1 mk flat", "ok -1 1",
		"ready",
		"try 0 2 add flat 1 a b c", "ok 0 2",
		"try 1 3 add flat 1 d e", "ok 1 3",
		"try 0 4 ups flat 7 a", "ok 0 4",
		"try 1 5 del flat 0 d", "ok 1 5",
		"try 0 6 add flat 1 f g",  // in flight
		"try 1 7 delwhere flat 0", // in flight: e is in group 0
		"try 2 8 del flat 0 b c",  // in flight
	}
	acked, pending, ready, childErr, err := parseLog(lines)
	if err != nil || !ready || childErr != "" || len(acked) != 5 || len(pending) != 3 {
		t.Fatalf("parseLog: %d acked, %d pending, ready %v, %q, %v", len(acked), len(pending), ready, childErr, err)
	}
	want := model{}
	for _, o := range acked {
		if err := want.apply(o); err != nil {
			t.Fatal(err)
		}
	}
	good := map[string]int{"a": 7, "b": 1, "c": 1, "e": 1}
	cases := []struct {
		name       string
		items      map[string]int
		lost, flaw string // substrings expected among lost and corrupt, "" for none
	}{
		{"as acknowledged", good, "", ""},
		{"in-flight write done", merge(good, map[string]int{"f": 1, "g": 1}), "", ""},
		{"acknowledged add gone", merge(good, map[string]int{"b": 0}), "flat/b", ""},
		{"acknowledged upsert gone", merge(good, map[string]int{"a": 1}), "flat/a", ""},
		{"acknowledged delete gone", merge(good, map[string]int{"d": 1}), "", "flat/d"},
		{"in-flight write in part", merge(good, map[string]int{"f": 1}), "", "partly visible"},
		{"in-flight delete where done", merge(good, map[string]int{"e": 0}), "", ""},
		{"in-flight delete done", merge(good, map[string]int{"b": 0, "c": 0}), "", ""},
		{"in-flight delete in part", merge(good, map[string]int{"c": 0}), "flat/c", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := check(ctx, buildFlat(t, tc.items), want, pending, 1, nil, nil)
			if v.refused != nil {
				t.Fatalf("refused: %v", v.refused)
			}
			expect(t, "lost", v.lost, tc.lost)
			expect(t, "corrupt", v.corrupt, tc.flaw)
		})
	}
}

// buildFlat makes a database whose collection "flat" holds items, id ->
// version (ids d and e by writer 1, the others by writer 0).
func buildFlat(t *testing.T, items map[string]int) string {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.cairn")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "flat", configOf("flat"))
	if err != nil {
		t.Fatal(err)
	}
	for id, ver := range items {
		w := 0
		if id == "d" || id == "e" {
			w = 1
		}
		if err := c.Add(ctx, itemOf("flat", id, ver, w)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A restore puts each of its ids at the version its log line gives, or
// deletes it (version 0); in flight, it must be there wholly or not at
// all.
func TestCheckRestore(t *testing.T) {
	ctx := context.Background()
	lines := []string{
		"try -1 1 mk flat", "ok -1 1",
		"ready",
		"try 0 2 add flat 1 a b c", "ok 0 2",
		"try 0 3 ups flat 7 a", "ok 0 3",
		"try 0 4 restore flat c:0 z:0", "ok 0 4",
		"try 0 5 restore flat a:1 b:0 c:1", // in flight
	}
	acked, pending, _, _, err := parseLog(lines)
	if err != nil || len(acked) != 4 || len(pending) != 1 {
		t.Fatalf("parseLog: %d acked, %d pending, %v", len(acked), len(pending), err)
	}
	want := model{}
	for _, o := range acked {
		if err := want.apply(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name       string
		items      map[string]int
		lost, flaw string
	}{
		{"in-flight restore not done", map[string]int{"a": 7, "b": 1}, "", ""},
		{"in-flight restore done", map[string]int{"a": 1, "c": 1}, "", ""},
		{"in-flight restore in part", map[string]int{"a": 1, "b": 1}, "flat/a", "partly visible"},
		{"acknowledged restore's delete gone", map[string]int{"a": 7, "b": 1, "c": 1}, "", "flat/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := check(ctx, buildFlat(t, tc.items), want, pending, 1, nil, nil)
			if v.refused != nil {
				t.Fatalf("refused: %v", v.refused)
			}
			expect(t, "lost", v.lost, tc.lost)
			expect(t, "corrupt", v.corrupt, tc.flaw)
		})
	}
}

func merge(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v == 0 {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func expect(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if want == "" {
		if len(got) > 0 {
			t.Errorf("%s: %v, want none", what, got)
		}
		return
	}
	for _, g := range got {
		if strings.Contains(g, want) {
			return
		}
	}
	t.Errorf("%s: %v, want one about %q", what, got, want)
}
