// This file holds datatypes and dataspaces: the element type and the shape
// of a dataset or an attribute.
package hdf5

import (
	"encoding/binary"
	"fmt"
)

// Class is the kind of an element.
type Class int

// The classes of element this package reads.
const (
	Integer Class = iota // a fixed-point number
	Float                // an IEEE 754 binary32 or binary64
	String               // a string of fixed or variable length
)

func (c Class) String() string {
	switch c {
	case Integer:
		return "integer"
	case Float:
		return "float"
	case String:
		return "string"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Type is the datatype of an element.
type Type struct {
	// Class is the kind of element.
	Class Class
	// Size is the element's size in bytes; for a variable-length string,
	// the size of its reference (length, heap address and index).
	Size int
	// Signed reports whether an Integer is signed.
	Signed bool
	// Variable reports whether a String has a variable length (its bytes
	// sit in the global heap).
	Variable bool

	order binary.ByteOrder
}

func (t Type) String() string {
	switch {
	case t.Class == String && t.Variable:
		return "variable-length string"
	case t.Class == String:
		return fmt.Sprintf("string of %d bytes", t.Size)
	case t.Class == Integer && !t.Signed:
		return fmt.Sprintf("uint%d", 8*t.Size)
	case t.Class == Integer:
		return fmt.Sprintf("int%d", 8*t.Size)
	}
	return fmt.Sprintf("float%d", 8*t.Size)
}

const maxTypeDepth = 4

// parseType reads a datatype message body.
func (f *File) parseType(b []byte, what string) (Type, error) {
	t, _, err := f.parseTypeAt(b, what, 0)
	return t, err
}

func (f *File) parseTypeAt(b []byte, what string, depth int) (Type, int, error) {
	d := f.decoder(b, what+": datatype")
	cv := d.u8()
	bits := d.take(3)
	size := int(d.u32())
	if d.err != nil {
		return Type{}, 0, d.err
	}
	class, version := int(cv&0x0F), int(cv>>4)
	if version < 1 || version > 4 {
		return Type{}, 0, versionf("datatype", version)
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if bits[0]&1 != 0 {
		order = binary.BigEndian
	}
	switch class {
	case 0: // fixed-point
		d.u16() // bit offset
		prec := d.u16()
		if d.err != nil {
			return Type{}, 0, d.err
		}
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return Type{}, 0, unsupportedf("%s: integer of %d bytes", what, size)
		}
		if int(prec) != 8*size || bits[0]&0x06 != 0 {
			return Type{}, 0, unsupportedf("%s: integer with %d bits of precision or padding", what, prec)
		}
		return Type{Class: Integer, Size: size, Signed: bits[0]&0x08 != 0, order: order}, d.off, nil
	case 1: // floating point
		d.skip(4) // bit offset, precision
		d.skip(2) // exponent location and size
		d.u8()    // mantissa location
		mant := d.u8()
		d.u32() // exponent bias
		if d.err != nil {
			return Type{}, 0, d.err
		}
		if bits[0]&0x40 != 0 {
			return Type{}, 0, unsupportedf("%s: VAX byte order", what)
		}
		if !(size == 4 && mant == 23) && !(size == 8 && mant == 52) {
			return Type{}, 0, unsupportedf("%s: float of %d bytes with a %d-bit mantissa", what, size, mant)
		}
		return Type{Class: Float, Size: size, order: order}, d.off, nil
	case 3: // string
		if size <= 0 {
			return Type{}, 0, corruptf("%s: string of %d bytes", what, size)
		}
		return Type{Class: String, Size: size, order: order}, d.off, nil
	case 9: // variable length
		if bits[0]&0x0F != 1 {
			return Type{}, 0, unsupportedf("%s: variable-length sequence", what)
		}
		if depth >= maxTypeDepth {
			return Type{}, 0, corruptf("%s: datatypes nested too deep", what)
		}
		_, n, err := f.parseTypeAt(b[d.off:], what, depth+1)
		if err != nil {
			return Type{}, 0, err
		}
		want := 4 + f.offSize + 4
		if size != want {
			return Type{}, 0, corruptf("%s: variable-length string reference of %d bytes, want %d", what, size, want)
		}
		return Type{Class: String, Size: size, Variable: true, order: order}, d.off + n, nil
	}
	return Type{}, 0, unsupportedf("%s: datatype class %d", what, class)
}

const maxRank = 32

// parseShape reads a dataspace message body: the dimensions (none for a
// scalar); null reports a null dataspace (no elements).
func (f *File) parseShape(b []byte, what string) (dims []uint64, null bool, err error) {
	d := f.decoder(b, what+": dataspace")
	version := int(d.u8())
	rank := int(d.u8())
	flags := d.u8()
	switch version {
	case 1:
		d.skip(5)
	case 2:
		typ := d.u8()
		if typ == 2 {
			return nil, true, d.err
		}
		if typ > 2 {
			return nil, false, corruptf("%s: dataspace type %d", what, typ)
		}
	default:
		if d.err != nil {
			return nil, false, d.err
		}
		return nil, false, versionf("dataspace", version)
	}
	if rank > maxRank {
		return nil, false, corruptf("%s: rank %d", what, rank)
	}
	dims = make([]uint64, rank)
	for i := range dims {
		dims[i] = d.length()
	}
	_ = flags // maximum dimensions and permutations follow; they do not change the reading
	return dims, false, d.err
}

// elements returns the product of dims, or an error if it overflows with
// elements of size bytes.
func elements(dims []uint64, size int, what string) (uint64, error) {
	n := uint64(1)
	for _, x := range dims {
		if x != 0 && n > (1<<62)/x/uint64(max(size, 1)) {
			return 0, corruptf("%s: %v elements of %d bytes overflow", what, dims, size)
		}
		n *= x
	}
	return n, nil
}
