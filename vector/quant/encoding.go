// This file holds the binary form of a Quantizer, for indexes that persist
// codes with the quantizer that made them.

package quant

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/cairndb/cairn/vector"
)

// The binary form, little-endian:
//
//	magic "CQNT" | version u16 | metric u8 | 0 u8 | dim u32 | clip f64 |
//	sample u64 | trained u64 | lo [dim]f32 | step [dim]f32 | crc32c u32
//
// The checksum (Castagnoli) covers every byte before it.
const (
	magic         = "CQNT"
	formatVersion = 1
	headerBytes   = 4 + 2 + 1 + 1 + 4 + 8 + 8 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary returns q in its versioned, checksummed binary form.
func (q *Quantizer) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, headerBytes+8*q.dim+4)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint16(b, formatVersion)
	b = append(b, byte(q.metric), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(q.dim))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(q.clip))
	b = binary.LittleEndian.AppendUint64(b, uint64(q.sample))
	b = binary.LittleEndian.AppendUint64(b, uint64(q.trained))
	for _, x := range q.lo {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	for _, x := range q.step {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary replaces q with the quantizer encoded in data by
// MarshalBinary. It returns an error wrapping [vector.ErrUnsupportedVersion]
// for a newer format, and one wrapping [vector.ErrCorrupt] for anything
// damaged or truncated; on error q is unchanged. Check the result against
// the store with [Quantizer.Check].
func (q *Quantizer) UnmarshalBinary(data []byte) error {
	corrupt := func(what string) error { return fmt.Errorf("%w: quant: %s", vector.ErrCorrupt, what) }
	if len(data) < headerBytes+4 || string(data[:4]) != magic {
		return corrupt("not a quantizer")
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != formatVersion {
		if v > formatVersion {
			return fmt.Errorf("%w: quant: format version %d (this build reads %d)", vector.ErrUnsupportedVersion, v, formatVersion)
		}
		return corrupt(fmt.Sprintf("format version %d", v))
	}
	dim := int(binary.LittleEndian.Uint32(data[8:]))
	if dim <= 0 || dim > MaxDim || len(data) != headerBytes+8*dim+4 {
		return corrupt(fmt.Sprintf("dimension %d in %d bytes", dim, len(data)))
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return corrupt("checksum mismatch")
	}
	r := Quantizer{
		dim:     dim,
		metric:  vector.Metric(data[6]),
		clip:    math.Float64frombits(binary.LittleEndian.Uint64(data[12:])),
		sample:  int(min(binary.LittleEndian.Uint64(data[20:]), math.MaxInt32)),
		trained: int(min(binary.LittleEndian.Uint64(data[28:]), math.MaxInt32)),
		lo:      make([]float32, dim),
		step:    make([]float32, dim),
		inv:     make([]float32, dim),
	}
	if !r.metric.Valid() || data[7] != 0 || !(r.clip >= 0 && r.clip < 0.25) {
		return corrupt("bad header fields")
	}
	p := data[headerBytes:]
	for j := range dim {
		lo := math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:]))
		step := math.Float32frombits(binary.LittleEndian.Uint32(p[4*(dim+j):]))
		hi := float64(lo) + 255*float64(step)
		if !finite(lo) || !finite(step) || step < 0 || hi > math.MaxFloat32 {
			return corrupt(fmt.Sprintf("range of dimension %d", j))
		}
		r.setStep(j, lo, step)
	}
	*q = r
	return nil
}

func finite(x float32) bool { return math.Float32bits(x)&0x7f800000 != 0x7f800000 }
