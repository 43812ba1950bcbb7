package recall

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/cairndb/cairn/internal/symlink"
	"github.com/cairndb/cairn/vector"
)

// MaxFileDim is the largest dimension the readers accept. A record header
// above it is taken for corruption rather than a reason to allocate
// gigabytes.
const MaxFileDim = 1 << 20

// vecsReader reads the records of a TEXMEX file: a little-endian int32
// dimension d, then d values of size bytes each. Every record must have the
// dimension of the first.
type vecsReader struct {
	br   *bufio.Reader
	kind string // "fvecs", "ivecs" or "bvecs", for messages
	size int    // bytes per value
	dim  int
	n    int // records read
	buf  []byte
}

func newVecsReader(r io.Reader, kind string, size int) vecsReader {
	return vecsReader{br: bufio.NewReaderSize(r, 1<<16), kind: kind, size: size}
}

// next returns the raw bytes of the next record's values, valid until the
// next call, or io.EOF at a clean end of input.
func (r *vecsReader) next() ([]byte, error) {
	var hdr [4]byte
	n, err := io.ReadFull(r.br, hdr[:])
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, r.fail(err, "truncated dimension (%d of 4 bytes)", n)
	}
	d := int32(binary.LittleEndian.Uint32(hdr[:]))
	if d <= 0 || d > MaxFileDim {
		return nil, r.fail(nil, "dimension %d out of range 1..%d", d, MaxFileDim)
	}
	if r.n == 0 {
		r.dim = int(d)
		r.buf = make([]byte, r.dim*r.size)
	} else if int(d) != r.dim {
		return nil, r.fail(nil, "dimension %d differs from the first record's %d", d, r.dim)
	}
	if n, err := io.ReadFull(r.br, r.buf); err != nil {
		return nil, r.fail(err, "truncated (%d of %d bytes of values)", n, len(r.buf))
	}
	r.n++
	return r.buf, nil
}

func (r *vecsReader) fail(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		// A read error of the underlying reader, not a malformed file.
		return fmt.Errorf("recall: %s: record %d: %s: %w", r.kind, r.n, msg, err)
	}
	return fmt.Errorf("recall: %s: record %d: %s: %w", r.kind, r.n, msg, vector.ErrCorrupt)
}

// FvecsReader streams the vectors of an .fvecs file: for each vector a
// little-endian int32 dimension d, then d little-endian float32s. A
// FvecsReader is not safe for concurrent use.
type FvecsReader struct{ r vecsReader }

// NewFvecsReader returns a reader of the .fvecs records of r.
func NewFvecsReader(r io.Reader) *FvecsReader {
	return &FvecsReader{newVecsReader(r, "fvecs", 4)}
}

// Dim returns the dimension of the records, or 0 before the first is read.
func (r *FvecsReader) Dim() int { return r.r.dim }

// Next returns the next vector in a new slice, or io.EOF after the last. A
// truncated record, a dimension out of range or one that differs from the
// first record's gives an error wrapping [vector.ErrCorrupt]. Values are
// returned as stored, NaN and infinities included: validate them with
// [vector.Check] before use.
func (r *FvecsReader) Next() (vector.Vector, error) {
	b, err := r.r.next()
	if err != nil {
		return nil, err
	}
	v := make(vector.Vector, r.r.dim)
	decodeF32(v, b)
	return v, nil
}

