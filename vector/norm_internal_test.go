// Tests of sumSquares, the norm every vector and query is checked and
// normalised with, against the plain running sum it replaces.

package vector

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// runningSum is the reference: Σv² in one running float64 sum, and the
// first non-finite component's index (-1 for none).
func runningSum(v Vector) (float64, int) {
	var sum float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return 0, i
		}
		sum += float64(x) * float64(x)
	}
	return sum, -1
}

// agrees reports whether sumSquares(v) matches the reference: the same
// component refused, or sums within float64 rounding of each other.
func agrees(t *testing.T, v Vector) {
	t.Helper()
	got, gotBad := sumSquares(v)
	want, wantBad := runningSum(v)
	if gotBad != wantBad {
		t.Fatalf("len %d: first non-finite %d, want %d", len(v), gotBad, wantBad)
	}
	if gotBad < 0 && math.Abs(got-want) > 1e-13*want {
		t.Fatalf("len %d: Σv² = %v, want %v", len(v), got, want)
	}
}

func TestSumSquares(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 384, 768, 1023} {
		v := make(Vector, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
		}
		agrees(t, v)
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			for range 4 {
				if n == 0 {
					break
				}
				w := append(Vector(nil), v...)
				i := r.IntN(n)
				w[i] = bad
				if j := r.IntN(n); j > i {
					w[j] = bad // a later one too: the first is reported
				}
				agrees(t, w)
			}
		}
	}
}

// TestQueryMatchesStored: a vector stored and the same vector prepared as
// a query are the same to the bit, under every metric.
func TestQueryMatchesStored(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range []Metric{Cosine, Dot, L2} {
		for _, dim := range []int{3, 384, 769} {
			s, err := NewMemStore(dim, m)
			if err != nil {
				t.Fatal(err)
			}
			for id := range ID(20) {
				v := make(Vector, dim)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				if err := s.Put(context.Background(), id, v); err != nil {
					t.Fatal(err)
				}
				stored, err := s.Get(id)
				if err != nil {
					t.Fatal(err)
				}
				p, err := Prepare(v, dim, m)
				if err != nil {
					t.Fatal(err)
				}
				q := make(Vector, dim)
				if err := PrepareInto(q, v, dim, m); err != nil {
					t.Fatal(err)
				}
				for i := range v {
					if math.Float32bits(stored[i]) != math.Float32bits(p[i]) || math.Float32bits(q[i]) != math.Float32bits(p[i]) {
						t.Fatalf("%v, %d-d, component %d: stored %v, Prepare %v, PrepareInto %v", m, dim, i, stored[i], p[i], q[i])
					}
				}
			}
		}
	}
}

func FuzzSumSquares(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64})
	f.Add([]byte{0, 0, 192, 127, 0, 0, 128, 63, 0, 0, 128, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		v := make(Vector, len(data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		agrees(t, v)
	})
}

// BenchmarkCheckNorm times the check of a 768-d query with the running
// sum and with sumSquares, alternating in one process:
//
//	go test -run '^$' -bench BenchmarkCheckNorm -count 6 ./vector
func BenchmarkCheckNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	v := make(Vector, 768)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	var sink float64
	b.Run("running", func(b *testing.B) {
		for b.Loop() {
			s, _ := runningSum(v)
			sink += s
		}
	})
	b.Run("sumSquares", func(b *testing.B) {
		for b.Loop() {
			s, _ := sumSquares(v)
			sink += s
		}
	})
	_ = sink
}
