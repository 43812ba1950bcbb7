package reservoir

import (
	"math"
	"testing"
)

// TestReservoir: the reservoir keeps distinct queries up to its size, as
// copies; a query added again while kept counts once; once full, each
// newcomer replaces one at the rate that keeps the sample uniform; Take
// empties it.
func TestReservoir(t *testing.T) {
	var s Reservoir
	s.Resize(4)
	q := []float32{1, 2, 3}
	if s.Add(q); s.Len() != 1 {
		t.Fatalf("after one query: %d kept", s.Len())
	}
	q[0] = 9 // the caller's slice changes; the kept copy must not
	if s.Add([]float32{1, 2, 3}); s.Len() != 1 || s.Distinct() != 1 {
		t.Fatalf("the same query again: %d kept (%d distinct), want 1", s.Len(), s.Distinct())
	}
	if got := s.Take(); len(got) != 1 || got[0][0] != 1 {
		t.Fatalf("take = %v, want [[1 2 3]]", got)
	}
	for i := range 6 {
		if s.Add([]float32{float32(i), 0, 1}); s.Len() != min(i+1, 4) {
			t.Fatalf("after %d distinct queries to a sample of 4: %d kept", i+1, s.Len())
		}
	}
	got := s.Take()
	seen := map[float32]bool{}
	for _, q := range got {
		seen[q[0]] = true
	}
	if len(got) != 4 || len(seen) != 4 {
		t.Fatalf("take = %v, want 4 distinct queries", got)
	}
	if s.Len() != 0 {
		t.Fatalf("after take: %d kept", s.Len())
	}

	// Uniform: of 1,000 distinct queries added to a sample of 100, the
	// first and the last hundred are each kept about a tenth of the time.
	const size, offered, rounds = 100, 1000, 200
	s.Resize(size)
	early, late := 0, 0
	for range rounds {
		for i := range offered {
			s.Add([]float32{float32(i), 1})
		}
		for _, q := range s.Take() {
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

// TestRestart: Restart returns copies of the distinct queries held and
// counts from zero again; the queries that follow replace those held.
func TestRestart(t *testing.T) {
	var s Reservoir
	s.Resize(4)
	for i := range 3 {
		s.Add([]float32{float32(i)})
	}
	got := s.Restart(4)
	if len(got) != 3 || s.Seen() != 0 || s.Len() != 3 {
		t.Fatalf("restart = %v, seen %d, held %d: want 3 queries, 0 seen, 3 held", got, s.Seen(), s.Len())
	}
	got[0][0] = 7 // a copy
	s.Add([]float32{5})
	if q := s.Sample(); q[0][0] != 5 || q[1][0] != 1 {
		t.Fatalf("after restart and one query: %v, want it in the first slot", q)
	}
	if got := s.Restart(8); len(got) != 3 || s.Len() != 0 {
		t.Fatalf("restart at a new size = %v, %d held: want 3 queries, none held", got, s.Len())
	}
}

// TestSize: the sample grows as the exact neighbours get cheaper,
// between Min and Max.
func TestSize(t *testing.T) {
	for _, tc := range []struct{ n, dim, want int }{
		{100_000, 768, Min},
		{1_000_000, 768, Min},
		{40_000, 768, 1000},
		{20_000, 768, Max},
		{1_580, 384, Max},
		{0, 0, Max},
	} {
		if got := Size(tc.n, tc.dim); got != tc.want {
			t.Errorf("Size(%d, %d) = %d, want %d", tc.n, tc.dim, got, tc.want)
		}
	}
}
