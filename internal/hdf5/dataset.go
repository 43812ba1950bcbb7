// This file holds Dataset: its description (shape, type, layout, filters)
// and the reading of its elements, contiguous or chunk by chunk, into
// float32 or int32 values.
package hdf5

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cairndb/cairn/vector"
)

// maxInflate bounds the bytes a deflated chunk of n bytes may claim to
// expand to: deflate's largest ratio is 1032 to 1, plus the stream's own
// overhead.
func maxInflate(n uint64) uint64 { return 1032*n + 1024 }

// readPiece is how much of a contiguous dataset is read at once.
const readPiece = 4 << 20

// Dataset is an array of elements of one [Type]. It is safe for concurrent
// use.
type Dataset struct {
	// Name is the dataset's name in its group.
	Name string
	// Shape is the array's dimensions, empty for a scalar.
	Shape []uint64
	// Type is the element type.
	Type Type

	f       *File
	layout  layout
	filters []filter
}

func (f *File) dataset(name string, o *object) (*Dataset, error) {
	what := fmt.Sprintf("dataset %q", name)
	ds := &Dataset{Name: name, f: f}
	tm, sm, lm := o.first(msgDatatype), o.first(msgDataspace), o.first(msgLayout)
	if tm == nil || sm == nil || lm == nil {
		if o.first(msgSymbolTable) != nil || o.first(msgLink) != nil || o.first(msgLinkInfo) != nil {
			return nil, fmt.Errorf("hdf5: %s is a group, not a dataset: %w", what, vector.ErrNotFound)
		}
		return nil, corruptf("%s: no datatype, dataspace or layout message", what)
	}
	if tm.flags&flagShared != 0 || sm.flags&flagShared != 0 {
		return nil, unsupportedf("%s: shared (committed) datatype or dataspace", what)
	}
	var err error
	if ds.Type, err = f.parseType(tm.data, what); err != nil {
		return nil, err
	}
	shape, null, err := f.parseShape(sm.data, what)
	if err != nil {
		return nil, err
	}
	if null {
		return nil, unsupportedf("%s: null dataspace", what)
	}
	ds.Shape = shape
	if _, err := elements(shape, ds.Type.Size, what); err != nil {
		return nil, err
	}
	if ds.layout, err = f.parseLayout(lm.data, len(shape), ds.Type.Size, what); err != nil {
		return nil, err
	}
	if fm := o.first(msgFilters); fm != nil {
		if ds.filters, err = f.parseFilters(fm.data, what); err != nil {
			return nil, err
		}
		if len(ds.filters) > 32 {
			return nil, corruptf("%s: %d filters", what, len(ds.filters))
		}
		if ds.layout.class != chunkedLayout && len(ds.filters) > 0 {
			return nil, corruptf("%s: filters on an unchunked dataset", what)
		}
	}
	return ds, nil
}

// Len returns the number of elements.
func (ds *Dataset) Len() int {
	n, _ := elements(ds.Shape, ds.Type.Size, ds.Name)
	return int(n)
}

// sink receives elements at index at (in row-major order) from src, which
// holds a whole number of elements.
type sink func(at uint64, src []byte)

// Float32s returns every element converted to float32, in row-major order.
// Integers convert as float32(x); float64 values are rounded to float32.
// Strings give an error wrapping [vector.ErrInvalidOptions].
func (ds *Dataset) Float32s(ctx context.Context) ([]float32, error) {
	t := ds.Type
	if t.Class == String {
		return nil, fmt.Errorf("hdf5: dataset %q holds %s, not numbers: %w", ds.Name, t, vector.ErrInvalidOptions)
	}
	var out []float32
	err := ds.read(ctx, func(n int) { out = make([]float32, n) }, func(at uint64, src []byte) {
		dst := out[at : at+uint64(len(src)/t.Size)]
		switch {
		case t.Class == Float && t.Size == 4:
			for i := range dst {
				dst[i] = math.Float32frombits(t.order.Uint32(src[4*i:]))
			}
		case t.Class == Float:
			for i := range dst {
				dst[i] = float32(math.Float64frombits(t.order.Uint64(src[8*i:])))
			}
		case t.Signed:
			for i := range dst {
				dst[i] = float32(signExtend(readUint(src[i*t.Size:], t), t.Size))
			}
		default:
			for i := range dst {
				dst[i] = float32(readUint(src[i*t.Size:], t))
			}
		}
	})
	return out, err
}

