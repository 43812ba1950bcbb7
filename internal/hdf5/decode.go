// This file holds the byte decoder every structure is parsed with: a cursor
// over a slice that reads little-endian integers and addresses of the
// file's widths, with a sticky error for reads past the end.
package hdf5

import "encoding/binary"

// undefined is HDF5's "undefined address": every bit set.
const undefined = ^uint64(0)

// decoder reads fields from b in order. A read past the end sets err (a
// corrupt-data error naming what) and returns zeros from then on.
type decoder struct {
	b       []byte
	off     int
	what    string // the structure being read, for the error
	offSize int    // bytes of an address ("size of offsets")
	lenSize int    // bytes of a length ("size of lengths")
	err     error
}

func (f *File) decoder(b []byte, what string) *decoder {
	return &decoder{b: b, what: what, offSize: f.offSize, lenSize: f.lenSize}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.err = corruptf("%s: truncated (%d bytes wanted at %d of %d)", d.what, n, d.off, len(d.b))
		return nil
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) skip(n int) { d.take(n) }

func (d *decoder) left() int {
	if d.err != nil {
		return 0
	}
	return len(d.b) - d.off
}

func (d *decoder) u8() uint8 {
	if s := d.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if s := d.take(2); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if s := d.take(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

// uint reads an n-byte little-endian unsigned integer (n from 1 to 8).
func (d *decoder) uint(n int) uint64 {
	if n < 1 || n > 8 {
		if d.err == nil {
			d.err = corruptf("%s: integer of %d bytes", d.what, n)
		}
		return 0
	}
	s := d.take(n)
	var v uint64
	for i := len(s) - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return v
}

// addr reads an address; all bits set (of the file's width) is undefined.
func (d *decoder) addr() uint64 {
	v := d.uint(d.offSize)
	if d.offSize < 8 && v == 1<<(8*d.offSize)-1 {
		return undefined
	}
	return v
}

func (d *decoder) length() uint64 { return d.uint(d.lenSize) }

// align8 skips to the next multiple of 8 from the start of b.
func (d *decoder) align8() {
	if r := d.off % 8; r != 0 {
		d.skip(8 - r)
	}
}

// signature checks that the next bytes are sig.
func (d *decoder) signature(sig string) {
	s := d.take(len(sig))
	if s != nil && string(s) != sig {
		d.err = corruptf("%s: signature %q, want %q", d.what, s, sig)
	}
}
