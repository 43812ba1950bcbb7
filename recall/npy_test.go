package recall_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// npyFile builds a .npy file the way numpy.save does: version 1.0 (or 2.0
// for long headers), the dict padded with spaces to a multiple of 64.
func npyFile(version byte, dict string, body []byte) []byte {
	hlenSize := 2
	if version >= 2 {
		hlenSize = 4
	}
	total := 6 + 2 + hlenSize + len(dict) + 1
	hdr := dict + strings.Repeat(" ", (64-total%64)%64) + "\n"
	b := []byte("\x93NUMPY")
	b = append(b, version, 0)
	if hlenSize == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	return append(append(b, hdr...), body...)
}

func f32s(order binary.AppendByteOrder, xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = order.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestNpyRead(t *testing.T) {
	want := []vector.Vector{{1, 2, 3}, {4, 5, 6}}
	var f64 []byte
	for _, x := range []float64{1, 2, 3, 4, 5, 6} {
		f64 = binary.LittleEndian.AppendUint64(f64, math.Float64bits(x))
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"numpy-1.0", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 6))},
		{"version-2", npyFile(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 6))},
		{"big-endian", npyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3)}", f32s(binary.BigEndian, 1, 2, 3, 4, 5, 6))},
		{"float64", npyFile(1, `{"shape": (2,3), "fortran_order": False, "descr": "<f8"}`, f64)},
		{"python2-long", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 6))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := recall.ReadNpy(bytes.NewReader(c.data))
			if err != nil || !equalSets(got, want) {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}

func TestNpyRoundTrip(t *testing.T) {
	ds := recall.Uniform(50, 0, 7, 1)
	var buf bytes.Buffer
	if err := recall.WriteNpy(&buf, ds.Base); err != nil {
		t.Fatal(err)
	}
	// numpy requires the data to start on a 64-byte boundary.
	hlen := int(binary.LittleEndian.Uint16(buf.Bytes()[8:]))
	if (10+hlen)%64 != 0 || buf.Bytes()[10+hlen-1] != '\n' {
		t.Errorf("header of %d bytes is not padded to 64 with a newline", hlen)
	}
	got, err := recall.ReadNpy(&buf)
	if err != nil || !equalSets(got, ds.Base) {
		t.Fatalf("round trip: %v", err)
	}
}

func TestNpyErrors(t *testing.T) {
	body := f32s(binary.LittleEndian, 1, 2, 3, 4, 5, 6)
	hdr := func(descr, fortran, shape string) string {
		return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }"
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"bad-magic", []byte("\x93NUMPX\x01\x00\x00\x00"), vector.ErrCorrupt},
		{"short", []byte("\x93NUM"), vector.ErrCorrupt},
		{"version-9", npyFile(9, hdr("<f4", "False", "(2, 3)"), body), vector.ErrUnsupportedVersion},
		{"int-dtype", npyFile(1, hdr("<i4", "False", "(2, 3)"), body), vector.ErrInvalidOptions},
		{"fortran", npyFile(1, hdr("<f4", "True", "(2, 3)"), body), vector.ErrInvalidOptions},
		{"one-dimensional", npyFile(1, hdr("<f4", "False", "(6,)"), body), vector.ErrInvalidOptions},
		{"truncated-body", npyFile(1, hdr("<f4", "False", "(2, 3)"), body[:20]), vector.ErrCorrupt},
		{"rows-claimed-not-present", npyFile(1, hdr("<f4", "False", "(2000000000, 3)"), body), vector.ErrCorrupt},
		{"negative-shape", npyFile(1, hdr("<f4", "False", "(-2, 3)"), body), vector.ErrCorrupt},
		{"zero-dim", npyFile(1, hdr("<f4", "False", "(2, 0)"), body), vector.ErrCorrupt},
		{"no-descr", npyFile(1, "{'fortran_order': False, 'shape': (2, 3)}", body), vector.ErrCorrupt},
		{"not-a-dict", npyFile(1, "[1, 2]", body), vector.ErrCorrupt},
		{"unterminated", npyFile(1, "{'descr': '<f4", body), vector.ErrCorrupt},
		{"truncated-header", npyFile(1, hdr("<f4", "False", "(2, 3)"), nil)[:30], vector.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := recall.ReadNpy(bytes.NewReader(c.data))
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func FuzzReadNpy(f *testing.F) {
	var buf bytes.Buffer
	recall.WriteNpy(&buf, []vector.Vector{{1, 2}, {3, 4}})
	f.Add(buf.Bytes())
	f.Add(npyFile(2, "{'descr': '>f8', 'fortran_order': False, 'shape': (1, 1), }", make([]byte, 8)))
	f.Add(npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := recall.ReadNpy(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) && !errors.Is(err, vector.ErrInvalidOptions) && !errors.Is(err, vector.ErrUnsupportedVersion) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		for _, v := range vs {
			if len(v) != len(vs[0]) {
				t.Fatal("rows of different lengths")
			}
		}
	})
}