// Int32s returns every element of an Integer dataset as an int32, in
// row-major order. A value outside the range of int32 or a non-integer
// dataset gives an error wrapping [vector.ErrInvalidOptions].
func (ds *Dataset) Int32s(ctx context.Context) ([]int32, error) {
	t := ds.Type
	if t.Class != Integer {
		return nil, fmt.Errorf("hdf5: dataset %q holds %s, not integers: %w", ds.Name, t, vector.ErrInvalidOptions)
	}
	var out []int32
	bad := -1
	err := ds.read(ctx, func(n int) { out = make([]int32, n) }, func(at uint64, src []byte) {
		dst := out[at : at+uint64(len(src)/t.Size)]
		for i := range dst {
			u := readUint(src[i*t.Size:], t)
			v := int64(u)
			if t.Signed {
				v = signExtend(u, t.Size)
			} else if u > math.MaxInt64 {
				v = -1 << 63
			}
			if v < math.MinInt32 || v > math.MaxInt32 {
				if bad < 0 {
					bad = int(at) + i
				}
				continue
			}
			dst[i] = int32(v)
		}
	})
	if err == nil && bad >= 0 {
		return nil, fmt.Errorf("hdf5: dataset %q: element %d overflows int32: %w", ds.Name, bad, vector.ErrInvalidOptions)
	}
	return out, err
}

func readUint(b []byte, t Type) uint64 {
	switch t.Size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(t.order.Uint16(b))
	case 4:
		return uint64(t.order.Uint32(b))
	}
	return t.order.Uint64(b)
}

func signExtend(v uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(v<<shift) >> shift
}

// read checks the layout, calls alloc with the number of elements once the
// bytes it will read are known to be in the file, then passes every
// element to put.
func (ds *Dataset) read(ctx context.Context, alloc func(int), put sink) error {
	f, l, es := ds.f, &ds.layout, uint64(ds.Type.Size)
	what := fmt.Sprintf("dataset %q", ds.Name)
	n, err := elements(ds.Shape, ds.Type.Size, what)
	if err != nil {
		return err
	}
	total := n * es
	switch l.class {
	case compactLayout:
		if uint64(len(l.compact)) < total {
			return corruptf("%s: %d compact bytes for %d elements", what, len(l.compact), n)
		}
		alloc(int(n))
		put(0, l.compact[:total])
		return nil
	case contiguousLayout:
		if n == 0 {
			alloc(0)
			return nil
		}
		if l.addr == undefined {
			return unsupportedf("%s: never written (no storage allocated)", what)
		}
		if l.size < total || total > uint64(f.size) {
			return corruptf("%s: %d bytes stored for %d elements of %d bytes", what, l.size, n, es)
		}
		if _, err := f.read(l.addr+total-1, 1, what); err != nil { // the whole range is in the file
			return err
		}
		alloc(int(n))
		piece := readPiece / es * es
		for off := uint64(0); off < total; off += piece {
			if err := ctx.Err(); err != nil {
				return err
			}
			b, err := f.read(l.addr+off, min(piece, total-off), what)
			if err != nil {
				return err
			}
			put(off/es, b)
		}
		return nil
	}
	return ds.readChunks(ctx, alloc, put)
}

