package sqlitestore

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cairndb/cairn/vector"
)

// appendVector appends v as little-endian float32s: the on-disk form of a
// vector, 4·len(v) bytes, independent of the host's byte order.
func appendVector(dst []byte, v vector.Vector) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, 4*len(v))...)
	b := dst[n:]
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return dst
}

// decodeVector decodes the little-endian float32s of b into dst, which
// must have length len(b)/4. It returns an error wrapping
// [vector.ErrCorrupt] if the length is wrong.
func decodeVector(dst vector.Vector, b []byte) error {
	if len(b) != 4*len(dst) {
		return fmt.Errorf("%w: vector of %d bytes, want %d", vector.ErrCorrupt, len(b), 4*len(dst))
	}
	b = b[:4*len(dst)] // one bounds check for the loop
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}
