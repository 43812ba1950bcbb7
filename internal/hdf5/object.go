// This file holds object headers (versions 1 and 2, with their
// continuation blocks): the list of messages that describes a group or a
// dataset.
package hdf5

import "fmt"

// Message types this package reads.
const (
	msgNIL          = 0x00
	msgDataspace    = 0x01
	msgLinkInfo     = 0x02
	msgDatatype     = 0x03
	msgLink         = 0x06
	msgLayout       = 0x08
	msgFilters      = 0x0B
	msgAttribute    = 0x0C
	msgContinuation = 0x10
	msgSymbolTable  = 0x11
	msgAttrInfo     = 0x15
)

// Message flags.
const (
	flagShared       = 0x02
	flagMustRead     = 0x80 // fail if the type is not understood
	maxContinuations = 1 << 12
)

// understood are the message types this package reads or may ignore
// without misreading the data: everything else with flagMustRead set
// stops the read.
var understood = map[uint16]bool{
	msgNIL: true, msgDataspace: true, msgLinkInfo: true, msgDatatype: true, 0x04: true, 0x05: true,
	msgLink: true, msgLayout: true, msgFilters: true, msgAttribute: true, 0x0D: true, 0x0E: true,
	msgContinuation: true, msgSymbolTable: true, 0x12: true, msgAttrInfo: true, 0x0A: true, 0x16: true,
}

// message is one header message: its type, flags and body.
type message struct {
	typ   uint16
	flags uint8
	data  []byte
}

// object is a parsed object header.
type object struct {
	addr uint64
	msgs []message
}

// first returns the first message of type typ, or nil.
func (o *object) first(typ uint16) *message {
	for i := range o.msgs {
		if o.msgs[i].typ == typ {
			return &o.msgs[i]
		}
	}
	return nil
}

// object reads the object header at addr with every continuation block.
func (f *File) object(addr uint64, what string) (*object, error) {
	what = fmt.Sprintf("%s: object header at %d", what, addr)
	head, err := f.read(addr, min(16, uint64(f.size)-min(uint64(f.size), f.base+addr)), what)
	if err != nil {
		return nil, err
	}
	o := &object{addr: addr}
	if len(head) >= 4 && string(head[:4]) == "OHDR" {
		err = f.objectV2(o, addr, what)
	} else {
		err = f.objectV1(o, addr, what)
	}
	if err != nil {
		return nil, err
	}
	for _, m := range o.msgs {
		if m.flags&flagMustRead != 0 && !understood[m.typ] {
			return nil, unsupportedf("%s: message type %#x marked must-understand", what, m.typ)
		}
	}
	return o, nil
}

type block struct{ addr, size uint64 }

func (f *File) objectV1(o *object, addr uint64, what string) error {
	h, err := f.read(addr, 16, what)
	if err != nil {
		return err
	}
	d := f.decoder(h, what)
	if v := d.u8(); v != 1 {
		return versionf("object header", int(v))
	}
	d.skip(1)
	nmsgs := int(d.u16())
	d.u32() // reference count
	size := uint64(d.u32())
	if d.err != nil {
		return d.err
	}
	blocks := []block{{addr + 16, size}}
	seen := map[uint64]bool{}
	for len(blocks) > 0 && len(o.msgs) < nmsgs {
		b := blocks[0]
		blocks = blocks[1:]
		if seen[b.addr] || len(seen) > maxContinuations {
			return corruptf("%s: continuation cycle", what)
		}
		seen[b.addr] = true
		raw, err := f.read(b.addr, b.size, what)
		if err != nil {
			return err
		}
		d := f.decoder(raw, what)
		for d.left() >= 8 && len(o.msgs) < nmsgs {
			typ, n, flags := d.u16(), int(d.u16()), d.u8()
			d.skip(3)
			body := d.take(n)
			if d.err != nil {
				return d.err
			}
			m := message{typ, flags, body}
			o.msgs = append(o.msgs, m)
			if typ == msgContinuation {
				c, err := f.continuation(m, what)
				if err != nil {
					return err
				}
				blocks = append(blocks, c)
			}
		}
	}
	return nil
}

func (f *File) objectV2(o *object, addr uint64, what string) error {
	h, err := f.read(addr, min(6+16+4+8, uint64(f.size)-min(uint64(f.size), f.base+addr)), what)
	if err != nil {
		return err
	}
	d := f.decoder(h, what)
	d.signature("OHDR")
	if v := d.u8(); v != 2 && d.err == nil {
		return versionf("object header", int(v))
	}
	flags := d.u8()
	if flags&0x20 != 0 {
		d.skip(16) // times
	}
	if flags&0x10 != 0 {
		d.skip(4) // attribute phase change values
	}
	size := d.uint(1 << (flags & 3))
	if d.err != nil {
		return d.err
	}
	crtOrder := flags&0x04 != 0
	start := uint64(d.off)
	if size > uint64(f.size) {
		return corruptf("%s: chunk of %d bytes", what, size)
	}
	raw, err := f.read(addr, start+size+4, what)
	if err != nil {
		return err
	}
	if err := verify(raw, int(start+size), what); err != nil {
		return err
	}
	if err := f.messagesV2(o, raw[start:start+size], crtOrder, what); err != nil {
		return err
	}
	seen := map[uint64]bool{}
	for i := 0; i < len(o.msgs); i++ {
		if o.msgs[i].typ != msgContinuation {
			continue
		}
		c, err := f.continuation(o.msgs[i], what)
		if err != nil {
			return err
		}
		if seen[c.addr] || len(seen) > maxContinuations {
			return corruptf("%s: continuation cycle", what)
		}
		seen[c.addr] = true
		raw, err := f.read(c.addr, c.size, what)
		if err != nil {
			return err
		}
		if len(raw) < 8 || string(raw[:4]) != "OCHK" {
			return corruptf("%s: continuation block at %d lacks its signature", what, c.addr)
		}
		if err := verify(raw, len(raw)-4, what+": continuation block"); err != nil {
			return err
		}
		if err := f.messagesV2(o, raw[4:len(raw)-4], crtOrder, what); err != nil {
			return err
		}
	}
	return nil
}

// messagesV2 appends the version 2 messages of one chunk (without its
// signature and checksum) to o.
func (f *File) messagesV2(o *object, b []byte, crtOrder bool, what string) error {
	d := f.decoder(b, what)
	hdr := 4
	if crtOrder {
		hdr = 6
	}
	for d.left() >= hdr {
		typ, n, flags := uint16(d.u8()), int(d.u16()), d.u8()
		if crtOrder {
			d.skip(2)
		}
		body := d.take(n)
		if d.err != nil {
			return d.err
		}
		o.msgs = append(o.msgs, message{typ, flags, body})
		if len(o.msgs) > 1<<16 {
			return corruptf("%s: too many messages", what)
		}
	}
	return nil
}

func (f *File) continuation(m message, what string) (block, error) {
	d := f.decoder(m.data, what+": continuation")
	b := block{d.addr(), d.length()}
	if d.err != nil {
		return block{}, d.err
	}
	if b.addr == undefined {
		return block{}, corruptf("%s: continuation at an undefined address", what)
	}
	return b, nil
}
