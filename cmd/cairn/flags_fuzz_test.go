package main

import (
	"errors"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// FuzzFlagValues checks the readers of the names that flags, import
// headers and tool arguments give: a metric, an index kind, a
// quantization and a search mode. A name read is one the type writes
// back (its String) to the same value, and a metric or a quantization
// refused is an ErrInvalidOptions.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"", "cosine", "dot", "ip", "l2", "L2", "auto", "flat", "hnsw", "qflat", "none", "int8", "binary",
		"vector", "keyword", "hybrid", "Metric(0)", "IndexKind(9)", " l2", "l2\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := vector.ParseMetric(s); err != nil {
			if !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("ParseMetric(%q): %v, not ErrInvalidOptions", s, err)
			}
		} else if back, err := vector.ParseMetric(m.String()); err != nil || back != m || !m.Valid() {
			t.Fatalf("ParseMetric(%q) = %v, which reads back as %v, %v", s, m, back, err)
		}
		if k, err := parseIndex(s); err == nil {
			if back, err := parseIndex(k.String()); err != nil || back != k {
				t.Fatalf("parseIndex(%q) = %v, which reads back as %v, %v", s, k, back, err)
			}
		}
		if q, err := hnsw.ParseQuantize(s); err != nil {
			if !errors.Is(err, vector.ErrInvalidOptions) {
				t.Fatalf("ParseQuantize(%q): %v, not ErrInvalidOptions", s, err)
			}
		} else if back, err := hnsw.ParseQuantize(q.String()); err != nil || back != q {
			t.Fatalf("ParseQuantize(%q) = %v, which reads back as %v, %v", s, q, back, err)
		}
		if m, ok := parseMode(s); ok {
			if back, ok := parseMode(m.String()); !ok || back != m {
				t.Fatalf("parseMode(%q) = %v, which reads back as %v, %v", s, m, back, ok)
			}
		}
	})
}
