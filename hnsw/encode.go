package hnsw

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/cairndb/cairn/internal/reservoir"
	"github.com/cairndb/cairn/vector"
)

// The encoding of a graph (all integers little-endian):
//
//	header   magic "cairnHNS" (8 bytes), format version (uint32),
//	         body length (uint64)
//	body     dim (uint32), metric (uint8), M, EfConstruction, EfSearch
//	         (uint32 each), LevelMult (float64 bits), Seed (uint64),
//	         slots used (uint32), live nodes (uint32),
//	         entry node (uint32), entry level + 1 (uint8; 0 if empty),
//	         then per slot: level (uint8, 0xFF for a free slot) and, for a
//	         node, its id (uint64) and for each layer 0..level a count
//	         (uint32) followed by that many slot numbers (uint32)
//	trailer  CRC-32C of header and body (uint32)
//
// Version 2, written by an index with [Options.Quantize] set, adds after
// Seed: Quantize (uint8), the length of the quantizer's binary form
// (uint32; 0 if none was trained) and that form
// ([quant.Quantizer.MarshalBinary]). An index without quantization writes
// version 1, byte for byte as before; a version-1 graph is read with the
// reading index's own Quantize option, and codes trained from the store.
// Version 3, written with [QuantizeBinary] or [Options.QuantizeDims], adds
// QuantizeDims (uint32) after Quantize, so that builds that know only
// int8 codes of whole vectors refuse it as a newer format.
// Version 4, written by an index with [Options.TargetRecall] that has a
// calibration, holds the fields of version 3 (zero for an index without
// quantization, and then read, as version 1 is, with the reading index's
// Quantize) followed by the calibration: Target (float64 bits), K,
// Ef (uint32 each), Exact (uint8), Recall, StdErr (float64 bits each),
// Queries, RealQueries (uint32 each), Source (uint8: 1 queries, 2
// held-out, 3 caller, 4 mixed), Len (uint32), Took (uint64 nanoseconds),
// the deletes counted since it (uint32), and the length of Reason
// (uint32, at most 1,024) and its UTF-8 bytes. An index without a
// calibration writes the version its quantization asks for, byte for
// byte as before; builds that know no saved calibration refuse version 4
// as newer, and rebuild. A graph of versions 1 to 3 loads without a
// calibration, and calibrates as before.
//
// Vectors are not encoded: they live in the store, and ReadFrom resolves
// every id against it. Nor are codes: ReadFrom encodes them again from the
// store with the saved quantizer (or trains one when there is none).
const (
	magic         = "cairnHNS"
	formatVersion = 4
	headerLen     = 8 + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrStoreMismatch is returned (wrapped) by [Index.ReadFrom] when a graph is
// intact but does not describe the store it is loaded over: an id the store
// lacks, or a different number of vectors, dimension or metric. It wraps
// [vector.ErrCorrupt]; the usual remedy is to rebuild the graph with
// [Index.Track] and save it again.
var ErrStoreMismatch = fmt.Errorf("hnsw: graph does not match its store: %w", vector.ErrCorrupt)

// WriteTo writes the graph (not the vectors) to w in the versioned,
// checksummed format that [Index.ReadFrom] reads, after repairing the
// graph around pending deletions ([Index.Flush], beside running searches
// and inserts). It then waits for running searches and inserts and
// blocks new ones while it encodes.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	_ = ix.Flush(context.Background()) // beside searches; cannot fail
	ix.mu.Lock()
	ix.unlinkAllLocked() // deleted since: few
	// The calibration is read once: a background one may end meanwhile,
	// and the version must agree with the body.
	cal, calibrated := ix.cal.saved(&ix.opts)
	version := ix.writeVersion(calibrated)
	body := ix.encodeLocked(version, cal)
	ix.mu.Unlock()
	var hdr [headerLen]byte
	copy(hdr[:], magic)
	binary.LittleEndian.PutUint32(hdr[8:], version)
	binary.LittleEndian.PutUint64(hdr[12:], uint64(len(body)))
	crc := crc32.Update(crc32.Checksum(hdr[:], castagnoli), castagnoli, body)
	body = binary.LittleEndian.AppendUint32(body, crc)
	n, err := w.Write(hdr[:])
	if err != nil {
		return int64(n), fmt.Errorf("hnsw: write: %w", err)
	}
	m, err := w.Write(body)
	if err != nil {
		return int64(n + m), fmt.Errorf("hnsw: write: %w", err)
	}
	return int64(n + m), nil
}

