// This file holds the data layout message (versions 3 and 4) and the
// filter pipeline message: where a dataset's bytes are and how its chunks
// were encoded.
package hdf5

import "fmt"

// Layout classes.
const (
	compactLayout    = 0
	contiguousLayout = 1
	chunkedLayout    = 2
)

// Chunk indexes. btreeIndex is the only index of layout version 3; the
// others are those of version 4.
const (
	btreeIndex       = 0
	singleChunkIndex = 1
	implicitIndex    = 2
	fixedArrayIndex  = 3
	extArrayIndex    = 4
	btree2Index      = 5
)

type layout struct {
	class int

	compact []byte // compact: the data

	addr, size uint64 // contiguous: where; chunked: the index's address

	chunk        []uint64 // chunked: the chunk's dimensions
	index        int
	noEdgeFilter bool   // partial edge chunks are stored unfiltered
	singleSize   uint64 // single chunk index of a filtered chunk: its size
	singleMask   uint32 // ... and its filter mask
	filtered     bool   // single chunk index: the chunk is filtered
	pageBits     int    // fixed array index
}

func (f *File) parseLayout(b []byte, rank, elemSize int, what string) (layout, error) {
	d := f.decoder(b, what+": layout")
	version := int(d.u8())
	if d.err != nil {
		return layout{}, d.err
	}
	if version != 3 && version != 4 {
		return layout{}, versionf("data layout message", version)
	}
	l := layout{class: int(d.u8())}
	switch l.class {
	case compactLayout:
		n := int(d.u16())
		l.compact = d.take(n)
	case contiguousLayout:
		l.addr, l.size = d.addr(), d.length()
	case chunkedLayout:
		if version == 3 {
			ndims := int(d.u8())
			l.addr = d.addr()
			dims := make([]uint64, 0, ndims)
			for range ndims {
				dims = append(dims, uint64(d.u32()))
			}
			if d.err != nil {
				return layout{}, d.err
			}
			if err := l.setChunk(dims, rank, elemSize, what); err != nil {
				return layout{}, err
			}
			l.index = btreeIndex
			break
		}
		flags := d.u8()
		l.noEdgeFilter = flags&0x01 != 0
		ndims := int(d.u8())
		width := int(d.u8())
		dims := make([]uint64, 0, ndims)
		for range ndims {
			dims = append(dims, d.uint(width))
		}
		l.index = int(d.u8())
		if d.err != nil {
			return layout{}, d.err
		}
		if err := l.setChunk(dims, rank, elemSize, what); err != nil {
			return layout{}, err
		}
		switch l.index {
		case singleChunkIndex:
			if flags&0x02 != 0 {
				l.filtered = true
				l.singleSize = d.length()
				l.singleMask = d.u32()
			}
		case implicitIndex:
		case fixedArrayIndex:
			l.pageBits = int(d.u8())
		case extArrayIndex, btree2Index:
			return layout{}, unsupportedf("%s: the chunk index of a resizable dataset (type %d)", what, l.index)
		default:
			return layout{}, corruptf("%s: chunk index type %d", what, l.index)
		}
		l.addr = d.addr()
	case 3:
		return layout{}, unsupportedf("%s: virtual dataset", what)
	default:
		return layout{}, corruptf("%s: layout class %d", what, l.class)
	}
	return l, d.err
}

// setChunk takes the chunk dimensions of a layout message: the dataset's
// rank, then (as HDF5 writes it) the element size.
func (l *layout) setChunk(dims []uint64, rank, elemSize int, what string) error {
	if len(dims) == rank+1 {
		if dims[rank] != uint64(elemSize) {
			return corruptf("%s: chunk element size %d, datatype size %d", what, dims[rank], elemSize)
		}
		dims = dims[:rank]
	}
	if len(dims) != rank || rank == 0 {
		return corruptf("%s: %d chunk dimensions for rank %d", what, len(dims), rank)
	}
	for _, c := range dims {
		if c == 0 || c > 1<<32 {
			return corruptf("%s: chunk dimension %d", what, c)
		}
	}
	l.chunk = dims
	return nil
}

// Filter identifiers.
const (
	filterDeflate = 1
	filterShuffle = 2
)

type filter struct {
	id     uint16
	client []uint32
}

func (f *File) parseFilters(b []byte, what string) ([]filter, error) {
	d := f.decoder(b, what+": filter pipeline")
	version := int(d.u8())
	n := int(d.u8())
	if version == 1 {
		d.skip(6)
	} else if version != 2 {
		if d.err != nil {
			return nil, d.err
		}
		return nil, versionf("filter pipeline message", version)
	}
	var out []filter
	for range n {
		id := d.u16()
		nameLen := 0
		if version == 1 || id >= 256 {
			nameLen = int(d.u16())
		}
		d.u16() // flags
		nv := int(d.u16())
		if version == 1 && nameLen%8 != 0 {
			nameLen += 8 - nameLen%8
		}
		d.skip(nameLen)
		if nv > d.left()/4 {
			return nil, corruptf("%s: filter %d with %d values", what, id, nv)
		}
		fl := filter{id: id, client: make([]uint32, nv)}
		for i := range fl.client {
			fl.client[i] = d.u32()
		}
		if version == 1 && nv%2 == 1 {
			d.skip(4)
		}
		if d.err != nil {
			return nil, d.err
		}
		switch id {
		case filterDeflate, filterShuffle:
		default:
			return nil, unsupportedf("%s: filter %d (only deflate and shuffle are read)", what, id)
		}
		out = append(out, fl)
	}
	return out, nil
}

func (fl filter) String() string {
	switch fl.id {
	case filterDeflate:
		return "deflate"
	case filterShuffle:
		return "shuffle"
	}
	return fmt.Sprintf("filter %d", fl.id)
}
