package hnsw

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cairndb/cairn/internal/hugepage"
	"github.com/cairndb/cairn/vector"
)

// pageShift sets the number of slots in a page, 1 << pageShift. Per-slot
// state lives in pages that are allocated whole and never move, so the
// index grows without copying and wastes at most one partly used page,
// instead of the up to half of a doubling array (at n = 100,000 the old
// doubling arrays held 128,000 slots, 28% unused). 1,024 slots make a page
// of about 160 KiB at M = 16; the page directory stays in L1.
const (
	pageShift = 10
	pageSize  = 1 << pageShift
	pageMask  = pageSize - 1
)

// lockStripes is the number of locks guarding neighbour-list writes: node n
// uses lock n mod lockStripes, as hnswlib's label locks do, instead of a
// mutex per node (8 bytes a node). No code path holds two node locks at
// once, so two nodes sharing a stripe cannot deadlock; with 4,096 stripes
// and a handful of writers, contention is rare.
const lockStripes = 4096

// inlineMaxDim is the highest dimension at which the graph keeps its own
// copy of each vector beside the node's layer-0 list (see Index.inline).
// Measured with BenchmarkLayout (clustered, same graph loaded both ways,
// queries alternating between them): at d = 100, n = 50,000 the inline
// rows take 0.65–0.78 of the time (ef 16…256), at d = 384, n = 30,000
// 0.82–0.96, at d = 768 about 1.0 (the 48 lines of the vector dwarf the
// one pointer load), where the copy would only double the memory. 512
// lies between the last gain and the first none. Variable for the layout
// benchmarks and tests.
var inlineMaxDim = 512

// useSlots, when false, makes new indexes ignore the slots of their store
// (see Index.slots), for the layout benchmarks and tests.
var useSlots = true

// slotMask picks a slot's place in its block of a vector.SlotStore.
const slotMask = 1<<vector.SlotBlockShift - 1

// rowAlign, when not 0, is the multiple in uint32s that every row's
// length is rounded up to (see alignRow), for the layout benchmark.
var rowAlign = 0

// alignRow rounds the length of a row (see page.rows0) up, in uint32s, so
// that every row starts on a boundary: of 16 bytes for rows of float32
// vectors shorter than 1 KiB, of 64 bytes (a cache line) for the others.
// A vector that starts on a line is read in one line fewer: with 64-byte
// rows, walks on rows of 1 KiB or more and on rows of codes ran 2-5%
// faster (BenchmarkRowAlign), while on float32 rows under 1 KiB they ran
// no slower with 16-byte rows, whose padding is a tenth as much (at d =
// 100, 12 bytes a row instead of 44).
func alignRow(n int, codes bool) int {
	a := rowAlign
	if a == 0 {
		a = 16
		if !codes && n*4 < 1024 {
			a = 4
		}
	}
	return (n + a - 1) / a * a
}

// page holds the per-slot state of pageSize consecutive slots.
type page struct {
	// rows0 holds one row of row0 uint32s per slot: the layer-0 list
	// (stride0 uint32s) at offset lnk0, and, when the index keeps vectors
	// inline, the vector's dim floats at offset 0.
	rows0 []uint32
	// upper points at each node's upper lists, level × strideU uint32s
	// for layers 1..level, nil at level 0 (a pointer rather than a slice
	// header: the length follows from the level).
	upper [pageSize]*uint32
	// vecs points at the store's vector of each node (dim floats), nil if
	// none, in the one layout that finds vectors through pointers: a
	// store without slots above inlineMaxDim (see vecp). nil in the
	// others, which compute the address from the node.
	vecs *[pageSize]*float32
	// has marks the slots whose vector is recorded (setVec): those of
	// nodes, and of nodes being inserted.
	has [pageSize]bool
	// ids holds each node's external id.
	ids [pageSize]vector.ID
	// level holds each node's top layer, freeLevel if none.
	level [pageSize]uint8
	// tomb marks the nodes deleted but not yet unlinked (see
	// Index.tombstoneLocked): searches walk through them but never return
	// them.
	tomb [pageSize]bool
}

func (ix *Index) pageOf(n node) (*page, int) {
	return ix.pages[n>>pageShift], int(n & pageMask)
}

