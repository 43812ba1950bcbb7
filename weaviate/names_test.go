package weaviate

import (
	"regexp"
	"testing"

	"github.com/cairndb/cairn/vector"
)

var (
	classRE = regexp.MustCompile(`^[A-Z][_0-9A-Za-z]*$`)
	propRE  = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

func FuzzNames(f *testing.F) {
	for _, s := range []string{"notes", "My Notes", "_x", "ünï", "a_b", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cls, err := className(s)
		if err == nil {
			if !classRE.MatchString(cls) {
				t.Fatalf("className(%q) = %q, not a Weaviate class name", s, cls)
			}
			back, ok := collectionName(cls)
			if !ok || back != s {
				t.Fatalf("collectionName(className(%q)) = %q, %v", s, back, ok)
			}
		}
		if p, err := propName(s); err == nil && !propRE.MatchString(p) {
			t.Fatalf("propName(%q) = %q, not a Weaviate property name", s, p)
		}
		if u := itemUUID("C", s); !uuidRE.MatchString(u) || u[14] != '5' {
			t.Fatalf("itemUUID(%q) = %q", s, u)
		}
		if _, ok := decode(s); ok {
			// decode accepts only what encode writes, or plain names.
			if _, ok2 := decode(encode(s)); !ok2 {
				t.Fatalf("decode(encode(%q)) failed", s)
			}
		}
	})
}

func TestVectorUUID(t *testing.T) {
	for _, id := range []vector.ID{0, 1, 31, 1 << 45, 1<<46 - 1, 1 << 46, 1 << 52, 1<<63 + 12345, ^vector.ID(0)} {
		u := vectorUUID(id)
		if !uuidRE.MatchString(u) || u[14] != '8' {
			t.Fatalf("vectorUUID(%d) = %q, not a UUIDv8", id, u)
		}
		back, ok := vectorID(u)
		if !ok || back != id {
			t.Fatalf("vectorID(vectorUUID(%d)) = %d, %v", id, back, ok)
		}
	}
	if _, ok := vectorID(itemUUID("C", "x")); ok {
		t.Fatal("vectorID accepted an item UUID")
	}
	if itemUUID("A", "x") == itemUUID("B", "x") || itemUUID("A", "x") != itemUUID("A", "x") {
		t.Fatal("itemUUID is not a function of class and id")
	}
}
