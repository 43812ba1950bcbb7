// This file holds the chunk indexes (version 1 B-tree, single chunk,
// implicit, fixed array): the list of a chunked dataset's chunks, each
// with its position, address, stored size and filter mask.
package hdf5

import "encoding/binary"

// chunkRef is one stored chunk.
type chunkRef struct {
	offset []uint64 // the chunk's first element, per dimension
	addr   uint64
	size   uint64 // bytes stored (after the filters)
	mask   uint32 // bit i set: filter i was not applied
}

// grid returns the number of chunks along each dimension and in all.
func (ds *Dataset) grid() ([]uint64, uint64, error) {
	g := make([]uint64, len(ds.Shape))
	total := uint64(1)
	for i, s := range ds.Shape {
		c := ds.layout.chunk[i]
		g[i] = (s + c - 1) / c
		if g[i] != 0 && total > uint64(ds.f.size)/g[i] {
			return nil, 0, corruptf("dataset %q: more chunks than the file has bytes", ds.Name)
		}
		total *= g[i]
	}
	return g, total, nil
}

// offsetOf returns the first element of chunk number i in row-major order
// of the grid g.
func (ds *Dataset) offsetOf(i uint64, g []uint64) []uint64 {
	off := make([]uint64, len(g))
	for k := len(g) - 1; k >= 0; k-- {
		off[k] = i % g[k] * ds.layout.chunk[k]
		i /= g[k]
	}
	return off
}

// chunks returns every stored chunk of a chunked dataset.
func (ds *Dataset) chunks() ([]chunkRef, error) {
	g, total, err := ds.grid()
	if err != nil {
		return nil, err
	}
	if total == 0 {
		return nil, nil
	}
	l := &ds.layout
	chunkBytes := uint64(ds.Type.Size)
	for _, c := range l.chunk {
		chunkBytes *= c
	}
	switch l.index {
	case btreeIndex:
		var out []chunkRef
		err := ds.chunkTree(l.addr, 0, map[uint64]bool{}, total, &out)
		return out, err
	case singleChunkIndex:
		if total != 1 {
			return nil, corruptf("dataset %q: single-chunk index for %d chunks", ds.Name, total)
		}
		c := chunkRef{offset: make([]uint64, len(g)), addr: l.addr, size: chunkBytes}
		if l.filtered {
			c.size, c.mask = l.singleSize, l.singleMask
		}
		return []chunkRef{c}, nil
	case implicitIndex:
		if len(ds.filters) > 0 {
			return nil, corruptf("dataset %q: implicit chunk index with filters", ds.Name)
		}
		out := make([]chunkRef, total)
		for i := range out {
			out[i] = chunkRef{offset: ds.offsetOf(uint64(i), g), addr: l.addr + uint64(i)*chunkBytes, size: chunkBytes}
		}
		return out, nil
	case fixedArrayIndex:
		return ds.fixedArray(g, total, chunkBytes)
	}
	return nil, corruptf("dataset %q: chunk index %d", ds.Name, l.index)
}

// chunkTree walks a version 1 B-tree of chunks, appending its chunks to
// out (at most limit of them).
func (ds *Dataset) chunkTree(addr uint64, depth int, seen map[uint64]bool, limit uint64, out *[]chunkRef) error {
	if depth > maxTreeDepth || seen[addr] {
		return corruptf("dataset %q: chunk B-tree: cycle or depth over %d", ds.Name, maxTreeDepth)
	}
	seen[addr] = true
	rank := len(ds.Shape)
	keySize := 8 + 8*(rank+1)
	node, err := ds.f.btreeNode(addr, 1, keySize, "chunk B-tree of "+ds.Name)
	if err != nil {
		return err
	}
	for i, c := range node.children {
		if node.level > 0 {
			if err := ds.chunkTree(c, depth+1, seen, limit, out); err != nil {
				return err
			}
			continue
		}
		if uint64(len(*out)) >= limit {
			return corruptf("dataset %q: more chunks than its %d", ds.Name, limit)
		}
		k := node.keys[i]
		ref := chunkRef{
			size:   uint64(binary.LittleEndian.Uint32(k)),
			mask:   binary.LittleEndian.Uint32(k[4:]),
			addr:   c,
			offset: make([]uint64, rank),
		}
		for j := range rank {
			ref.offset[j] = binary.LittleEndian.Uint64(k[8+8*j:])
		}
		*out = append(*out, ref)
	}
	return nil
}

// fixedArray reads the fixed-array chunk index (layout version 4).
func (ds *Dataset) fixedArray(g []uint64, total, chunkBytes uint64) ([]chunkRef, error) {
	f := ds.f
	what := "fixed array of " + ds.Name
	h, err := f.read(ds.layout.addr, uint64(8+f.lenSize+f.offSize+4), what)
	if err != nil {
		return nil, err
	}
	d := f.decoder(h, what)
	d.signature("FAHD")
	if v := d.u8(); v != 0 && d.err == nil {
		return nil, versionf("fixed array", int(v))
	}
	if err := verify(h, len(h)-4, what); err != nil {
		return nil, err
	}
	client := d.u8()
	entry := int(d.u8())
	pageBits := int(d.u8())
	n := d.length()
	block := d.addr()
	if d.err != nil {
		return nil, d.err
	}
	filtered := client == 1
	sizeWidth := entry - f.offSize - 4
	switch {
	case client > 1:
		return nil, corruptf("%s: client %d", what, client)
	case n != total:
		return nil, corruptf("%s: %d entries for %d chunks", what, n, total)
	case !filtered && entry != f.offSize, filtered && (sizeWidth < 1 || sizeWidth > 8):
		return nil, corruptf("%s: entries of %d bytes", what, entry)
	case filtered != (len(ds.filters) > 0):
		return nil, corruptf("%s: filtered entries do not match the pipeline", what)
	case pageBits > 32:
		return nil, corruptf("%s: %d page bits", what, pageBits)
	}
	prefix := uint64(6 + f.offSize)
	page := uint64(1) << pageBits
	var raw []byte
	if n <= page {
		b, err := f.read(block, prefix+n*uint64(entry)+4, what)
		if err != nil {
			return nil, err
		}
		if err := verify(b, len(b)-4, what+": data block"); err != nil {
			return nil, err
		}
		raw = b[prefix : len(b)-4]
	} else {
		pages := (n + page - 1) / page
		b, err := f.read(block, prefix+(pages+7)/8+4, what) // the header and the page bitmap
		if err != nil {
			return nil, err
		}
		if err := verify(b, len(b)-4, what+": data block"); err != nil {
			return nil, err
		}
		at := block + uint64(len(b))
		for p := range pages {
			k := min(page, n-p*page)
			b, err := f.read(at, k*uint64(entry)+4, what)
			if err != nil {
				return nil, err
			}
			if err := verify(b, len(b)-4, what+": page"); err != nil {
				return nil, err
			}
			raw = append(raw, b[:len(b)-4]...)
			at += uint64(len(b))
		}
	}
	if bd, err := f.read(block, 4, what); err != nil {
		return nil, err
	} else if string(bd) != "FADB" {
		return nil, corruptf("%s: data block signature %q", what, bd)
	}
	d = f.decoder(raw, what)
	out := make([]chunkRef, n)
	for i := range out {
		c := chunkRef{offset: ds.offsetOf(uint64(i), g), addr: d.addr(), size: chunkBytes}
		if filtered {
			c.size = d.uint(sizeWidth)
			c.mask = d.u32()
		}
		out[i] = c
	}
	return out, d.err
}
