package recall_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func TestFvecsRoundTrip(t *testing.T) {
	ds := recall.Clustered(37, 0, 19, 2)
	ds.Base[3][4] = float32(math.Inf(1)) // stored as given, not validated
	var buf bytes.Buffer
	if err := recall.WriteFvecs(&buf, ds.Base); err != nil {
		t.Fatal(err)
	}
	if want := 37 * (4 + 19*4); buf.Len() != want {
		t.Fatalf("%d bytes, want %d", buf.Len(), want)
	}
	// The TEXMEX layout, byte for byte: dimension then values.
	if d := binary.LittleEndian.Uint32(buf.Bytes()); d != 19 {
		t.Fatalf("first dimension %d", d)
	}
	if x := math.Float32frombits(binary.LittleEndian.Uint32(buf.Bytes()[4:])); x != ds.Base[0][0] {
		t.Fatalf("first value %v, want %v", x, ds.Base[0][0])
	}
	got, err := recall.ReadFvecs(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !equalSets(got, ds.Base) {
		t.Fatal("fvecs round trip changed the vectors")
	}
	r := recall.NewFvecsReader(bytes.NewReader(buf.Bytes()))
	for i := 0; ; i++ {
		v, err := r.Next()
		if err == io.EOF {
			if i != 37 {
				t.Fatalf("streamed %d vectors", i)
			}
			break
		}
		if err != nil || !slices.Equal(v, ds.Base[i]) || r.Dim() != 19 {
			t.Fatalf("vector %d: %v %v", i, v, err)
		}
	}
}

func TestIvecsBvecsRoundTrip(t *testing.T) {
	rows := [][]int32{{0, 5, -1, math.MaxInt32}, {7, 8, 9, 10}}
	var buf bytes.Buffer
	if err := recall.WriteIvecs(&buf, rows); err != nil {
		t.Fatal(err)
	}
	got, err := recall.ReadIvecs(&buf)
	if err != nil || !slices.EqualFunc(got, rows, slices.Equal) {
		t.Fatalf("ivecs: %v %v", got, err)
	}
	bs := [][]byte{{0, 1, 255}, {9, 8, 7}}
	buf.Reset()
	if err := recall.WriteBvecs(&buf, bs); err != nil {
		t.Fatal(err)
	}
	raw := bytes.Clone(buf.Bytes())
	br := recall.NewBvecsReader(bytes.NewReader(raw))
	for i := range bs {
		b, err := br.Next()
		if err != nil || !bytes.Equal(b, bs[i]) {
			t.Fatalf("bvecs row %d: %v %v", i, b, err)
		}
	}
	if _, err := br.Next(); err != io.EOF {
		t.Fatalf("after last: %v", err)
	}
	vs, err := recall.ReadBvecs(bytes.NewReader(raw))
	if err != nil || len(vs) != 2 || !slices.Equal(vs[0], vector.Vector{0, 1, 255}) {
		t.Fatalf("bvecs as floats: %v %v", vs, err)
	}
}

func TestEmptyFiles(t *testing.T) {
	vs, err := recall.ReadFvecs(bytes.NewReader(nil))
	if err != nil || len(vs) != 0 {
		t.Fatalf("empty fvecs: %v %v", vs, err)
	}
	var buf bytes.Buffer
	if err := recall.WriteFvecs(&buf, nil); err != nil || buf.Len() != 0 {
		t.Fatalf("writing no vectors: %d bytes, %v", buf.Len(), err)
	}
}

func rec(dim int32, vals ...float32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(dim))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestVecsCorrupt(t *testing.T) {
	good := slices.Concat(rec(2, 1, 2), rec(2, 3, 4))
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated-values", good[:len(good)-1], "truncated"},
		{"truncated-dimension", append(bytes.Clone(good), 2, 0), "truncated dimension"},
		{"dimension-changes", slices.Concat(rec(2, 1, 2), rec(3, 1, 2, 3)), "differs"},
		{"zero-dimension", rec(0), "out of range"},
		{"negative-dimension", rec(-5, 1), "out of range"},
		{"huge-dimension", rec(1 << 30), "out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, read := range []func([]byte) error{
				func(b []byte) error { _, err := recall.ReadFvecs(bytes.NewReader(b)); return err },
				func(b []byte) error { _, err := recall.ReadIvecs(bytes.NewReader(b)); return err },
			} {
				err := read(c.data)
				if !errors.Is(err, vector.ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("got %v, want ErrCorrupt mentioning %q", err, c.want)
				}
			}
		})
	}
	// bvecs: one byte per value.
	b := append(binary.LittleEndian.AppendUint32(nil, 3), 1, 2)
	if _, err := recall.ReadBvecs(bytes.NewReader(b)); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("truncated bvecs: %v", err)
	}
}

func TestWriteMismatchedRows(t *testing.T) {
	var buf bytes.Buffer
	err := recall.WriteFvecs(&buf, []vector.Vector{{1, 2}, {1}})
	if !errors.Is(err, vector.ErrDimensionMismatch) || buf.Len() != 0 {
		t.Fatalf("got %v and %d bytes", err, buf.Len())
	}
	if err := recall.WriteIvecs(&buf, [][]int32{{1}, {}}); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Fatalf("ivecs: %v", err)
	}
}

func TestFileHelpers(t *testing.T) {
	dir := t.TempDir()
	ds := recall.Uniform(10, 0, 4, 1)
	p := filepath.Join(dir, "x.fvecs")
	if err := recall.SaveFvecs(p, ds.Base); err != nil {
		t.Fatal(err)
	}
	got, err := recall.LoadVectors(p)
	if err != nil || !equalSets(got, ds.Base) {
		t.Fatalf("load: %v", err)
	}
	np := filepath.Join(dir, "x.npy")
	if err := recall.WriteFile(np, func(w io.Writer) error { return recall.WriteNpy(w, ds.Base) }); err != nil {
		t.Fatal(err)
	}
	if got, err := recall.LoadVectors(np); err != nil || !equalSets(got, ds.Base) {
		t.Fatalf("npy load: %v", err)
	}
	if _, err := recall.LoadVectors(filepath.Join(dir, "x.csv")); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("unknown extension: %v", err)
	}
	if _, err := recall.LoadVectors(filepath.Join(dir, "missing.fvecs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A truncated file names itself in the error.
	os.WriteFile(p, rec(3, 1), 0o644)
	if _, err := recall.LoadVectors(p); !errors.Is(err, vector.ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Errorf("truncated file: %v", err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

func FuzzReadFvecs(f *testing.F) {
	f.Add(slices.Concat(rec(2, 1, 2), rec(2, 3, 4)))
	f.Add(rec(1, float32(math.NaN())))
	f.Add(rec(3, 1))
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := recall.ReadFvecs(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		// Whatever parses writes back to the same bytes.
		var buf bytes.Buffer
		if err := recall.WriteFvecs(&buf, vs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatal("round trip changed the bytes")
		}
	})
}

func FuzzReadIvecs(f *testing.F) {
	f.Add(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), 7))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := recall.ReadIvecs(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := recall.WriteIvecs(&buf, rows); err != nil || !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzReadBvecs(f *testing.F) {
	f.Add(append(binary.LittleEndian.AppendUint32(nil, 2), 1, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := recall.NewBvecsReader(bytes.NewReader(data))
		var rows [][]byte
		for {
			b, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, vector.ErrCorrupt) {
					t.Fatalf("error not ErrCorrupt: %v", err)
				}
				return
			}
			rows = append(rows, b)
		}
		var buf bytes.Buffer
		if err := recall.WriteBvecs(&buf, rows); err != nil || !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
