package quant_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

var oneBit = &quant.TrainOptions{Bits: 1}

// refBits computes the documented rule of a 1-bit estimate in float64
// from the code and the mean (Range), with the query's components
// rounded to 15 steps as the planes hold them.
func refBits(q *quant.Quantizer, v vector.Vector, code []byte) float64 {
	d := q.Dim()
	y := make([]float64, d)
	scale := 1.0
	if q.Metric() == vector.Cosine {
		s := 0.0
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		scale = 1 / math.Sqrt(s)
	}
	var base, qq float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, x := range v {
		mu, _ := q.Range(j)
		y[j] = float64(x)*scale - float64(mu)
		qq += y[j] * y[j]
		base += float64(x) * scale * float64(mu)
		lo, hi = min(lo, y[j]), max(hi, y[j])
	}
	delta := (hi - lo) / 15
	words := (d + 63) / 64
	var sy float64 // ⟨s, ŷ⟩, ŷ the rounded query
	for j := range d {
		yh := lo
		if delta > 0 {
			yh += delta * math.Round((y[j]-lo)/delta)
		}
		if binary.LittleEndian.Uint64(code[8*(j/64):])>>(j%64)&1 == 1 {
			sy += yh
		} else {
			sy -= yh
		}
	}
	tr := code[8*words:]
	c := float64(math.Float32frombits(binary.LittleEndian.Uint32(tr)))
	exact := float64(math.Float32frombits(binary.LittleEndian.Uint32(tr[4:])))
	ip := c * sy
	switch q.Metric() {
	case vector.Cosine:
		return 1 - (ip + exact + base)
	case vector.Dot:
		return -(ip + exact + base)
	}
	return exact + qq - 2*ip
}

// TestBitsCode checks a 1-bit code against its definition: bit j set
// where the (normalised) component is above the mean, then the scale
// ‖x−μ‖²/‖x−μ‖₁, ‖x−μ‖² under L2 or ⟨x−μ, μ⟩ under the others, and the
// count of set bits.
func TestBitsCode(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, m := range metrics {
		for _, dim := range []int{1, 63, 64, 65, 200} {
			vs := randVecs(r, 100, dim)
			s := storeOf(t, dim, m, vs)
			q := train(t, s, oneBit)
			if q.Bits() != 1 || q.CodeSize() != 8*((dim+63)/64)+12 || q.CodeSize() != quant.CodeSizeOf(dim, 1) {
				t.Fatalf("bits %d, code size %d", q.Bits(), q.CodeSize())
			}
			for i := range 10 {
				v, _ := s.Get(vector.ID(i))
				code := encode(t, q, v)
				var l1, l2, xm float64
				pop := 0
				for j, x := range v {
					mu, _ := q.Range(j)
					e := float64(x) - float64(mu)
					set := binary.LittleEndian.Uint64(code[8*(j/64):])>>(j%64)&1 == 1
					if set != (e > 0) {
						t.Fatalf("%v d=%d: bit %d is %v for x−μ = %v", m, dim, j, set, e)
					}
					l1, l2, xm = l1+math.Abs(e), l2+e*e, xm+e*float64(mu)
				}
				exact := l2
				if m != vector.L2 {
					exact = xm
				}
				words := (dim + 63) / 64
				for w := range words {
					pop += bits.OnesCount64(binary.LittleEndian.Uint64(code[8*w:]))
				}
				tr := code[8*words:]
				if got := math.Float32frombits(binary.LittleEndian.Uint32(tr)); math.Abs(float64(got)-l2/l1) > 1e-5*l2/l1 {
					t.Fatalf("%v d=%d: scale %v, want %v", m, dim, got, l2/l1)
				}
				if got := math.Float32frombits(binary.LittleEndian.Uint32(tr[4:])); math.Abs(float64(got)-exact) > 1e-5*(l2+math.Abs(exact)) {
					t.Fatalf("%v d=%d: exact term %v, want %v", m, dim, got, exact)
				}
				if got := binary.LittleEndian.Uint32(tr[8:]); int(got) != pop {
					t.Fatalf("%v d=%d: count %d, want %d", m, dim, got, pop)
				}
			}
		}
	}
}

// TestBitsMatchesRule checks every way of scoring 1-bit codes against
// the documented rule computed in float64.
func TestBitsMatchesRule(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, m := range metrics {
		for _, dim := range []int{7, 64, 100, 768} {
			vs := randVecs(r, 200, dim)
			s := storeOf(t, dim, m, vs)
			q := train(t, s, oneBit)
			codes := make([]byte, 0, 40*q.CodeSize())
			ptrs := make([]*byte, 40)
			for i := range 40 {
				v, _ := s.Get(vector.ID(i))
				codes = append(codes, encode(t, q, v)...)
			}
			n := q.CodeSize()
			for i := range ptrs {
				ptrs[i] = unsafe.SliceData(codes[i*n:])
			}
			for _, qv := range randVecs(r, 5, dim) {
				p, err := q.Prepare(qv)
				if err != nil {
					t.Fatal(err)
				}
				one := make([]float32, 40)
				p.Distances(codes, one)
				gathered := make([]float32, 40)
				p.GatherDistances(ptrs, gathered)
				four := p.Distance4(codes[:n], codes[n:2*n], codes[2*n:3*n], codes[3*n:4*n])
				for i := range 40 {
					c := codes[i*n : (i+1)*n]
					got, want := p.Distance(c), refBits(q, qv, c)
					if math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
						t.Fatalf("%v d=%d: estimate %v, rule %v", m, dim, got, want)
					}
					if one[i] != got || gathered[i] != got || i < 4 && four[i] != got {
						t.Fatalf("%v d=%d: Distances %v, GatherDistances %v, Distance %v", m, dim, one[i], gathered[i], got)
					}
				}
			}
		}
	}
}

