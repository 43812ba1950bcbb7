package recall

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/vector"
)

const npyMagic = "\x93NUMPY"

// npyMaxHeader bounds the header a reader accepts; numpy's own headers are
// a few hundred bytes.
const npyMaxHeader = 1 << 16

// ReadNpy reads a 2-D matrix from a NumPy .npy stream (format versions 1
// to 3) as one vector per row. The dtype must be a 4- or 8-byte float of
// either byte order ('<f4', '>f4', '<f8', '>f8'; float64 is rounded to
// float32) in C order; Fortran order and other dtypes give an error
// wrapping [vector.ErrInvalidOptions], a newer format version
// [vector.ErrUnsupportedVersion], and a malformed header or a short body
// [vector.ErrCorrupt]. The body is read in a streaming manner, so a header
// that claims more rows than the stream holds costs no more memory than the
// rows present.
func ReadNpy(r io.Reader) ([]vector.Vector, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	h, err := readNpyHeader(br)
	if err != nil {
		return nil, err
	}
	n, dim := h.shape[0], h.shape[1]
	if n == 0 {
		return nil, nil
	}
	// Grow as rows arrive rather than trusting the header's size.
	data := make([]float32, 0, min(n*dim, 1<<20))
	rec := make([]byte, dim*h.size)
	for i := range n {
		if got, err := io.ReadFull(br, rec); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("recall: npy: row %d of %d: truncated (%d of %d bytes): %w", i, n, got, len(rec), vector.ErrCorrupt)
			}
			return nil, fmt.Errorf("recall: npy: row %d: %w", i, err)
		}
		for j := range dim {
			var x float32
			if h.size == 4 {
				x = math.Float32frombits(h.order.Uint32(rec[4*j:]))
			} else {
				x = float32(math.Float64frombits(h.order.Uint64(rec[8*j:])))
			}
			data = append(data, x)
		}
	}
	return split(data, dim), nil
}

type npyHeader struct {
	order binary.ByteOrder
	size  int // bytes per value
	shape [2]int
}

func npyErr(sentinel error, format string, args ...any) error {
	return fmt.Errorf("recall: npy: %s: %w", fmt.Sprintf(format, args...), sentinel)
}

