package hnsw

// This file holds the codes that batches of inserts walk on: int8 codes
// of every node, made by a large batch and dropped once the index is
// searched.

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/cairndb/cairn/vector/quant"
)

// buildCodesMinDim and buildCodesMinBatch decide which batches make
// codes to walk on: those of at least buildCodesMinBatch vectors, and an
// eighth of the index, at dimension buildCodesMinDim or more. An insert's
// walk at EfConstruction scores thousands of nodes, and at high dimension
// reading their float32 vectors is most of its time; their int8 codes
// are a quarter of the bytes. Below 192 dimensions nothing was gained
// (BenchmarkBuildCodes; its figures are in BENCHMARKS.md). Making the
// codes costs a training and one encoding of every node, which the eighth
// keeps small beside the batch's inserts. Variables for the tests.
var (
	buildCodesMinDim   = 192
	buildCodesMinBatch = 1024
)

// buildCodes are int8 codes of every node of the index (Index.bcodes),
// made with a quantizer trained on the store, for inserts to walk on:
// an insert walks the graph on the codes' distance estimates and scores
// the nodes it found exactly (exactCands) before choosing its
// neighbours, so links are chosen on exact distances as before; only
// which candidates the walk finds can differ, where an estimate misranks
// a node at the edge of the beam. Searches walk the float32 vectors (or
// the rows' codes), not these.
//
// The codes outlive the batch that made them, so that a build in many
// batches makes them once, and again only when they go stale by the rule
// of quant.Quantizer.Stale (trained on less than a full sample and the
// index has doubled since, or the data has drifted out of their ranges:
// walks on clipped codes find poor neighbours, TestBuildCodesDrift).
// The first search that finds no batch running drops them (if one is,
// the end of the last batch running does), and so do Flush and ReadFrom:
// an index in service does not keep them. Codes are written under idMu
// (setVec) before their node is linked and read by inserts holding mu,
// as rows are; the table is replaced, grown or dropped under mu held for
// writing.
type buildCodes struct {
	q      *quant.Quantizer
	stride uintptr // bytes a slot: GatherSpan rounded up to a line
	lines  int     // cache lines of a code to prefetch
	slots  int     // slots the table holds
	mem    []byte  // the table: region's bytes
	region *region
	// searched is set by a search that ran beside a batch: the last
	// batch to end drops the codes.
	searched atomic.Bool
	// encoded and clipped count the codes written since q was trained
	// and their clipped components: q.Stale's drift measure.
	encoded, clipped atomic.Int64
}

// startBatch notes a batch of n inserts beginning, and makes the codes
// for it if it is one to walk on them and there are none. mu is held for
// reading; the batch's vectors are set. endBatch must follow.
func (ix *Index) startBatch(ctx context.Context, n int) {
	ix.batches.Add(1)
	if ix.dim < buildCodesMinDim {
		return
	}
	if ix.quant.q != nil {
		// The rows' codes (Options.Quantize) serve from now on.
		if ix.bcodes.Load() != nil {
			ix.mu.RUnlock()
			ix.dropBuildCodes()
			ix.mu.RLock()
		}
		return
	}
	if bc := ix.bcodes.Load(); bc != nil {
		if !bc.q.Stale(ix.liveCount(), int(bc.encoded.Load()), bc.clipped.Load()) {
			return
		}
		// Trained on less than a sample, or drifted from: make them
		// again for this batch, as a large one would.
		ix.mu.RUnlock()
		ix.dropBuildCodes()
		ix.mu.RLock()
	} else if n < max(buildCodesMinBatch, ix.liveCount()/8) {
		return
	}
	q, err := quant.Train(ctx, ix.store, nil)
	if err != nil {
		return // walk the float32 vectors
	}
	stride := uintptr((q.GatherSpan() + 63) &^ 63)
	bc, err := newBuildCodes(q, stride, 2*ix.capacity())
	if err != nil {
		return
	}
	bc.lines = min((q.CodeSize()+63)/64, 2)
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	if !ix.bcodes.CompareAndSwap(nil, bc) {
		bc.region.free()
		return // another batch's
	}
	for s := node(0); s < ix.next; s++ {
		if ix.hasVec(s) {
			bc.encode(s, ix.vecp(s), ix.dim)
		}
	}
}