// encodeLocked returns the body of the graph in format version, with
// cal, the calibration, for version 4. mu is held.
func (ix *Index) encodeLocked(version uint32, cal *savedCalibration) []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, 64+int(ix.next)*(13+4*ix.stride0))
	b = le.AppendUint32(b, uint32(ix.dim))
	b = append(b, byte(ix.metric))
	b = le.AppendUint32(b, uint32(ix.opts.M))
	b = le.AppendUint32(b, uint32(ix.opts.EfConstruction))
	b = le.AppendUint32(b, uint32(ix.opts.EfSearch))
	b = le.AppendUint64(b, math.Float64bits(ix.opts.LevelMult))
	b = le.AppendUint64(b, ix.opts.Seed)
	if version >= 2 {
		b = ix.appendQuantizer(b, version)
	}
	if version >= 4 {
		b = cal.appendTo(b)
	}
	b = le.AppendUint32(b, uint32(ix.next))
	b = le.AppendUint32(b, uint32(ix.live))
	ep, top, ok := ix.entry()
	if ok {
		b = le.AppendUint32(b, uint32(ep))
		b = append(b, byte(top+1))
	} else {
		b = le.AppendUint32(b, 0)
		b = append(b, 0)
	}
	for s := node(0); s < ix.next; s++ {
		lv := ix.levelOf(s)
		b = append(b, lv)
		if lv == freeLevel {
			continue
		}
		b = le.AppendUint64(b, uint64(ix.idOf(s)))
		for lc := 0; lc <= int(lv); lc++ {
			l := ix.list(s, lc)
			for _, x := range l[:1+l[0]] {
				b = le.AppendUint32(b, x)
			}
		}
	}
	return b
}