// TestBitsRank checks that 1-bit estimates rank well enough to choose
// what to score exactly: on vectors from clusters at d = 768, the true
// 10 nearest of 2,000 are within the estimate's first 100 (5%).
func TestBitsRank(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const dim, n = 768, 2000
	centres := randVecs(r, 20, dim)
	vs := make([]vector.Vector, n)
	for i := range vs {
		c := centres[r.IntN(len(centres))]
		vs[i] = make(vector.Vector, dim)
		for j := range vs[i] {
			vs[i][j] = c[j] + 0.5*float32(r.NormFloat64())
		}
	}
	for _, m := range metrics {
		s := storeOf(t, dim, m, vs)
		q := train(t, s, oneBit)
		codes := make([][]byte, n)
		for i := range codes {
			v, _ := s.Get(vector.ID(i))
			codes[i] = encode(t, q, v)
		}
		hit, total := 0, 0
		for range 10 {
			qv := slices.Clone(vs[r.IntN(n)])
			for j := range qv {
				qv[j] += 0.3 * float32(r.NormFloat64())
			}
			p, err := q.Prepare(qv)
			if err != nil {
				t.Fatal(err)
			}
			pq, _ := vector.Prepare(qv, dim, m)
			dist := m.DistanceFunc()
			exact, est := make([]int, n), make([]int, n)
			ed, qd := make([]float64, n), make([]float64, n)
			for i := range n {
				exact[i], est[i] = i, i
				v, _ := s.Get(vector.ID(i))
				ed[i], qd[i] = float64(dist(pq, v)), float64(p.Distance(codes[i]))
			}
			slices.SortFunc(exact, func(a, b int) int { return cmpF(ed[a], ed[b]) })
			slices.SortFunc(est, func(a, b int) int { return cmpF(qd[a], qd[b]) })
			top := map[int]bool{}
			for _, i := range est[:100] {
				top[i] = true
			}
			for _, i := range exact[:10] {
				if top[i] {
					hit++
				}
				total++
			}
		}
		if rec := float64(hit) / float64(total); rec < 0.95 {
			t.Errorf("%v: true top 10 within the estimate's top 100: %.3f, want >= 0.95", m, rec)
		}
	}
}

// TestBitsOptions checks the refusals around 1-bit codes and that a
// 1-bit quantizer reads back as it was written.
func TestBitsOptions(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	vs := randVecs(r, 50, 70)
	s := storeOf(t, 70, vector.Cosine, vs)
	for _, b := range []int{-1, 2, 4, 16} {
		if _, err := quant.Train(t.Context(), s, &quant.TrainOptions{Bits: b}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Bits %d: %v, want ErrInvalidOptions", b, err)
		}
	}
	q := train(t, s, oneBit)
	var bq quant.BoundedQuery
	if err := q.PrepareBounded(&bq, vs[0]); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("PrepareBounded on 1-bit codes: %v, want ErrInvalidOptions", err)
	}
	if _, err := q.Encode(make([]byte, 71+4), vs[0]); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Encode into an int8 code's length: %v, want ErrInvalidOptions", err)
	}
	p, _ := q.Prepare(vs[1])
	if !math.IsInf(float64(p.ErrorBound()), 1) || p.NoiseSD() != 0 {
		t.Errorf("ErrorBound %v, NoiseSD %v; want +Inf and 0", p.ErrorBound(), p.NoiseSD())
	}

	b, _ := q.MarshalBinary()
	var back quant.Quantizer
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	again, _ := back.MarshalBinary()
	if back.Bits() != 1 || !slices.Equal(b, again) {
		t.Fatalf("read back %d bits; bytes equal %v", back.Bits(), slices.Equal(b, again))
	}
	p2, _ := back.Prepare(vs[1])
	for _, v := range vs[:20] {
		c1, c2 := encode(t, q, v), encode(t, &back, v)
		if !slices.Equal(c1, c2) || p.Distance(c1) != p2.Distance(c2) {
			t.Fatal("read-back 1-bit quantizer encodes or estimates differently")
		}
	}
	// The bits field must agree with the version.
	bad := slices.Clone(b)
	bad[7] = 0
	if err := back.UnmarshalBinary(reseal(bad)); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("version 2 with bits 0: %v, want ErrCorrupt", err)
	}
	if !slices.Equal(again, b) || back.Bits() != 1 {
		t.Error("a refused form changed the receiver")
	}
	int8q := train(t, s, nil)
	old, _ := int8q.MarshalBinary()
	if binary.LittleEndian.Uint16(old[4:]) != 1 {
		t.Error("an int8 quantizer is not written in format version 1")
	}
	old[7] = 1
	if err := back.UnmarshalBinary(reseal(old)); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("version 1 with bits 1: %v, want ErrCorrupt", err)
	}
}

// reseal sets b's checksum to match its bytes.
func reseal(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	return b
}