// vecp returns a pointer to node n's vector. With the store's slots it is
// computed from n, with no load but the block's base; with vectors inline
// too, with no load but the page's: the walk then reads a neighbour's
// vector, and the list beside it, in one stream of cache lines. Otherwise
// it is a pointer loaded from the page.
func (ix *Index) vecp(n node) *float32 {
	if ix.slots != nil {
		// Node n is the store's slot n (see Index.slots).
		return (*float32)(unsafe.Add(ix.slotBase[n>>vector.SlotBlockShift], uintptr(n&slotMask)*uintptr(ix.dim)*4))
	}
	p := ix.pages[n>>pageShift]
	if ix.inline {
		// rows0 holds pageSize rows, so the offset is in bounds.
		return (*float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.rows0)), uintptr(n&pageMask)*ix.rowBytes))
	}
	return p.vecs[n&pageMask]
}

// hasVec reports whether node n has a vector (it holds a node, or one
// being inserted).
func (ix *Index) hasVec(n node) bool { return ix.pages[n>>pageShift].has[n&pageMask] }

// pointers reports whether the index finds vectors through the pointers
// of its pages (see page.vecs).
func (ix *Index) pointers() bool { return ix.slots == nil && !ix.inline }

// setVec records v (dim floats, or nil) as node n's vector. With vectors
// inline it copies v into n's row; with pointers it keeps v; with the
// store's slots, v being at the address vecp computes, it keeps only that
// n has a vector. With
// int8 codes it writes n's code (quantize.go), and a batch's code while
// one runs (buildcodes.go). idMu is held, or mu for writing.
func (ix *Index) setVec(n node, v *float32) {
	if v != nil && ix.quant.q != nil {
		ix.encodeCode(n, v)
	}
	if bc := ix.bcodes.Load(); bc != nil && v != nil {
		bc.encode(n, v, ix.dim)
	}
	p, i := ix.pageOf(n)
	p.has[i] = v != nil
	switch {
	case ix.inline && v != nil:
		row := p.rows0[i*ix.row0 : i*ix.row0+ix.dim]
		copy(unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(row))), ix.dim), unsafe.Slice(v, ix.dim))
	case p.vecs != nil:
		p.vecs[i] = v
	}
}

func (ix *Index) idOf(n node) vector.ID { return ix.pages[n>>pageShift].ids[n&pageMask] }

func (ix *Index) setID(n node, id vector.ID) { ix.pages[n>>pageShift].ids[n&pageMask] = id }

func (ix *Index) isTomb(n node) bool { return ix.pages[n>>pageShift].tomb[n&pageMask] }

func (ix *Index) setTomb(n node, t bool) { ix.pages[n>>pageShift].tomb[n&pageMask] = t }

func (ix *Index) levelOf(n node) uint8 { return ix.pages[n>>pageShift].level[n&pageMask] }

func (ix *Index) setLevel(n node, l uint8) { ix.pages[n>>pageShift].level[n&pageMask] = l }

// setUpper gives node n fresh upper lists for layers 1..lvl (none at 0).
func (ix *Index) setUpper(n node, lvl int) {
	p, i := ix.pageOf(n)
	if lvl == 0 {
		p.upper[i] = nil
		return
	}
	p.upper[i] = unsafe.SliceData(make([]uint32, lvl*ix.strideU))
}

// hasUpper reports whether node n has upper lists.
func (ix *Index) hasUpper(n node) bool { return ix.pages[n>>pageShift].upper[n&pageMask] != nil }

// lock returns the lock guarding node n's neighbour lists.
func (ix *Index) lock(n node) *sync.Mutex { return &ix.locks[n%lockStripes] }

// capacity returns the number of slots the pages hold; mu must be held.
func (ix *Index) capacity() int { return len(ix.pages) << pageShift }

// rowChunkBytes bounds the memory the rows of new pages are carved from at
// once: chunks double with the index (1, 1, 2, 4, … pages; a grow by
// several pages at once carves no more than it needs) up to about
// rowChunkBytes, so that the rows of a large graph lie in arrays big
// enough for huge pages (internal/hugepage; the store's vectors get the
// same, vector.MemStore). With 4 KiB pages nearly every node a walk steps
// on misses the TLB, for its list and for its vector. At most one chunk is
// partly used.
const rowChunkBytes = 16 << 20

