package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn"
)

// TestMCPHistory plays the warning case of agent memory: a consolidation
// pass rewrites and deletes most memories, and memory_restore, rehearsed
// first, brings them back; then the restore itself is undone. Another
// namespace is left as it is throughout.
func TestMCPHistory(t *testing.T) {
	cs := connect(t, newTestMemory(t, bowEmbedder(nil)))
	count := func(ns string) int {
		t.Helper()
		var out listOut
		if e := call(t, cs, "memory_list", map[string]any{"page_size": 100, "namespace": ns}, &out); e != "" {
			t.Fatal(e)
		}
		return len(out.Memories)
	}
	for i := range 20 {
		if e := call(t, cs, "memory_store", map[string]any{"id": fmt.Sprint("m", i), "text": fmt.Sprintf("fact number %d about the garden", i)}, nil); e != "" {
			t.Fatal(e)
		}
	}
	if e := call(t, cs, "memory_store", map[string]any{"id": "b1", "text": "bob likes tea", "namespace": "bob"}, nil); e != "" {
		t.Fatal(e)
	}
	time.Sleep(time.Millisecond)
	before := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(time.Millisecond)
	// The consolidation: three rewritten, fifteen forgotten.
	for i := range 3 {
		if e := call(t, cs, "memory_update", map[string]any{"id": fmt.Sprint("m", i), "text": "merged garden facts"}, nil); e != "" {
			t.Fatal(e)
		}
	}
	ids := []string{}
	for i := 5; i < 20; i++ {
		ids = append(ids, fmt.Sprint("m", i))
	}
	if e := call(t, cs, "memory_delete", map[string]any{"ids": ids}, nil); e != "" {
		t.Fatal(e)
	}
	if e := call(t, cs, "memory_store", map[string]any{"id": "new", "text": "a memory stored after"}, nil); e != "" {
		t.Fatal(e)
	}
	if n := count(""); n != 6 {
		t.Fatalf("after the consolidation: %d memories, want 6", n)
	}

	var h historyOut
	if e := call(t, cs, "memory_history", map[string]any{"id": "m1"}, &h); e != "" {
		t.Fatal(e)
	}
	if len(h.Versions) != 3 || h.Versions[0].Text != "merged garden facts" || h.Versions[1].Text != "fact number 1 about the garden" ||
		!h.Versions[2].Deleted || h.Versions[0].Until != "" || h.Versions[1].Until != h.Versions[0].From {
		t.Fatalf("history of m1: %+v", h.Versions)
	}
	if e := call(t, cs, "memory_history", map[string]any{"id": "m7"}, &h); e != "" || !h.Versions[0].Deleted || h.Versions[1].Text != "fact number 7 about the garden" {
		t.Fatalf("history of m7: %+v %s", h.Versions, e)
	}
	if e := call(t, cs, "memory_history", map[string]any{"id": "never"}, &h); !strings.Contains(e, "no memory has had the id") {
		t.Fatalf("history of an unknown id: %q", e)
	}

	// Rehearse: nothing changes.
	var r restoreOut
	if e := call(t, cs, "memory_restore", map[string]any{"to": before}, &r); e != "" {
		t.Fatal(e)
	}
	if r.Applied || r.NRestored != 18 || r.NDeleted != 1 || r.Deleted[0] != "new" || r.UndoTo != "" {
		t.Fatalf("rehearsal: %+v", r)
	}
	if n := count(""); n != 6 {
		t.Fatalf("a rehearsal changed the memories: %d", n)
	}
	// Restore.
	if e := call(t, cs, "memory_restore", map[string]any{"to": before, "confirm": true}, &r); e != "" {
		t.Fatal(e)
	}
	if !r.Applied || r.NRestored != 18 || r.UndoTo == "" {
		t.Fatalf("restore: %+v", r)
	}
	if n := count(""); n != 20 {
		t.Fatalf("after the restore: %d memories, want 20", n)
	}
	var got memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": []string{"m1", "m7"}}, &got); e != "" ||
		got.Memories[0].Text != "fact number 1 about the garden" || got.Memories[1].Text != "fact number 7 about the garden" {
		t.Fatalf("after the restore: %+v %s", got, e)
	}
	if n := count("bob"); n != 1 {
		t.Fatalf("bob's namespace: %d memories, want 1", n)
	}
	// Undo the restore.
	if e := call(t, cs, "memory_restore", map[string]any{"to": r.UndoTo, "confirm": true}, &r); e != "" {
		t.Fatal(e)
	}
	if n := count(""); n != 6 {
		t.Fatalf("after undoing the restore: %d memories, want 6", n)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"to": "yesterday"}, "not an RFC 3339 time"},
		{map[string]any{"to": "2000-01-01T00:00:00Z"}, "does not reach back to 2000-01-01T00:00:00Z"},
		{map[string]any{"to": "2200-01-01T00:00:00Z"}, "in the future"},
	} {
		if e := call(t, cs, "memory_restore", tc.args, nil); !strings.Contains(e, tc.want) {
			t.Errorf("memory_restore %v: %q, want it to say %q", tc.args, e, tc.want)
		}
	}
}

// TestMCPNoHistory serves a collection made without history: the
// history tools say so.
func TestMCPNoHistory(t *testing.T) {
	m := newTestMemory(t, bowEmbedder(nil))
	if _, err := m.db.CreateCollection(context.Background(), "memories", cairn.CollectionConfig{Dim: len(bagOfWords("x"))}); err != nil {
		t.Fatal(err)
	}
	m2, err := newMemory(context.Background(), m.db, "memories", m.emb)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, m2)
	if e := call(t, cs, "memory_store", map[string]any{"id": "a", "text": "x"}, nil); e != "" {
		t.Fatal(e)
	}
	if e := call(t, cs, "memory_history", map[string]any{"id": "a"}, nil); !strings.Contains(e, "keeps no history") {
		t.Fatalf("memory_history without history: %q", e)
	}
	if e := call(t, cs, "memory_restore", map[string]any{"to": time.Now().UTC().Format(time.RFC3339)}, nil); !strings.Contains(e, "keeps no history") {
		t.Fatalf("memory_restore without history: %q", e)
	}
}
