package cairn

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestNormalizeManyKeys checks that metadata with many keys comes out
// sorted by key, each key once with its value.
func TestNormalizeManyKeys(t *testing.T) {
	md := make(map[string]any, 5000)
	for i := range 5000 {
		md[fmt.Sprint("k", i*7919%5000)] = i
	}
	got, err := normalizeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.IsSortedFunc(got, func(a, b field) int { return strings.Compare(a.key, b.key) })
	if len(got) != len(md) || !sorted {
		t.Fatalf("%d fields, sorted %v; want %d sorted", len(got), sorted, len(md))
	}
	for _, f := range got {
		if want, _ := toValue(md[f.key]); f.val != want {
			t.Fatalf("%s = %v, want %v", f.key, f.val, want)
		}
	}
}

// BenchmarkNormalizeMetadata normalises one item's metadata of many keys
// (40,000 took 3.1 s when they were sorted by insertion).
//
//	go test -run '^$' -bench BenchmarkNormalizeMetadata -benchtime 20x .
func BenchmarkNormalizeMetadata(b *testing.B) {
	for _, n := range []int{10, 40_000} {
		md := make(map[string]any, n)
		for i := range n {
			md[fmt.Sprint("key-", i)] = i
		}
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := normalizeMetadata(md); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