func decodeF32(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// IvecsReader streams the rows of an .ivecs file (little-endian int32s,
// ground-truth positions in the TEXMEX convention). An IvecsReader is not
// safe for concurrent use.
type IvecsReader struct{ r vecsReader }

// NewIvecsReader returns a reader of the .ivecs records of r.
func NewIvecsReader(r io.Reader) *IvecsReader {
	return &IvecsReader{newVecsReader(r, "ivecs", 4)}
}

// Dim returns the length of the rows, or 0 before the first is read.
func (r *IvecsReader) Dim() int { return r.r.dim }

// Next returns the next row in a new slice, or io.EOF after the last, with
// the errors of [FvecsReader.Next].
func (r *IvecsReader) Next() ([]int32, error) {
	b, err := r.r.next()
	if err != nil {
		return nil, err
	}
	row := make([]int32, r.r.dim)
	for i := range row {
		row[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return row, nil
}

// BvecsReader streams the vectors of a .bvecs file (one uint8 per
// component, as in the SIFT1B data set). A BvecsReader is not safe for
// concurrent use.
type BvecsReader struct{ r vecsReader }

// NewBvecsReader returns a reader of the .bvecs records of r.
func NewBvecsReader(r io.Reader) *BvecsReader {
	return &BvecsReader{newVecsReader(r, "bvecs", 1)}
}

// Dim returns the dimension of the records, or 0 before the first is read.
func (r *BvecsReader) Dim() int { return r.r.dim }

// Next returns the next record's bytes in a new slice, or io.EOF after the
// last, with the errors of [FvecsReader.Next].
func (r *BvecsReader) Next() ([]byte, error) {
	b, err := r.r.next()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// ReadFvecs reads every vector of an .fvecs stream into one contiguous
// arena. An empty stream gives no vectors and no error.
func ReadFvecs(r io.Reader) ([]vector.Vector, error) {
	vr := newVecsReader(r, "fvecs", 4)
	var data []float32
	for {
		b, err := vr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		at := len(data)
		data = slices.Grow(data, vr.dim)[:at+vr.dim]
		decodeF32(data[at:], b)
	}
	return split(data, vr.dim), nil
}

// ReadBvecs reads every vector of a .bvecs stream, converting each byte to
// a float32 component.
func ReadBvecs(r io.Reader) ([]vector.Vector, error) {
	vr := newVecsReader(r, "bvecs", 1)
	var data []float32
	for {
		b, err := vr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, x := range b {
			data = append(data, float32(x))
		}
	}
	return split(data, vr.dim), nil
}

// ReadIvecs reads every row of an .ivecs stream.
func ReadIvecs(r io.Reader) ([][]int32, error) {
	ir := NewIvecsReader(r)
	var rows [][]int32
	for {
		row, err := ir.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// split cuts a row-major arena into vectors of dimension dim.
func split(data []float32, dim int) []vector.Vector {
	if dim == 0 {
		return nil
	}
	out := make([]vector.Vector, len(data)/dim)
	for i := range out {
		out[i] = data[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

// writeVecs writes n records of dimension dim, filling each record's values
// with put, through a buffer.
func writeVecs(w io.Writer, kind string, n, dim, size int, put func(i int, dst []byte)) error {
	if n > 0 && (dim <= 0 || dim > MaxFileDim) {
		return fmt.Errorf("recall: write %s: %w: dimension %d out of range 1..%d", kind, vector.ErrInvalidOptions, dim, MaxFileDim)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	rec := make([]byte, 4+dim*size)
	binary.LittleEndian.PutUint32(rec, uint32(dim))
	for i := range n {
		put(i, rec[4:])
		if _, err := bw.Write(rec); err != nil {
			return fmt.Errorf("recall: write %s: %w", kind, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("recall: write %s: %w", kind, err)
	}
	return nil
}

// sameDim returns the common length of rows, or an error wrapping
// [vector.ErrDimensionMismatch] naming the first row that differs.
func sameDim[T any](kind string, rows [][]T) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	d := len(rows[0])
	for i, r := range rows {
		if len(r) != d {
			return 0, fmt.Errorf("recall: write %s: row %d: %w: got %d, want %d", kind, i, vector.ErrDimensionMismatch, len(r), d)
		}
	}
	return d, nil
}

// WriteFvecs writes vs as .fvecs records. Every vector must have the length
// of the first (else an error wrapping [vector.ErrDimensionMismatch], before
// anything is written).
func WriteFvecs(w io.Writer, vs []vector.Vector) error {
	dim, err := sameDim("fvecs", vs)
	if err != nil {
		return err
	}
	return writeVecs(w, "fvecs", len(vs), dim, 4, func(i int, dst []byte) {
		for j, x := range vs[i] {
			binary.LittleEndian.PutUint32(dst[4*j:], math.Float32bits(x))
		}
	})
}

// WriteIvecs writes rows as .ivecs records, with the checks of [WriteFvecs].
func WriteIvecs(w io.Writer, rows [][]int32) error {
	dim, err := sameDim("ivecs", rows)
	if err != nil {
		return err
	}
	return writeVecs(w, "ivecs", len(rows), dim, 4, func(i int, dst []byte) {
		for j, x := range rows[i] {
			binary.LittleEndian.PutUint32(dst[4*j:], uint32(x))
		}
	})
}

// WriteBvecs writes rows as .bvecs records, with the checks of [WriteFvecs].
func WriteBvecs(w io.Writer, rows [][]byte) error {
	dim, err := sameDim("bvecs", rows)
	if err != nil {
		return err
	}
	return writeVecs(w, "bvecs", len(rows), dim, 1, func(i int, dst []byte) { copy(dst, rows[i]) })
}

// WriteFile writes a file atomically: write fills a temporary file in the
// same directory, which replaces path only once it is complete and synced,
// so an interrupted run never leaves a truncated file behind. A symbolic
// link is written through (the file it leads to is replaced, the link
// stays); a path that is not a regular file (a device such as
// /dev/stdout, a pipe) is written in place. A new file gets the mode
// 0666 less the umask, as a file os.Create makes; a replaced one keeps
// its mode.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	path, err = symlink.Target(path)
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	mode := fs.FileMode(0o666)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return writeInPlace(path, write)
		}
		mode = fi.Mode().Perm()
	}
	f, err := createTemp(path, mode)
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	return nil
}

// createTemp creates a new file beside path, of the given mode less the
// umask (the system applies it; os.CreateTemp would give 0600).
func createTemp(path string, mode fs.FileMode) (*os.File, error) {
	for {
		var rnd [8]byte
		rand.Read(rnd[:])
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp"+hex.EncodeToString(rnd[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// writeInPlace writes to the file at path, which is not a regular file.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("recall: %w", cerr)
	}
	return err
}

// readFile opens path and applies read to it, naming the file in errors.
func readFile[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("recall: %w", err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// LoadVectors reads the vectors of a file by its extension: .fvecs, .bvecs
// (bytes become float32 components) or .npy (a 2-D float32 or float64
// matrix, see [ReadNpy]). It does not validate the values; see
// [vector.Check].
func LoadVectors(path string) ([]vector.Vector, error) {
	switch filepath.Ext(path) {
	case ".fvecs":
		return readFile(path, ReadFvecs)
	case ".bvecs":
		return readFile(path, ReadBvecs)
	case ".npy":
		return readFile(path, ReadNpy)
	}
	return nil, fmt.Errorf("recall: %s: %w: unknown vector file extension (want .fvecs, .bvecs or .npy)", path, vector.ErrInvalidOptions)
}

// LoadIvecs reads every row of an .ivecs file.
func LoadIvecs(path string) ([][]int32, error) { return readFile(path, ReadIvecs) }

// SaveFvecs writes vs to path as .fvecs, atomically (see [WriteFile]).
func SaveFvecs(path string, vs []vector.Vector) error {
	return WriteFile(path, func(w io.Writer) error { return WriteFvecs(w, vs) })
}

// SaveIvecs writes rows to path as .ivecs, atomically.
func SaveIvecs(path string, rows [][]int32) error {
	return WriteFile(path, func(w io.Writer) error { return WriteIvecs(w, rows) })
}
