package cairn

import (
	"math"
	"testing"
)

// TestQuerySample: the sample keeps distinct queries up to its size, as
// copies; a query offered again while kept counts once; once full, each
// newcomer replaces one at the rate that keeps the sample uniform; take
// empties it.
func TestQuerySample(t *testing.T) {
	var s querySample
	q := []float32{1, 2, 3}
	if n := s.add(q, 4); n != 1 {
		t.Fatalf("after one query: %d kept", n)
	}
	q[0] = 9 // the caller's slice changes; the kept copy must not
	if n := s.add([]float32{1, 2, 3}, 4); n != 1 {
		t.Fatalf("the same query again: %d kept, want 1", n)
	}
	if got := s.take(); len(got) != 1 || got[0][0] != 1 {
		t.Fatalf("take = %v, want [[1 2 3]]", got)
	}
	for i := range 6 {
		if n := s.add([]float32{float32(i), 0, 1}, 4); n != min(i+1, 4) {
			t.Fatalf("after %d distinct queries to a sample of 4: %d kept", i+1, n)
		}
	}
	got := s.take()
	seen := map[float32]bool{}
	for _, q := range got {
		seen[q[0]] = true
	}
	if len(got) != 4 || len(seen) != 4 {
		t.Fatalf("take = %v, want 4 distinct queries", got)
	}
	if s.len() != 0 {
		t.Fatalf("after take: %d kept", s.len())
	}

	// Uniform: of 1,000 distinct queries offered to a sample of 100, the
	// first and the last hundred are each kept about a tenth of the time.
	const size, offered, rounds = 100, 1000, 200
	early, late := 0, 0
	for range rounds {
		for i := range offered {
			s.add([]float32{float32(i), 1}, size)
		}
		for _, q := range s.take() {
			switch {
			case q[0] < 100:
				early++
			case q[0] >= offered-100:
				late++
			}
		}
	}
	// Expected 10 of each a round: 2,000 over the rounds, σ ≈ 42.
	for name, n := range map[string]int{"first": early, "last": late} {
		if math.Abs(float64(n)-2000) > 300 {
			t.Errorf("the %s hundred queries were kept %d times over %d rounds, want about 2,000", name, n, rounds)
		}
	}
}