// endBatch notes a batch ending, and drops the codes if it was the last
// running and a search ran beside it. mu is not held.
func (ix *Index) endBatch() {
	if ix.batches.Add(-1) == 0 {
		if bc := ix.bcodes.Load(); bc != nil && bc.searched.Load() {
			ix.dropBuildCodes()
		}
	}
}

// searching is called by every search before it takes mu: it drops the
// codes if no batch is running, and else leaves that to the last batch.
func (ix *Index) searching() {
	if bc := ix.bcodes.Load(); bc != nil {
		if ix.batches.Load() == 0 {
			ix.dropBuildCodes()
		} else {
			bc.searched.Store(true)
		}
	}
}

// dropBuildCodes drops the codes once no insert walks on them. mu is not
// held.
func (ix *Index) dropBuildCodes() {
	ix.mu.Lock()
	bc := ix.bcodes.Swap(nil)
	ix.mu.Unlock()
	if bc != nil {
		bc.region.free()
	}
}

// growBuildCodesLocked makes room in the codes, if any, for want slots:
// a table for twice as many, the codes copied over. mu is held for
// writing.
func (ix *Index) growBuildCodesLocked(want int) {
	bc := ix.bcodes.Load()
	if bc == nil || want <= bc.slots {
		return
	}
	nb, err := newBuildCodes(bc.q, bc.stride, 2*want)
	if err != nil {
		nb = nil // walk the float32 vectors from now on
	} else {
		nb.lines = bc.lines
		copy(nb.mem, bc.mem)
		nb.searched.Store(bc.searched.Load())
	}
	ix.bcodes.Store(nb)
	bc.region.free()
}

// newBuildCodes returns an empty table of codes of q for slots slots,
// stride bytes apart, in memory mapped for it outside the Go heap: the
// heap would keep the pages of a dropped table (tens of MiB) resident
// long after. The memory is unmapped when the table is dropped, or when
// it is collected without having been (an index no longer used).
func newBuildCodes(q *quant.Quantizer, stride uintptr, slots int) (*buildCodes, error) {
	r, err := mapRegion(slots * int(stride))
	if err != nil {
		return nil, err
	}
	bc := &buildCodes{q: q, stride: stride, slots: slots, mem: r.b, region: r}
	runtime.AddCleanup(bc, func(r *region) { r.free() }, r)
	return bc, nil
}

// region is memory mapped by mapRegion, unmapped by the first free.
type region struct {
	b     []byte
	freed atomic.Bool
}

func mapRegion(n int) (*region, error) {
	b, err := mapBytes(n)
	if err != nil {
		return nil, err
	}
	return &region{b: b}, nil
}

func (r *region) free() {
	if r.freed.CompareAndSwap(false, true) {
		unmapBytes(r.b)
	}
}

// encode writes the code of v (dim floats) as node n's.
func (bc *buildCodes) encode(n node, v *float32, dim int) {
	c, _ := bc.q.Encode(bc.code(n), unsafe.Slice(v, dim)) // the store's vectors pass vector.Check
	bc.encoded.Add(1)
	bc.clipped.Add(int64(c))
}

// addr is node n's code as the address the gather kernel takes.
func (bc *buildCodes) addr(n node) *float32 {
	return (*float32)(unsafe.Pointer(&bc.mem[uintptr(n)*bc.stride]))
}

// code returns node n's code.
func (bc *buildCodes) code(n node) []byte {
	o := uintptr(n) * bc.stride
	return bc.mem[o : o+uintptr(bc.q.CodeSize())]
}

// exactCands replaces the estimated distances of cs, the result of a walk
// on codes, with exact ones from v, and returns them sorted (in sc.exact),
// nodes at equal distances in the walk's order, as the float32 walk
// leaves them.
func (ix *Index) exactCands(sc *scratch, v []float32, cs []cand) []cand {
	vs := sc.exactVs[:0]
	for _, c := range cs {
		vs = append(vs, ix.vecp(c.node))
	}
	sc.exactVs = vs
	if cap(sc.exactDs) < len(vs) {
		sc.exactDs = make([]float32, len(vs), 2*len(vs))
	}
	ds := ix.distancesInto(v, vs, sc.exactDs)
	ex := sc.exact[:0]
	for i, c := range cs {
		ex = append(ex, cand{ds[i], c.node})
	}
	slices.SortStableFunc(ex, func(a, b cand) int { return cmpDist(a.dist, b.dist) })
	sc.exact = ex
	return ex
}
