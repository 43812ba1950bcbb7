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
//	magic "CQNT" | version u16 | metric u8 | bits u8 | dim u32 | clip f64 |
//	sample u64 | trained u64 | [full u32] | lo [dim]f32 | [step [dim]f32] |
//	crc32c u32
//
// Version 1 has bits 0 (int8 codes), no full (it is dim) and step.
// Version 2 has bits 8 or 1 and full, the vectors' dimension, of which
// codes hold the first dim components; with 1 bit, clip is 0, lo is the
// mean and there is no step. The checksum (Castagnoli) covers every byte
// before it. An int8 quantizer of whole vectors is written in version 1,
// so that builds which read only that still read it.
const (
	magic         = "CQNT"
	formatVersion = 2
	headerBytes   = 4 + 2 + 1 + 1 + 4 + 8 + 8 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary returns q in its versioned, checksummed binary form.
func (q *Quantizer) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, headerBytes+4+8*q.dim+4)
	b = append(b, magic...)
	v1 := q.bits != 1 && q.dim == q.full
	if v1 {
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = append(b, byte(q.metric), 0)
	} else {
		b = binary.LittleEndian.AppendUint16(b, 2)
		b = append(b, byte(q.metric), byte(q.Bits()))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(q.dim))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(q.clip))
	b = binary.LittleEndian.AppendUint64(b, uint64(q.sample))
	b = binary.LittleEndian.AppendUint64(b, uint64(q.trained))
	if !v1 {
		b = binary.LittleEndian.AppendUint32(b, uint32(q.full))
	}
	for _, x := range q.lo {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	for _, x := range q.step { // none for 1-bit codes
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
	v, bits := binary.LittleEndian.Uint16(data[4:]), data[7]
	switch {
	case v > formatVersion:
		return fmt.Errorf("%w: quant: format version %d (this build reads %d)", vector.ErrUnsupportedVersion, v, formatVersion)
	case v == 0 || v == 1 && bits != 0 || v == 2 && bits != 8 && bits != 1:
		return corrupt(fmt.Sprintf("format version %d with bits %d", v, bits))
	}
	head, perDim := headerBytes, 8 // lo and step
	if v == 2 {
		head += 4
	}
	if bits == 1 {
		perDim = 4 // the mean
	}
	dim := int(binary.LittleEndian.Uint32(data[8:]))
	if dim <= 0 || dim > MaxDim || len(data) != head+perDim*dim+4 {
		return corrupt(fmt.Sprintf("dimension %d in %d bytes", dim, len(data)))
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return corrupt("checksum mismatch")
	}
	r := Quantizer{
		dim:     dim,
		full:    dim,
		metric:  vector.Metric(data[6]),
		clip:    math.Float64frombits(binary.LittleEndian.Uint64(data[12:])),
		sample:  int(min(binary.LittleEndian.Uint64(data[20:]), math.MaxInt32)),
		trained: int(min(binary.LittleEndian.Uint64(data[28:]), math.MaxInt32)),
		bits:    8,
		lo:      make([]float32, dim),
	}
	if v == 2 {
		r.full = int(binary.LittleEndian.Uint32(data[headerBytes:]))
	}
	if !r.metric.Valid() || !(r.clip >= 0 && r.clip < 0.25) || bits == 1 && r.clip != 0 ||
		r.full < dim || r.full > MaxDim {
		return corrupt("bad header fields")
	}
	p := data[head:]
	if bits == 1 {
		r.bits = 1
		for j := range dim {
			if r.lo[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:])); !finite(r.lo[j]) {
				return corrupt(fmt.Sprintf("mean of dimension %d", j))
			}
		}
		*q = r
		return nil
	}
	r.step, r.inv = make([]float32, dim), make([]float32, dim)
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
