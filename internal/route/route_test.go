package route

import "testing"

// TestNextLen: a scan that won at n items is measured again at 2 × n; the
// graph, once it has won, never.
func TestNextLen(t *testing.T) {
	for _, tc := range []struct {
		k       Kind
		n, want int
	}{{Flat, 700, 1400}, {QFlat, 1500, 3000}, {HNSW, 700, 0}} {
		if got := NextLen(tc.k, tc.n); got != tc.want {
			t.Errorf("NextLen(%v, %d) = %d, want %d", tc.k, tc.n, got, tc.want)
		}
	}
}
