package quant_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// TestMarshalRoundTrip checks that a quantizer read back encodes and
// estimates exactly as the original.
func TestMarshalRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, m := range metrics {
		vs := randVecs(r, 300, 33)
		q := train(t, storeOf(t, 33, m, vs), nil)
		b, err := q.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back quant.Quantizer
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if back.Dim() != 33 || back.Metric() != m || back.Trained() != 300 {
			t.Fatalf("read back dim %d metric %v trained %d", back.Dim(), back.Metric(), back.Trained())
		}
		again, _ := back.MarshalBinary()
		if !slices.Equal(b, again) {
			t.Fatal("marshal, unmarshal, marshal changed the bytes")
		}
		p1, _ := q.Prepare(vs[0])
		p2, _ := back.Prepare(vs[0])
		for _, v := range vs[:50] {
			c1, c2 := encode(t, q, v), encode(t, &back, v)
			if !slices.Equal(c1, c2) || p1.Distance(c1) != p2.Distance(c2) {
				t.Fatal("read-back quantizer encodes or estimates differently")
			}
		}
	}
}

// TestUnmarshalBad checks the errors of damaged, truncated and newer data,
// and that the receiver is left as it was.
func TestUnmarshalBad(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	q := train(t, storeOf(t, 5, vector.L2, randVecs(r, 40, 5)), nil)
	good, _ := q.MarshalBinary()
	edit := func(f func([]byte)) []byte { b := slices.Clone(good); f(b); return b }
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, vector.ErrCorrupt},
		{"magic", edit(func(b []byte) { b[0] = 'X' }), vector.ErrCorrupt},
		{"truncated", good[:len(good)-1], vector.ErrCorrupt},
		{"extended", append(slices.Clone(good), 0), vector.ErrCorrupt},
		{"flipped bit", edit(func(b []byte) { b[40] ^= 1 }), vector.ErrCorrupt},
		{"newer", edit(func(b []byte) { b[4] = 3; reseal(b) }), vector.ErrUnsupportedVersion},
		{"version 0", edit(func(b []byte) { b[4] = 0; reseal(b) }), vector.ErrCorrupt},
		{"metric", edit(func(b []byte) { b[6] = 9; reseal(b) }), vector.ErrCorrupt},
		{"dimension", edit(func(b []byte) { b[8] = 6; reseal(b) }), vector.ErrCorrupt},
		{"negative step", edit(func(b []byte) { b[len(b)-5] |= 0x80; reseal(b) }), vector.ErrCorrupt},
		{"NaN range", edit(func(b []byte) { binary.LittleEndian.PutUint32(b[36:], 0x7fc00000); reseal(b) }), vector.ErrCorrupt},
	}
	for _, c := range cases {
		before := train(t, storeOf(t, 2, vector.Dot, randVecs(r, 10, 2)), nil)
		if err := before.UnmarshalBinary(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: UnmarshalBinary = %v, want %v", c.name, err, c.want)
		}
		if before.Dim() != 2 || before.Metric() != vector.Dot {
			t.Errorf("%s: the receiver changed on error", c.name)
		}
	}
}

// FuzzUnmarshal checks that no input panics, that every error is
// ErrCorrupt or ErrUnsupportedVersion, and that what is accepted encodes
// and estimates without panicking and marshals back to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, m := range metrics {
		q := train(f, storeOf(f, 3, m, randVecs(r, 20, 3)), nil)
		b, _ := q.MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte("CQNT"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var q quant.Quantizer
		err := q.UnmarshalBinary(data)
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) && !errors.Is(err, vector.ErrUnsupportedVersion) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrUnsupportedVersion", err)
			}
			return
		}
		again, _ := q.MarshalBinary()
		if !slices.Equal(again, data) {
			t.Fatal("accepted bytes do not marshal back the same")
		}
		v := make(vector.Vector, q.Dim())
		for i := range v {
			v[i] = float32(i%5) - 2
		}
		c := make([]byte, q.CodeSize())
		if _, err := q.Encode(c, v); err != nil {
			return
		}
		if p, err := q.Prepare(v); err == nil {
			p.Distance(c)
		}
	})
}
