// This file holds groups: the names of a group's members and their object
// header addresses, from a symbol table (version 1 B-tree of symbol table
// nodes, names in a local heap) or from link messages.
package hdf5

import "bytes"

// maxLinks bounds the members of a group this package lists.
const maxLinks = 1 << 20

// links returns the hard links of group o: member name to object header
// address.
func (f *File) links(o *object) (map[string]uint64, error) {
	out := map[string]uint64{}
	if m := o.first(msgSymbolTable); m != nil {
		d := f.decoder(m.data, "symbol table")
		tree, heap := d.addr(), d.addr()
		if d.err != nil {
			return nil, d.err
		}
		names, err := f.localHeap(heap)
		if err != nil {
			return nil, err
		}
		if err := f.groupTree(tree, names, out, 0, map[uint64]bool{}); err != nil {
			return nil, err
		}
		return out, nil
	}
	for _, m := range o.msgs {
		if m.typ != msgLink {
			continue
		}
		name, addr, hard, err := f.parseLink(m.data)
		if err != nil {
			return nil, err
		}
		if hard {
			out[name] = addr
		}
	}
	if m := o.first(msgLinkInfo); m != nil && len(out) == 0 {
		d := f.decoder(m.data, "link info")
		d.skip(1)
		if flags := d.u8(); flags&1 != 0 {
			d.skip(8)
		}
		if heap := d.addr(); d.err == nil && heap != undefined {
			return nil, unsupportedf("group: links in dense storage (a fractal heap)")
		}
	}
	return out, nil
}

// parseLink reads a link message: the name, and for a hard link the
// address of the object.
func (f *File) parseLink(b []byte) (name string, addr uint64, hard bool, err error) {
	d := f.decoder(b, "link")
	if v := d.u8(); v != 1 {
		if d.err != nil {
			return "", 0, false, d.err
		}
		return "", 0, false, versionf("link message", int(v))
	}
	flags := d.u8()
	typ := uint8(0)
	if flags&0x08 != 0 {
		typ = d.u8()
	}
	if flags&0x04 != 0 {
		d.skip(8) // creation order
	}
	if flags&0x10 != 0 {
		d.skip(1) // name character set
	}
	n := d.uint(1 << (flags & 3))
	if n > uint64(d.left()) {
		return "", 0, false, corruptf("link: name of %d bytes in %d", n, d.left())
	}
	name = string(d.take(int(n)))
	if typ == 0 {
		addr = d.addr()
	}
	return name, addr, typ == 0, d.err
}

// localHeap returns the data segment of the local heap at addr.
func (f *File) localHeap(addr uint64) ([]byte, error) {
	h, err := f.read(addr, uint64(8+2*f.lenSize+f.offSize), "local heap")
	if err != nil {
		return nil, err
	}
	d := f.decoder(h, "local heap")
	d.signature("HEAP")
	if v := d.u8(); v != 0 && d.err == nil {
		return nil, versionf("local heap", int(v))
	}
	d.skip(3)
	size := d.length()
	d.length() // free list
	data := d.addr()
	if d.err != nil {
		return nil, d.err
	}
	return f.read(data, size, "local heap data")
}

func heapString(heap []byte, off uint64) (string, error) {
	if off >= uint64(len(heap)) {
		return "", corruptf("local heap: name at %d of %d bytes", off, len(heap))
	}
	s := heap[off:]
	i := bytes.IndexByte(s, 0)
	if i < 0 {
		return "", corruptf("local heap: unterminated name at %d", off)
	}
	return string(s[:i]), nil
}

const maxTreeDepth = 64

// btreeNode is a version 1 B-tree node: its level, children and keys (the
// raw bytes of each key; there is one more key than children).
type btreeNode struct {
	level    int
	children []uint64
	keys     [][]byte
}

// btreeNode reads the version 1 B-tree node at addr of type typ (0 group,
// 1 chunks), whose keys are keySize bytes.
func (f *File) btreeNode(addr uint64, typ, keySize int, what string) (*btreeNode, error) {
	hs := uint64(8 + 2*f.offSize)
	h, err := f.read(addr, hs, what)
	if err != nil {
		return nil, err
	}
	d := f.decoder(h, what)
	d.signature("TREE")
	t, level, n := int(d.u8()), int(d.u8()), int(d.u16())
	if d.err != nil {
		return nil, d.err
	}
	if t != typ {
		return nil, corruptf("%s: B-tree node of type %d, want %d", what, t, typ)
	}
	body := uint64(n)*uint64(keySize+f.offSize) + uint64(keySize)
	raw, err := f.read(addr+hs, body, what)
	if err != nil {
		return nil, err
	}
	d = f.decoder(raw, what)
	node := &btreeNode{level: level, children: make([]uint64, n), keys: make([][]byte, n+1)}
	for i := range n {
		node.keys[i] = d.take(keySize)
		node.children[i] = d.addr()
	}
	node.keys[n] = d.take(keySize)
	return node, d.err
}

// groupTree walks a group B-tree, adding the entries of every symbol table
// node to out.
func (f *File) groupTree(addr uint64, heap []byte, out map[string]uint64, depth int, seen map[uint64]bool) error {
	if depth > maxTreeDepth || seen[addr] {
		return corruptf("group B-tree: cycle or depth over %d", maxTreeDepth)
	}
	seen[addr] = true
	node, err := f.btreeNode(addr, 0, f.lenSize, "group B-tree")
	if err != nil {
		return err
	}
	for _, c := range node.children {
		if node.level > 0 {
			if err := f.groupTree(c, heap, out, depth+1, seen); err != nil {
				return err
			}
			continue
		}
		if err := f.symbolNode(c, heap, out); err != nil {
			return err
		}
	}
	return nil
}

// symbolNode adds the entries of the symbol table node at addr to out.
func (f *File) symbolNode(addr uint64, heap []byte, out map[string]uint64) error {
	h, err := f.read(addr, 8, "symbol table node")
	if err != nil {
		return err
	}
	d := f.decoder(h, "symbol table node")
	d.signature("SNOD")
	if v := d.u8(); v != 1 && d.err == nil {
		return versionf("symbol table node", int(v))
	}
	d.skip(1)
	n := int(d.u16())
	if d.err != nil {
		return d.err
	}
	entry := 2*f.offSize + 24
	raw, err := f.read(addr+8, uint64(n*entry), "symbol table node")
	if err != nil {
		return err
	}
	d = f.decoder(raw, "symbol table node")
	for range n {
		nameOff := d.uint(f.offSize)
		obj := d.addr()
		d.skip(24) // cache type, reserved, scratch pad
		if d.err != nil {
			return d.err
		}
		name, err := heapString(heap, nameOff)
		if err != nil {
			return err
		}
		if len(out) >= maxLinks {
			return unsupportedf("group of more than %d members", maxLinks)
		}
		out[name] = obj
	}
	return nil
}
