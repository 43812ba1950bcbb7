package vector_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/cairndb/cairn/vector/internal/kernel"
)

// fuzzVectors decodes two vectors of equal length from fuzz input. The
// first byte chooses the layout: bits 0–1 and 2–3 are the element offsets
// of a and b in their buffers (so unaligned slices are covered), bit 4
// picks the element encoding: raw float32 bits (every exponent, including
// subnormals, NaN and Inf) or int16/256 (ordinary magnitudes, where most
// inputs are comparable with the reference). The rest is split in two
// halves, one per vector. ok is false for input with NaN or ±Inf, which
// package vector rejects before any kernel sees it.
func fuzzVectors(data []byte) (a, b []float32, ok bool) {
	if len(data) == 0 {
		return nil, nil, true
	}
	mode := data[0]
	data = data[1:]
	size := 4
	if mode&16 != 0 {
		size = 2
	}
	n := len(data) / (2 * size)
	decode := func(p []byte, off int) []float32 {
		buf := make([]float32, off+n)
		v := buf[off:]
		for i := range v {
			if size == 4 {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
			} else {
				v[i] = float32(int16(binary.LittleEndian.Uint16(p[2*i:]))) / 256
			}
		}
		return v
	}
	a = decode(data, int(mode&3))
	b = decode(data[n*size:], int(mode>>2&3))
	for i := range a {
		if math.IsNaN(float64(a[i])) || math.IsInf(float64(a[i]), 0) ||
			math.IsNaN(float64(b[i])) || math.IsInf(float64(b[i]), 0) {
			return nil, nil, false
		}
	}
	return a, b, true
}

// fuzzSeeds are the seed corpus: empty, one pair, a register's worth plus
// a tail in both encodings, values near float32's extremes, and a
// cancelling pair.
var fuzzSeeds = [][]byte{
	{},
	{0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, // a = [1], b = [2]
	append([]byte{16 | 1 | 2<<2}, fuzzSeq(2*2*19)...),
	append([]byte{3}, fuzzSeq(2*4*17)...),
	{5, 0xff, 0xff, 0x7f, 0x7f, 0, 0, 0x80, 0x3f},              // max float32 × 1
	{0, 1, 0, 0, 0, 0, 0, 0, 0x7f},                             // subnormal × 1.7e38
	{16, 0x00, 0x7f, 0x00, 0x81, 0x00, 0x7f, 0x00, 0x7f, 0, 0}, // 127 − 127
}

func fuzzSeq(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*37 + 11)
	}
	return p
}

// fuzzComparable reports whether a float32 sum of terms whose absolute
// values add up to abs is certain not to overflow, so that the reference
// comparison is meaningful.
func fuzzComparable(abs float64) bool { return abs < math.MaxFloat32/2 }

func FuzzDot(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b, ok := fuzzVectors(data)
		if !ok {
			t.Skip("non-finite input")
		}
		_, abs := refDot(a, b)
		rows := append(append(append([]float32{}, b...), a...), b...)
		rows = append(append(rows, a...), b...) // five rows: one four-row pass and one single
		out := make([]float32, 5)
		for _, k := range kernel.Impls() {
			got := k.Dot(a, b)
			if fuzzComparable(abs) {
				checkDot(t, k.Name, got, a, b)
			}
			if back := k.Dot(b, a); math.Float32bits(back) != math.Float32bits(got) {
				t.Errorf("%s: Dot(a, b) = %v but Dot(b, a) = %v", k.Name, got, back)
			}
			k.DotBatch(a, rows, out)
			// The gather form over the same four rows gives the same bits.
			n := len(a)
			g := k.Dot4(a, rows[:n], rows[n:2*n], rows[2*n:3*n], rows[3*n:4*n])
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(out[i]) {
					t.Errorf("%s: Dot4 row %d = %v, DotBatch %v", k.Name, i, g[i], out[i])
				}
			}
			if fuzzComparable(abs) {
				_, absAA := refDot(a, a)
				for i, v := range out {
					row := rows[i*len(a) : (i+1)*len(a)]
					if fuzzComparable(absAA) {
						checkDot(t, k.Name+" DotBatch", v, a, row)
					}
				}
			}
		}
	})
}

func FuzzL2(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b, ok := fuzzVectors(data)
		if !ok {
			t.Skip("non-finite input")
		}
		want := refL2(a, b)
		rows := append(append(append([]float32{}, b...), a...), b...)
		rows = append(append(rows, a...), b...)
		out := make([]float32, 5)
		for _, k := range kernel.Impls() {
			got := k.L2(a, b)
			if fuzzComparable(want) {
				checkL2(t, k.Name, got, a, b)
			}
			if !(got >= 0) {
				t.Errorf("%s: L2 = %v, want ≥ 0", k.Name, got)
			}
			if back := k.L2(b, a); math.Float32bits(back) != math.Float32bits(got) {
				t.Errorf("%s: L2(a, b) = %v but L2(b, a) = %v", k.Name, got, back)
			}
			if self := k.L2(a, a); self != 0 {
				t.Errorf("%s: L2(a, a) = %v, want 0", k.Name, self)
			}
			k.L2Batch(a, rows, out)
			n := len(a)
			g := k.L2x4(a, rows[:n], rows[n:2*n], rows[2*n:3*n], rows[3*n:4*n])
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(out[i]) {
					t.Errorf("%s: L2x4 row %d = %v, L2Batch %v", k.Name, i, g[i], out[i])
				}
			}
			for i, v := range out {
				row := rows[i*len(a) : (i+1)*len(a)]
				if i%2 == 1 && v != 0 {
					t.Errorf("%s: L2Batch row %d (equal to q) = %v, want 0", k.Name, i, v)
				}
				if fuzzComparable(want) {
					checkL2(t, k.Name+" L2Batch", v, a, row)
				}
			}
		}
	})
}