// decoder reads little-endian values from a byte slice; the first read past
// the end sets err and every later read returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || len(d.b) < n {
		if d.err == nil {
			d.err = errors.New("truncated body")
		}
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// ReadFrom replaces the graph with one read from r, written by
// [Index.WriteTo], and checks it against the store: the same ids, as many
// vectors, the same dimension and metric. The graph's shaping options (M,
// EfConstruction, LevelMult, Seed) and EfSearch come from the stream; Workers
// and Progress stay. A truncated or damaged stream gives an error wrapping
// [vector.ErrCorrupt], a newer format [vector.ErrUnsupportedVersion], a
// graph that does not match the store [ErrStoreMismatch]; on error the index
// is unchanged. ReadFrom reads exactly the bytes WriteTo wrote. It waits for
// running searches and inserts and blocks new ones while it installs the
// graph, and, for a graph saved by a version that could leave a node no
// search reaches, while it links such nodes (see [Index.Flush]).
//
// A graph saved with its calibration (by an index with TargetRecall)
// brings it back: if it was made for the reading index's TargetRecall and
// TargetK, on the codes the graph loads with (not trained again at load),
// [Index.Calibration] returns it at once and queries search at its beam
// width from the first; it is redone in the background by the usual
// rules (growth, deletes, real queries). Otherwise, and for a graph saved
// without one, the index calibrates the loaded graph in the background,
// as [Index.WaitCalibration] can wait for.
func (ix *Index) ReadFrom(r io.Reader) (int64, error) {
	var hdr [headerLen]byte
	n, err := io.ReadFull(r, hdr[:])
	read := int64(n)
	if err != nil {
		return read, fmt.Errorf("hnsw: read header: %w: %w", vector.ErrCorrupt, err)
	}
	if string(hdr[:8]) != magic {
		return read, fmt.Errorf("hnsw: read: %w: bad magic %q", vector.ErrCorrupt, hdr[:8])
	}
	switch v := binary.LittleEndian.Uint32(hdr[8:]); {
	case v == 0:
		return read, fmt.Errorf("hnsw: read: %w: format version 0", vector.ErrCorrupt)
	case v > formatVersion:
		return read, fmt.Errorf("hnsw: read: %w: format version %d, this build reads up to %d", vector.ErrUnsupportedVersion, v, formatVersion)
	}
	bodyLen := binary.LittleEndian.Uint64(hdr[12:])
	if bodyLen > math.MaxInt64-4 {
		return read, fmt.Errorf("hnsw: read: %w: body length %d", vector.ErrCorrupt, bodyLen)
	}
	// Copy rather than allocate bodyLen up front: a damaged length must not
	// cost more memory than the stream holds.
	var buf bytes.Buffer
	m, err := io.CopyN(&buf, r, int64(bodyLen)+4)
	read += m
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return read, fmt.Errorf("hnsw: read body: %w: %w", vector.ErrCorrupt, err)
	}
	all := buf.Bytes()
	body, sum := all[:bodyLen], binary.LittleEndian.Uint32(all[bodyLen:])
	if crc := crc32.Update(crc32.Checksum(hdr[:], castagnoli), castagnoli, body); crc != sum {
		return read, fmt.Errorf("hnsw: read: %w: checksum %08x, want %08x", vector.ErrCorrupt, crc, sum)
	}
	g, cal, cutOff, err := ix.decode(body, binary.LittleEndian.Uint32(hdr[8:]))
	if err != nil {
		return read, fmt.Errorf("hnsw: read: %w", err)
	}
	ix.mu.Lock()
	ix.installLocked(g)
	// The calibration saved with the graph, if it applies; else none (the
	// one before was measured on the graph just replaced), and the one
	// noteChange starts. A saved one the rules call for redoing (the
	// graph doubled since, say) is redone too, and answers meanwhile.
	ix.cal.restore(cal, reservoir.Size(ix.liveCount(), ix.dim))
	ix.noteChange(0)
	ix.mu.Unlock()
	if cutOff {
		ix.connect(true) // a graph saved before the pass (connect.go) existed
	}
	return read, nil
}

