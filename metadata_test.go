package cairn

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/metavalue"
	"github.com/cairndb/cairn/vector"
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

// TestNormalizeMetadata: a collection stores metadata in the forms that
// metavalue.Map gives the modules beside the library (weaviate, cmd/cairn),
// and refuses what it refuses.
func TestNormalizeMetadata(t *testing.T) {
	md := map[string]any{"s": "x", "b": true, "i": int8(-3), "u": uint64(7), "f": float32(0.5), "n": json.Number("12"), "big": int64(1)<<53 + 1}
	m, err := normalizeMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	want, err := metavalue.Map(md)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.toMap(); !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if m, err := normalizeMetadata(nil); m != nil || err != nil {
		t.Errorf("empty: %v, %v", m, err)
	}
	for name, md := range map[string]map[string]any{
		"NaN":        {"x": math.NaN()},
		"slice":      {"x": []int{1}},
		"bad string": {"x": "\xff"},
		"bad key":    {"\xfe": 1},
	} {
		_, err := normalizeMetadata(md)
		_, want := metavalue.Map(md)
		if !errors.Is(err, vector.ErrInvalidOptions) || want == nil || err.Error() != want.Error() {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
	}
}
