// This file holds attributes (attribute messages, versions 1 to 3) and
// the global heap that holds the bytes of variable-length strings.
package hdf5

import (
	"bytes"
	"fmt"
	"math"

	"github.com/cairndb/cairn/vector"
)

// Attribute is a named value attached to an object: a scalar or an array of
// one [Type]. It is safe for concurrent use.
type Attribute struct {
	// Name is the attribute's name.
	Name string
	// Type is the element type.
	Type Type
	// Shape is the array's dimensions, empty for a scalar.
	Shape []uint64

	f    *File
	data []byte
}

// attrs returns every attribute stored in o's header.
func (f *File) attrs(o *object) ([]*Attribute, error) {
	var out []*Attribute
	for _, m := range o.msgs {
		if m.typ != msgAttribute {
			continue
		}
		a, err := f.parseAttr(m.data)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (f *File) attr(o *object, name string) (*Attribute, error) {
	as, err := f.attrs(o)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		if a.Name == name {
			return a, nil
		}
	}
	if m := o.first(msgAttrInfo); m != nil {
		d := f.decoder(m.data, "attribute info")
		d.skip(1)
		if flags := d.u8(); flags&1 != 0 {
			d.skip(2)
		}
		if heap := d.addr(); d.err == nil && heap != undefined {
			return nil, unsupportedf("attribute %q: attributes in dense storage", name)
		}
	}
	return nil, fmt.Errorf("hdf5: attribute %q: %w", name, vector.ErrNotFound)
}

func (f *File) parseAttr(b []byte) (*Attribute, error) {
	d := f.decoder(b, "attribute")
	version := int(d.u8())
	flags := d.u8()
	nameLen, typeLen, spaceLen := int(d.u16()), int(d.u16()), int(d.u16())
	if version == 3 {
		d.skip(1) // name character set
	}
	if d.err != nil {
		return nil, d.err
	}
	pad := func() {}
	switch version {
	case 1:
		pad = d.align8
		if flags != 0 {
			return nil, corruptf("attribute: version 1 with flags %#x", flags)
		}
	case 2, 3:
		if flags&0x03 != 0 {
			return nil, unsupportedf("attribute: shared datatype or dataspace")
		}
	default:
		return nil, versionf("attribute message", version)
	}
	name := d.take(nameLen)
	pad()
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	what := fmt.Sprintf("attribute %q", name)
	tb := d.take(typeLen)
	pad()
	sb := d.take(spaceLen)
	pad()
	if d.err != nil {
		return nil, d.err
	}
	t, err := f.parseType(tb, what)
	if err != nil {
		return nil, err
	}
	shape, null, err := f.parseShape(sb, what)
	if err != nil {
		return nil, err
	}
	n, err := elements(shape, t.Size, what)
	if err != nil {
		return nil, err
	}
	if null {
		n = 0
	}
	if n*uint64(t.Size) > uint64(d.left()) {
		return nil, corruptf("%s: %d elements of %d bytes in %d bytes", what, n, t.Size, d.left())
	}
	return &Attribute{Name: string(name), Type: t, Shape: shape, f: f, data: d.take(int(n) * t.Size)}, nil
}

// Len returns the number of elements (1 for a scalar).
func (a *Attribute) Len() int { return len(a.data) / max(a.Type.Size, 1) }

// Strings returns the elements of a String attribute: fixed-length strings
// with their padding removed, variable-length ones read from the global
// heap.
func (a *Attribute) Strings() ([]string, error) {
	if a.Type.Class != String {
		return nil, fmt.Errorf("hdf5: attribute %q holds %s, not strings: %w", a.Name, a.Type, vector.ErrInvalidOptions)
	}
	out := make([]string, a.Len())
	for i := range out {
		el := a.data[i*a.Type.Size : (i+1)*a.Type.Size]
		if !a.Type.Variable {
			out[i] = string(bytes.TrimRight(el, "\x00 "))
			continue
		}
		d := a.f.decoder(el, "variable-length string")
		n := d.u32()
		heap := d.addr()
		index := d.u32()
		if d.err != nil {
			return nil, d.err
		}
		if n == 0 {
			continue
		}
		s, err := a.f.globalObject(heap, index)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		if uint64(n) > uint64(len(s)) {
			return nil, corruptf("attribute %q: string of %d bytes in a heap object of %d", a.Name, n, len(s))
		}
		out[i] = string(s[:n])
	}
	return out, nil
}

// String returns the value of a scalar (or one-element) String attribute.
func (a *Attribute) String() (string, error) {
	ss, err := a.Strings()
	if err != nil {
		return "", err
	}
	if len(ss) != 1 {
		return "", fmt.Errorf("hdf5: attribute %q holds %d strings, not one: %w", a.Name, len(ss), vector.ErrInvalidOptions)
	}
	return ss[0], nil
}

// Int64 returns the value of a scalar (or one-element) Integer attribute.
func (a *Attribute) Int64() (int64, error) {
	if a.Type.Class != Integer || a.Len() != 1 {
		return 0, fmt.Errorf("hdf5: attribute %q holds %d of %s, not one integer: %w", a.Name, a.Len(), a.Type, vector.ErrInvalidOptions)
	}
	v := readUint(a.data, a.Type)
	if !a.Type.Signed {
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("hdf5: attribute %q: %d overflows int64: %w", a.Name, v, vector.ErrInvalidOptions)
		}
		return int64(v), nil
	}
	return signExtend(v, a.Type.Size), nil
}

// globalObject returns the bytes of object index of the global heap
// collection at addr.
func (f *File) globalObject(addr uint64, index uint32) ([]byte, error) {
	h, err := f.read(addr, uint64(8+f.lenSize), "global heap")
	if err != nil {
		return nil, err
	}
	d := f.decoder(h, "global heap")
	d.signature("GCOL")
	if v := d.u8(); v != 1 && d.err == nil {
		return nil, versionf("global heap", int(v))
	}
	d.skip(3)
	size := d.length()
	if d.err != nil {
		return nil, d.err
	}
	raw, err := f.read(addr, size, "global heap")
	if err != nil {
		return nil, err
	}
	d = f.decoder(raw, "global heap")
	d.skip(8 + f.lenSize)
	for d.left() >= 8+f.lenSize {
		id := d.u16()
		d.skip(6) // reference count, reserved
		n := d.length()
		if id == 0 {
			break // free space: the rest of the collection
		}
		if n > uint64(d.left()) {
			return nil, corruptf("global heap: object %d of %d bytes in %d", id, n, d.left())
		}
		obj := d.take(int(n))
		d.align8()
		if uint32(id) == index {
			return obj, nil
		}
	}
	return nil, corruptf("global heap at %d: no object %d", addr, index)
}