func readNpyHeader(br *bufio.Reader) (npyHeader, error) {
	var h npyHeader
	var pre [8]byte
	if _, err := io.ReadFull(br, pre[:]); err != nil {
		return h, npyErr(vector.ErrCorrupt, "truncated preamble")
	}
	if string(pre[:6]) != npyMagic {
		return h, npyErr(vector.ErrCorrupt, "not a .npy file (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return h, npyErr(vector.ErrCorrupt, "truncated header length")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return h, npyErr(vector.ErrCorrupt, "truncated header length")
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return h, npyErr(vector.ErrUnsupportedVersion, "format version %d.%d", pre[6], pre[7])
	}
	if hlen > npyMaxHeader {
		return h, npyErr(vector.ErrCorrupt, "header of %d bytes is too long", hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(br, hb); err != nil {
		return h, npyErr(vector.ErrCorrupt, "truncated header")
	}
	dict, err := parsePyDict(string(hb))
	if err != nil {
		return h, err
	}
	descr, ok := dict["descr"].(string)
	if !ok {
		return h, npyErr(vector.ErrCorrupt, "header has no 'descr' string")
	}
	switch descr {
	case "<f4", "=f4":
		h.order, h.size = binary.LittleEndian, 4
	case ">f4":
		h.order, h.size = binary.BigEndian, 4
	case "<f8", "=f8":
		h.order, h.size = binary.LittleEndian, 8
	case ">f8":
		h.order, h.size = binary.BigEndian, 8
	default:
		return h, npyErr(vector.ErrInvalidOptions, "dtype %q is not supported (want float32 '<f4' or float64 '<f8')", descr)
	}
	fortran, ok := dict["fortran_order"].(bool)
	if !ok {
		return h, npyErr(vector.ErrCorrupt, "header has no 'fortran_order' boolean")
	}
	if fortran {
		return h, npyErr(vector.ErrInvalidOptions, "Fortran-order arrays are not supported (save with np.ascontiguousarray)")
	}
	shape, ok := dict["shape"].([]int)
	if !ok {
		return h, npyErr(vector.ErrCorrupt, "header has no 'shape' tuple")
	}
	if len(shape) != 2 {
		return h, npyErr(vector.ErrInvalidOptions, "shape %v is not a 2-D matrix (rows, dim)", shape)
	}
	if shape[1] <= 0 && shape[0] > 0 || shape[1] > MaxFileDim {
		return h, npyErr(vector.ErrCorrupt, "dimension %d out of range 1..%d", shape[1], MaxFileDim)
	}
	if shape[0] > math.MaxInt32 {
		return h, npyErr(vector.ErrCorrupt, "%d rows is too many", shape[0])
	}
	h.shape = [2]int{shape[0], shape[1]}
	return h, nil
}

// parsePyDict parses the Python dict literal of a .npy header: string keys,
// and values that are strings, True/False, or tuples of non-negative ints.
func parsePyDict(s string) (map[string]any, error) {
	p := pyParser{s: s}
	out := map[string]any{}
	p.space()
	if !p.eat('{') {
		return nil, npyErr(vector.ErrCorrupt, "header is not a dict")
	}
	for {
		p.space()
		if p.eat('}') {
			return out, nil
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat(':') {
			return nil, npyErr(vector.ErrCorrupt, "header: expected ':' after %q", key)
		}
		p.space()
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		out[key] = val
		p.space()
		if !p.eat(',') {
			p.space()
			if !p.eat('}') {
				return nil, npyErr(vector.ErrCorrupt, "header: expected ',' or '}' at offset %d", p.i)
			}
			return out, nil
		}
	}
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", npyErr(vector.ErrCorrupt, "header: expected a string at offset %d", p.i)
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", npyErr(vector.ErrCorrupt, "header: unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyParser) value() (any, error) {
	if p.i >= len(p.s) {
		return nil, npyErr(vector.ErrCorrupt, "header: missing value")
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		return p.str()
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	case c == '(':
		p.i++
		var ints []int
		for {
			p.space()
			if p.eat(')') {
				return ints, nil
			}
			start := p.i
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
			// numpy writes Python ints, which may carry an L suffix in
			// files written by Python 2.
			n, err := strconv.Atoi(p.s[start:p.i])
			if err != nil || n < 0 {
				return nil, npyErr(vector.ErrCorrupt, "header: bad shape entry at offset %d", start)
			}
			p.eat('L')
			ints = append(ints, n)
			p.space()
			if !p.eat(',') {
				p.space()
				if !p.eat(')') {
					return nil, npyErr(vector.ErrCorrupt, "header: expected ',' or ')' in shape")
				}
				return ints, nil
			}
		}
	}
	return nil, npyErr(vector.ErrCorrupt, "header: unexpected value at offset %d", p.i)
}

// WriteNpy writes vs as a version 1.0 .npy file holding a little-endian
// float32 C-order matrix of shape (len(vs), dim), which numpy.load reads.
// Every vector must have the length of the first; an empty vs is written
// as shape (0, 0).
func WriteNpy(w io.Writer, vs []vector.Vector) error {
	dim, err := sameDim("npy", vs)
	if err != nil {
		return err
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", len(vs), dim)
	// The preamble, header and its newline are padded to a multiple of 64.
	total := len(npyMagic) + 2 + 2 + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0})
	binary.Write(bw, binary.LittleEndian, uint16(len(hdr)))
	bw.WriteString(hdr)
	var b [4]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			bw.Write(b[:])
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("recall: write npy: %w", err)
	}
	return nil
}