// decode builds a graph from a checksummed body and checks it, and checks
// it against the store. It returns the calibration saved with it if that
// applies to the graph under ix's target (nil if none does), and reports
// whether a live node other than the entry point has no link to it, on
// any layer: such a node is cut off from search.
func (ix *Index) decode(body []byte, version uint32) (g *Index, cal *savedCalibration, cutOff bool, err error) {
	d := &decoder{b: body}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", vector.ErrCorrupt, fmt.Sprintf(format, args...))
	}
	dim := int(d.u32())
	metric := vector.Metric(d.u8())
	o := Options{
		M:              int(d.u32()),
		EfConstruction: int(d.u32()),
		EfSearch:       int(d.u32()),
		LevelMult:      math.Float64frombits(d.u64()),
		Seed:           d.u64(),
		Workers:        ix.opts.Workers,
		Progress:       ix.opts.Progress,
		Quantize:       ix.opts.Quantize,
		QuantizeDims:   ix.opts.QuantizeDims,
	}
	qz, err := decodeQuantizer(d, version, &o)
	if err != nil {
		return nil, nil, false, err
	}
	if version >= 4 {
		if cal, err = decodeCalibration(d); err != nil {
			return nil, nil, false, err
		}
		// A graph saved without quantization is read as a version-1 one
		// is, with the reading index's option, whatever its version; a
		// calibration then made on the float32 walk is dropped below if
		// the load trains codes for another.
		if o.Quantize == QuantizeNone {
			o.Quantize, o.QuantizeDims = ix.opts.Quantize, ix.opts.QuantizeDims
		}
	}
	next := d.u32()
	live := d.u32()
	ep := node(d.u32())
	epTop := int(d.u8()) - 1
	if d.err != nil {
		return nil, nil, false, corrupt("%v", d.err)
	}
	if err := o.Validate(); err != nil || o.M == 0 || o.EfConstruction == 0 || o.EfSearch == 0 || o.LevelMult == 0 || o.Seed == 0 {
		return nil, nil, false, corrupt("options %+v", o)
	}
	if dim != ix.dim || metric != ix.metric {
		return nil, nil, false, fmt.Errorf("%w: graph of dimension %d under %v, store of %d under %v", ErrStoreMismatch, dim, metric, ix.dim, ix.metric)
	}
	// Each slot takes at least one byte, so this bounds the allocation by
	// the size of the stream.
	if uint64(next) > uint64(len(d.b)) || live > next {
		return nil, nil, false, corrupt("%d slots, %d live, in %d bytes", next, live, len(d.b))
	}
	g, err = New(ix.store, &o)
	if err != nil {
		return nil, nil, false, corrupt("%v", err)
	}
	// The recall target is the caller's, like Workers: not in the stream.
	g.opts.TargetRecall, g.opts.TargetK = ix.opts.TargetRecall, ix.opts.TargetK
	g.growLocked(int(next))
	g.next = node(next)
	linked := make([]uint64, (next+63)/64) // the nodes some list links to
	for s := node(0); s < g.next; s++ {
		lv := d.u8()
		g.setLevel(s, lv)
		if lv == freeLevel {
			g.freeSlot(s)
			continue
		}
		if lv > maxLevel {
			return nil, nil, false, corrupt("slot %d at level %d", s, lv)
		}
		id := vector.ID(d.u64())
		if other, dup := g.idGet(id); dup {
			return nil, nil, false, corrupt("id %d at slots %d and %d", id, other, s)
		}
		g.setID(s, id)
		g.idPut(s)
		g.live++
		g.setUpper(s, int(lv))
		for lc := 0; lc <= int(lv); lc++ {
			cnt := d.u32()
			if int64(cnt) > int64(g.maxLinks(lc)) {
				return nil, nil, false, corrupt("slot %d layer %d has %d links", s, lc, cnt)
			}
			l := g.list(s, lc)
			l[0] = cnt
			for i := range int(cnt) {
				x := d.u32()
				l[1+i] = x
				if x < next {
					linked[x/64] |= 1 << (x % 64)
				}
			}
		}
		if d.err != nil {
			return nil, nil, false, corrupt("%v", d.err)
		}
	}
	if len(d.b) != 0 {
		return nil, nil, false, corrupt("%d bytes after the last slot", len(d.b))
	}
	if int(live) != g.live {
		return nil, nil, false, corrupt("%d live nodes recorded, %d found", live, g.live)
	}
	if epTop >= 0 {
		if ep >= g.next {
			return nil, nil, false, corrupt("entry point %d of %d slots", ep, g.next)
		}
		g.ep.Store(packEntry(ep, epTop))
		for s := node(0); s < g.next && !cutOff; s++ {
			cutOff = s != ep && g.levelOf(s) != freeLevel && linked[s/64]&(1<<(s%64)) == 0
		}
	}
	// Resolve the vectors before the structural check, which looks at
	// them.
	if n := ix.store.Len(); n != g.live {
		return nil, nil, false, fmt.Errorf("%w: %d nodes, store holds %d vectors", ErrStoreMismatch, g.live, n)
	}
	for s := node(0); s < g.next; s++ {
		if g.levelOf(s) == freeLevel {
			continue
		}
		v, err := ix.storedVector(g.idOf(s))
		if err != nil {
			return nil, nil, false, fmt.Errorf("%w: id %d: %w", ErrStoreMismatch, g.idOf(s), err)
		}
		g.setVec(s, unsafe.SliceData(v))
	}
	if err := g.verifyLocked(); err != nil {
		return nil, nil, false, err
	}
	if g.slots != nil {
		if g, err = g.onStoreSlots(); err != nil {
			return nil, nil, false, err
		}
	}
	retrained, err := g.loadCodes(qz)
	if err != nil {
		return nil, nil, false, err
	}
	if cal != nil && !cal.applies(&g.opts, retrained) {
		cal = nil
	}
	return g, cal, cutOff, nil
}