// coverLocked makes room for nodes below want: pages and, with the
// store's slots, the bases of the store's blocks that hold them, which
// exist by then (the store has handed the slots out). mu must be held for
// writing.
func (ix *Index) coverLocked(want int) error {
	ix.growLocked(want)
	for ix.slots != nil && len(ix.slotBase)<<vector.SlotBlockShift < want {
		b := ix.slots.SlotBlock(len(ix.slotBase))
		if len(b) != ix.dim<<vector.SlotBlockShift {
			return fmt.Errorf("%w: store block %d holds %d floats, want %d", vector.ErrCorrupt, len(ix.slotBase), len(b), ix.dim<<vector.SlotBlockShift)
		}
		ix.slotBase = append(ix.slotBase, unsafe.Pointer(unsafe.SliceData(b)))
	}
	return nil
}

// growLocked makes room for at least want slots; mu must be held for
// writing. It adds pages; existing ones stay where they are.
func (ix *Index) growLocked(want int) {
	ix.growBuildCodesLocked(want)
	for ix.capacity() < want {
		rows := pageSize * ix.row0
		if len(ix.rowChunk) < rows {
			k := min(max(len(ix.pages), 1), max(rowChunkBytes/(4*rows), 1))
			if need := (want - ix.capacity() + pageSize - 1) / pageSize; need > 1 {
				// A grow by many pages at once (a load, a batch)
				// carves its last chunk to what it needs.
				k = min(k, need)
			}
			ix.rowChunk = hugepage.Uint32s(k * rows)
			ix.rowAlloc += int64(4 * k * rows)
		}
		p := &page{rows0: ix.rowChunk[:rows:rows]}
		if ix.pointers() {
			p.vecs = new([pageSize]*float32)
		}
		ix.rowChunk = ix.rowChunk[rows:]
		for i := range p.level {
			p.level[i] = freeLevel
		}
		ix.pages = append(ix.pages, p)
	}
}

// memory accounts for every byte the index allocates beyond the store's
// vectors, counted from what it holds: the rows of the pages (split into
// lists, vector copies or codes, alignment and rows not yet holding a
// node), the pages' per-slot arrays, upper lists (rounded up to the
// allocator's size class), locks, the id table and the deletion state.
// mu must be held.
func (ix *Index) memory() Memory {
	var m Memory
	used := int64(ix.next)
	m.Links0 = used * int64(ix.stride0) * 4
	switch {
	case ix.opts.Quantize != QuantizeNone:
		m.Codes = used * int64(ix.codeSize())
	case ix.inline:
		m.Vectors = used * int64(ix.dim) * 4
	}
	m.RowPad = used*int64(ix.rowBytes) - m.Links0 - m.Vectors - m.Codes
	m.Spare = ix.rowAlloc - used*int64(ix.rowBytes)
	m.Slots = int64(cap(ix.pages))*int64(unsafe.Sizeof((*page)(nil))) +
		int64(len(ix.pages))*int64(unsafe.Sizeof(page{}))
	if ix.pointers() {
		m.Slots += int64(len(ix.pages)) * int64(unsafe.Sizeof([pageSize]*float32{}))
	}
	m.Locks = int64(unsafe.Sizeof(ix.locks))
	for s := node(0); s < ix.next; s++ {
		if lv := ix.levelOf(s); lv != freeLevel && lv > 0 {
			m.Upper += int64(sizeClass(int(lv) * ix.strideU * 4))
		}
	}
	m.IDMap = ix.idMapBytes()
	if bc := ix.bcodes.Load(); bc != nil {
		m.Build = int64(len(bc.mem))
	}
	m.Slots += int64(cap(ix.slotBase)) * 8
	if ix.held != nil {
		m.Deletes += ix.held.bytes()
	}
	// Tombstones hold a copy of their vector until they are unlinked,
	// unless it is inline or they hold their store slot.
	if !ix.inline && ix.slots == nil {
		m.Deletes += int64(len(ix.tombs)) * int64(sizeClass(ix.dim*4))
	}
	m.Deletes += int64(cap(ix.tombs))*4 + int64(cap(ix.free))*4 + int64(cap(ix.dead))
	if ix.unl != nil {
		m.Deletes += int64(cap(ix.unl.levels))
	}
	return m
}

// sizeClass rounds an allocation of n bytes up the way Go's allocator does
// for small objects (a close approximation of its size classes).
func sizeClass(n int) int {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	case n <= 1024:
		return (n + 127) &^ 127
	}
	return (n + 1023) &^ 1023
}