func (ds *Dataset) readChunks(ctx context.Context, alloc func(int), put sink) error {
	f, l, es := ds.f, &ds.layout, uint64(ds.Type.Size)
	what := fmt.Sprintf("dataset %q", ds.Name)
	refs, err := ds.chunks()
	if err != nil {
		return err
	}
	g, total, err := ds.grid()
	if err != nil {
		return err
	}
	chunkBytes := es
	for _, c := range l.chunk {
		chunkBytes *= c
	}
	// Every chunk present once, at a chunk boundary; every stored byte in
	// the file, and no more of them than the file holds; no chunk claiming
	// more than its stored bytes can expand to.
	seen := make(map[uint64]bool, len(refs))
	var stored uint64
	for _, c := range refs {
		idx := uint64(0)
		for k, o := range c.offset {
			if o%l.chunk[k] != 0 || o >= ds.Shape[k] {
				return corruptf("%s: chunk at %v is outside the grid", what, c.offset)
			}
			idx = idx*g[k] + o/l.chunk[k]
		}
		if seen[idx] {
			return corruptf("%s: chunk at %v stored twice", what, c.offset)
		}
		seen[idx] = true
		if c.addr == undefined {
			return unsupportedf("%s: chunk at %v never written (fill values)", what, c.offset)
		}
		active := ds.activeFilters(c)
		limit := c.size
		for _, fl := range active {
			if fl.id == filterDeflate {
				limit = maxInflate(c.size)
			}
		}
		if chunkBytes > limit || (len(active) == 0 && c.size < chunkBytes) {
			return corruptf("%s: chunk at %v stores %d bytes for %d", what, c.offset, c.size, chunkBytes)
		}
		if stored += c.size; stored > uint64(f.size) {
			return corruptf("%s: chunks store more bytes than the file holds", what)
		}
	}
	if uint64(len(refs)) != total {
		return unsupportedf("%s: %d of %d chunks written (the rest are fill values)", what, len(refs), total)
	}
	n, _ := elements(ds.Shape, ds.Type.Size, what)
	alloc(int(n))
	buf := make([]byte, chunkBytes)
	for _, c := range refs {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := f.read(c.addr, c.size, what)
		if err != nil {
			return err
		}
		data, err := ds.unfilter(raw, ds.activeFilters(c), buf, what)
		if err != nil {
			return fmt.Errorf("chunk at %v: %w", c.offset, err)
		}
		ds.scatter(data, c.offset, put)
	}
	return nil
}

// activeFilters returns the filters applied to chunk c, in the order they
// were applied when writing.
func (ds *Dataset) activeFilters(c chunkRef) []filter {
	if ds.layout.noEdgeFilter {
		for k, o := range c.offset {
			if o+ds.layout.chunk[k] > ds.Shape[k] {
				return nil
			}
		}
	}
	var out []filter
	for i, fl := range ds.filters {
		if i < 32 && c.mask&(1<<i) != 0 {
			continue
		}
		out = append(out, fl)
	}
	return out
}

// unfilter undoes the filters (last applied first) and returns the
// chunk's len(buf) bytes.
func (ds *Dataset) unfilter(raw []byte, filters []filter, buf []byte, what string) ([]byte, error) {
	data := raw
	for i := len(filters) - 1; i >= 0; i-- {
		switch filters[i].id {
		case filterDeflate:
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, corruptf("%s: deflate: %v", what, err)
			}
			out := make([]byte, len(buf))
			n, err := io.ReadFull(zr, out)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, corruptf("%s: deflate: %v", what, err)
			}
			if n != len(out) {
				return nil, corruptf("%s: deflate gave %d bytes, want %d", what, n, len(out))
			}
			data = out
		case filterShuffle:
			es := ds.Type.Size
			if len(filters[i].client) > 0 {
				es = int(filters[i].client[0])
			}
			data = unshuffle(data, es)
		}
	}
	if len(data) < len(buf) {
		return nil, corruptf("%s: %d bytes, want %d", what, len(data), len(buf))
	}
	return data[:len(buf)], nil
}

// unshuffle reverses the shuffle filter: the bytes of each position within
// an element were stored together.
func unshuffle(b []byte, es int) []byte {
	if es <= 1 || len(b) < es {
		return b
	}
	n := len(b) / es
	out := make([]byte, len(b))
	for j := range es {
		col := b[j*n : (j+1)*n]
		for i, x := range col {
			out[i*es+j] = x
		}
	}
	copy(out[n*es:], b[n*es:])
	return out
}

// scatter passes the in-bounds part of a chunk starting at element offset
// off to put, one run of the last dimension at a time.
func (ds *Dataset) scatter(data []byte, off []uint64, put sink) {
	shape, chunk, es := ds.Shape, ds.layout.chunk, uint64(ds.Type.Size)
	r := len(shape)
	ext := make([]uint64, r)
	for k := range r {
		ext[k] = min(chunk[k], shape[k]-off[k])
	}
	idx := make([]uint64, r) // position inside the chunk, last dimension 0
	for {
		src, dst := uint64(0), uint64(0)
		for k := range r {
			src = src*chunk[k] + idx[k]
			dst = dst*shape[k] + off[k] + idx[k]
		}
		put(dst, data[src*es:(src+ext[r-1])*es])
		k := r - 2
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < ext[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}