// onStoreSlots returns the decoded and verified graph g renumbered so that
// each node is its vector's slot in the store (see Index.slots): the store
// may have put the vectors in other slots since the graph was written.
func (g *Index) onStoreSlots() (*Index, error) {
	to := make([]node, g.next)
	need := 0
	for s := node(0); s < g.next; s++ {
		if g.levelOf(s) == freeLevel {
			continue
		}
		sl, ok := g.slots.Slot(g.idOf(s))
		if !ok {
			return nil, fmt.Errorf("%w: id %d: %w", ErrStoreMismatch, g.idOf(s), vector.ErrNotFound)
		}
		to[s] = node(sl)
		need = max(need, int(sl)+1)
	}
	o := g.opts
	o.TargetRecall, o.TargetK = 0, 0 // g's are the caller's (see decode)
	h, err := New(g.store, &o)
	if err != nil {
		return nil, err
	}
	h.opts = g.opts
	if err := h.coverLocked(need); err != nil {
		return nil, err
	}
	h.next, h.live = node(need), g.live
	for s := node(0); s < g.next; s++ {
		lv := g.levelOf(s)
		if lv == freeLevel {
			continue
		}
		t := to[s]
		h.setLevel(t, lv)
		h.setID(t, g.idOf(s))
		h.idPut(t)
		h.setUpper(t, int(lv))
		h.setVec(t, h.vecp(t))
		for lc := 0; lc <= int(lv); lc++ {
			src, dst := g.list(s, lc), h.list(t, lc)
			dst[0] = src[0]
			for i, x := range src[1 : 1+src[0]] {
				dst[1+i] = uint32(to[x])
			}
		}
	}
	if ep, top, ok := g.entry(); ok {
		h.ep.Store(packEntry(to[ep], top))
	}
	if err := h.verifySlotsLocked(); err != nil {
		return nil, err
	}
	return h, nil
}

// installLocked moves the state of the decoded graph g into ix; mu is held
// for writing.
func (ix *Index) installLocked(g *Index) {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	ix.opts = g.opts
	ix.m, ix.m0, ix.stride0, ix.strideU = g.m, g.m0, g.stride0, g.strideU
	ix.inline, ix.row0, ix.lnk0, ix.rowBytes = g.inline, g.row0, g.lnk0, g.rowBytes
	ix.codeLines = g.codeLines
	ix.quant.q = g.quant.q
	if bc := ix.bcodes.Swap(nil); bc != nil { // codes of the graph replaced
		bc.region.free()
	}
	ix.quant.encoded.Store(0)
	ix.quant.clipped.Store(0)
	ix.pages, ix.rowChunk, ix.rowAlloc = g.pages, g.rowChunk, g.rowAlloc
	if ix.held != nil {
		ix.held.releaseAll() // the deleted nodes dropped below
	}
	ix.slots, ix.slotBase = nil, g.slotBase
	if g.slots != nil {
		ix.useStoreSlots(g.slots) // g has no deleted nodes: holds none
	}
	ix.byID, ix.free, ix.next, ix.live = g.byID, g.free, g.next, g.live
	ix.tombs, ix.dead, ix.unl = nil, nil, nil
	ix.ep.Store(g.ep.Load())
	ix.rngMu.Lock()
	ix.rng = g.rng
	ix.rngMu.Unlock()
}
