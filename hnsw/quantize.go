// This file holds the quantized traversal (Options.Quantize): the int8
// codes kept beside the layer-0 lists, their training and refreshing, and
// the walk over them whose finalists are rescored exactly.

package hnsw

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// Quantize is what a graph walks at query time: the float32 vectors, or
// compact codes of them. It is an option per index ([Options.Quantize]).
//
// With [QuantizeInt8] every node keeps an int8 code of its vector
// ([quant.Quantizer]: one byte a dimension and the 4-byte ‖x‖²) in its
// layer-0 row, beside its links, in place of the float32 copy that rows
// hold at dimension ≤ 512: the traversal copy takes d + 4 bytes a node
// instead of 4·d (counted in [Stats].CodeBytes). A query is walked on the
// codes' distance estimates, through the upper layers and on layer 0 with
// its beam of ef, and the finalists are then scored again with float32
// from the store, so that the distances returned are exact: bit-equal to
// the exact scan's for the same ids. Only the finalists that may still
// rank among the first k are scored again: taken in order of estimate,
// until one's estimate, less a bound on the estimates' error, is past the
// k-th exact distance found; the bound is measured, per query, from the
// errors of the finalists already scored (six standard deviations), as
// the strict bound ([quant.Query.ErrorBound]) is too loose to stop
// anything. Which ids come back can differ from the float32 graph's where
// the estimates misrank a node near the edge of the beam, or by more than
// the measured bound; QuantizedRecall tests bound the loss.
//
// With [QuantizeBinary] the row holds a 1-bit code instead: a sign a
// dimension about the data's mean, in whole 64-bit words, and a 12-byte
// trailer (quant.TrainOptions.Bits = 1; 204 bytes at d = 1536 against
// 1,540 for int8). Its estimates are much coarser; they choose what the
// walk expands and which finalists are rescored, as int8 ones do, and
// the rescoring's measured stop widens with their spread. Inserts walk
// the float32 vectors.
//
// With [Options].QuantizeDims either kind of code holds only each
// vector's first QuantizeDims components (renormalised under Cosine):
// Matryoshka truncation. The walk then ranks by the prefixes' distances,
// whose error against the whole vectors' has no strict bound, so the
// rescoring stops by the measured bound alone, as for 1-bit codes.
// Inserts walk the float32 vectors.
//
// Inserts walk int8 codes too once they are trained, at dimension 192 or
// more, and choose and prune neighbours on exact float32 distances, as
// large batches of any index do on codes of their own (see
// [Index.AddBatch]). Validation does not change: quantization never
// changes which inputs are refused.
//
// The codes are trained from the store's vectors when the index first
// holds any, and trained again, every code re-encoded, when they go stale
// ([quant.Quantizer.Stale]): while the store is below quant.DefaultSample
// vectors, each time it doubles, and later when new vectors fall outside
// the trained ranges markedly more often than the training data did.
// Training reads the store for a sample (at most quant.DefaultSample
// vectors) without blocking searches or inserts (Delete, Flush and WriteTo
// wait for it); the re-encoding of every node, O(n·d)
// (one pass over the store's vectors), then runs with searches and inserts
// held off, as a Delete does. Over a growing index that is O(1) encodes a
// vector. Before the first training, searches walk the float32 vectors.
//
// It is a plain value.
type Quantize uint8

const (
	// QuantizeNone walks the float32 vectors: the default.
	QuantizeNone Quantize = iota
	// QuantizeInt8 walks int8 codes and rescores the finalists exactly.
	QuantizeInt8
	// QuantizeBinary walks 1-bit codes (a sign a dimension, about the
	// data's mean: [quant.TrainOptions].Bits = 1) and rescores the
	// finalists exactly. Inserts walk the float32 vectors.
	QuantizeBinary
)

// String returns "none", "int8" or "binary", or "Quantize(n)" for an
// undefined value.
func (q Quantize) String() string {
	switch q {
	case QuantizeNone:
		return "none"
	case QuantizeInt8:
		return "int8"
	case QuantizeBinary:
		return "binary"
	}
	return fmt.Sprintf("Quantize(%d)", uint8(q))
}

// ParseQuantize returns the Quantize named s ("none" or "", "int8",
// "binary"), or an error wrapping [vector.ErrInvalidOptions].
func ParseQuantize(s string) (Quantize, error) {
	switch s {
	case "", "none":
		return QuantizeNone, nil
	case "int8":
		return QuantizeInt8, nil
	case "binary":
		return QuantizeBinary, nil
	}
	return 0, fmt.Errorf("hnsw: %w: quantization %q, want none, int8 or binary", vector.ErrInvalidOptions, s)
}

func (q Quantize) valid() bool { return q <= QuantizeBinary }

// bits is the size of a coded component under q: 1 for QuantizeBinary,
// else 8.
func (q Quantize) bits() int {
	if q == QuantizeBinary {
		return 1
	}
	return 8
}

// trainOptions are the options the codes of an index with o are
// trained with.
func (o *Options) trainOptions() *quant.TrainOptions {
	return &quant.TrainOptions{Bits: o.Quantize.bits(), Dims: o.QuantizeDims}
}

// coded is how many leading components of a vector its code holds.
func (ix *Index) coded() int {
	if ix.opts.QuantizeDims > 0 {
		return ix.opts.QuantizeDims
	}
	return ix.dim
}

// quantState is an index's int8 state. q is read under mu (held either
// way) and replaced under mu held for writing, with every code.
type quantState struct {
	q *quant.Quantizer
	// encoded and clipped count the vectors encoded since q was trained
	// and their clipped components: the drift measure of q.Stale.
	encoded, clipped atomic.Int64
	// refreshing is held by the one refresh that trains at a time.
	refreshing sync.Mutex
}

// codeWords is the number of uint32s a code under q of dim components
// takes at the start of a layer-0 row.
func codeWords(dim int, q Quantize) int { return (quant.CodeSizeOf(dim, q.bits()) + 3) / 4 }

// codeSize is the length in bytes of one code.
func (ix *Index) codeSize() int { return quant.CodeSizeOf(ix.coded(), ix.opts.Quantize.bits()) }

// codep returns a pointer to node n's code, at the start of its row.
func (ix *Index) codep(n node) *byte {
	p := ix.pages[n>>pageShift]
	return (*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.rows0)), uintptr(n&pageMask)*ix.rowBytes))
}

// code returns node n's code.
func (ix *Index) code(n node) []byte { return unsafe.Slice(ix.codep(n), ix.codeSize()) }

// encodeCode writes node n's code of v with the current quantizer, if
// there is one. mu is held.
func (ix *Index) encodeCode(n node, v *float32) {
	qz := ix.quant.q
	if qz == nil {
		return
	}
	clipped, err := qz.Encode(ix.code(n), unsafe.Slice(v, ix.dim))
	if err != nil {
		return // not reached: the store's vectors pass vector.Check
	}
	ix.quant.encoded.Add(1)
	ix.quant.clipped.Add(int64(clipped))
}

// installQuantizerLocked makes qz the quantizer and encodes every vector
// the graph holds with it (nodes, tombstones, and slots of inserts in
// progress). mu is held for writing.
func (ix *Index) installQuantizerLocked(qz *quant.Quantizer) {
	ix.quant.q = qz
	for s := node(0); s < ix.next; s++ {
		if ix.hasVec(s) {
			_, _ = qz.Encode(ix.code(s), ix.vec(s))
		}
	}
	ix.quant.encoded.Store(0)
	ix.quant.clipped.Store(0)
}

// refreshCodes trains the quantizer if the index quantizes and its codes
// are missing or stale, and re-encodes every node. It is called after
// every change that adds vectors, with mu not held. Training reads the
// store while searches and inserts go on (Deletes wait for it, and, as
// behind any waiting writer, so do searches that start after such a
// Delete); only the re-encoding holds everything off. A
// refresh already running makes this one return at once (the next change
// checks again), and so does a failure to train (a cancelled ctx): the
// old codes stay in use, or the float32 walk if there are none.
func (ix *Index) refreshCodes(ctx context.Context) {
	if !ix.quant.refreshing.TryLock() {
		return
	}
	defer ix.quant.refreshing.Unlock()
	ix.mu.RLock()
	on, qz := ix.opts.Quantize != QuantizeNone, ix.quant.q
	live := ix.liveCount()
	if !on || live == 0 || qz != nil && !qz.Stale(live, int(ix.quant.encoded.Load()), ix.quant.clipped.Load()) {
		ix.mu.RUnlock()
		return
	}
	// Train reads the store's rows outside the store's lock (ForEach), so
	// it runs under mu held for reading: searches and inserts go on, but no
	// Delete can free a slot, and a Put reuse its memory, while it reads.
	nq, err := quant.Train(ctx, ix.store, ix.opts.trainOptions())
	ix.mu.RUnlock()
	if err != nil {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.opts.Quantize != QuantizeNone && nq.Check(ix.dim, ix.metric) == nil {
		ix.installQuantizerLocked(nq)
	}
}

// Quantizer returns the quantizer of the index's codes, nil if the index
// does not quantize or has not trained one yet (it holds no vectors). The
// quantizer is immutable; a refresh replaces it.
func (ix *Index) Quantizer() *quant.Quantizer {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.quant.q
}

// codeDistances returns the estimated distances from the prepared query
// pq to the codes at cs, in sc.dists, by one call of the int8 gather
// kernel (four codes a pass over the query, the loop over them in
// assembly), as distances does for float32. It reads pq's GatherSpan
// bytes at each code: prepareCodes has checked that a row holds that many.
func (ix *Index) codeDistances(sc *scratch, pq *quant.Query, cs []*float32) []float32 {
	if cap(sc.dists) < len(cs) {
		sc.dists = make([]float32, len(cs), 2*len(cs))
	}
	out := sc.dists[:len(cs)]
	// The addresses are the codes' bytes (codeAddr).
	pq.GatherDistances(unsafe.Slice((**byte)(unsafe.Pointer(unsafe.SliceData(cs))), len(cs)), out)
	return out
}

// codeAddr is node n's code as the *float32 the prefetch and the gather
// buffers take (an address only; codeDistances reads it as bytes).
func (ix *Index) codeAddr(n node) *float32 { return (*float32)(unsafe.Pointer(ix.codep(n))) }

// rescorePool is the least number of finalists kept for rescoring, as a
// multiple of k. With a beam of only k (ef = 10, k = 10) the int8
// estimates misrank nodes at its edge, which cost recall@10 0.0075 against
// the float32 walk on an easier clustered 64-d set (M = 12,
// EfConstruction = 100); keeping the best 2·k of all the nodes scored won
// it back. Since the beam is at least ef + beamMin, that no longer pays:
// on the real 100-d set 1·k keeps int8 recall@10 0.011–0.022 above
// float32's at ef 10…24 (2·k: 0.011–0.025), and TestQuantizedRecall holds,
// while 2·k kept up to 8 more finalists in the pool, and rescored some.
const rescorePool = 1

// beamWiden sets how much wider than ef the int8 walk's layer-0 beam is:
// ef + max(beamMin, ⌈ef/beamWiden⌉): 5%, and at least two more nodes. The
// estimates' noise ends a beam of exactly ef a little early. Measured with
// TestQuantizedRecall (clustered 64-d, M = 6, EfConstruction = 32, recall@10
// at ef = 10, the float32 walk of the same graph beside): at n = 6,000
// float32 0.9185, int8 with the same beam 0.9070, one more 0.9285, two more
// 0.9390; at n = 4,000 float32 0.9420, one more 0.9340, two more 0.9435. On
// the real 495k × 100-d set (BenchmarkWalkRecall, ef 10…400, int8 −
// float32): the same beam −0.0089 to +0.0024 (below −0.005 at ef = 12), 5%
// wider (one more at ef ≤ 20) −0.0002 to +0.0125, 10% wider +0.0002 to
// +0.0234, 20% wider (the rule before bounded rescoring) +0.0004 to
// +0.0338. Each node more in the beam is about 1/ef more expansions.
const (
	beamWiden = 20
	beamMin   = 2
)

// rescoreAhead is how many finalists ahead of the one being rescored have
// their vectors prefetched.
const rescoreAhead = 8

// rescoreSample and rescoreSpread set the measured stop of the rescoring:
// once rescoreSample finalists have been scored exactly, the errors of
// their estimates (estimate − exact) have a mean μ and a standard
// deviation σ, and a finalist is taken to be at most μ + rescoreSpread·σ
// above its exact distance, σ at least the query's NoiseSD. The strict
// bound (ErrorBound) assumes every component's rounding error at its
// worst at once and the same sign; the errors are sums of d nearly
// independent terms, so the strict bound is about √(3d) of their σ (17σ at
// d = 100) and stopped nothing at ef ≥ 64: on the real 495k × 100-d set the
// int8 walk rescored 200 of its 210 finalists at ef = 200 (random 400-byte
// reads from the store: the measured stop takes 0.72 of the strict one's
// time at ef = 200 and 0.81–0.84 at ef = 64, BenchmarkWalkRescore),
// 310 of 336 at ef = 320, where the measured stop rescores 23 at both
// (BenchmarkWalkRecall). Its recall@10 there against the strict stop's:
// −0.0003 at ef 24…400, 0 at ef ≤ 16; on clustered d = 100 (n = 50,000)
// −0.001 at ef ≥ 64 (30 rescored of 68), 0 below; at d = 768 0 at every
// ef (15 rescored). A spread of 8 rescored 31 at ef = 200 on the real set
// and won 0.0001 there and 0.0005 on clustered d = 100; 16 or 20 samples
// instead of 10 changed recall by at most 0.0001.
const (
	rescoreSample = 10
	rescoreSpread = 6
)

// rescoreStrict makes rescore stop by the strict bound alone (for the
// test that checks the strict stop against rescoring everything).
var rescoreStrict = false

// rescore returns the k nearest of the finalists sc.w, sorted by ascending
// estimate, by their exact distances to qv. It scores them in that order
// and stops at the first whose estimate, less the bound on its error, is
// past the k-th exact distance found (with the float32 rounding margin of
// rescoreLimit): neither it nor any after it can then rank among the
// first k. The bound is strict at first (bound, the query's
// [quant.Query.ErrorBound]: the most an estimate can exceed the exact
// distance for a vector within the quantizer's ranges), then measured
// from the finalists scored so far (rescoreSpread; noise is the query's
// [quant.Query.NoiseSD]), never above the strict one.
//
// The measured bound is a statistical one: a finalist whose estimate is
// off by more than rescoreSpread standard deviations can be missed, as a
// vector with a component clipped to its range can be under the strict
// bound, and as the walk itself can miss a vector; the distances returned
// are exact whichever ids come back.
func (ix *Index) rescore(sc *scratch, qv []float32, k int, bound, noise float32) []vector.Result {
	t := &sc.top
	t.Reset(k)
	w := sc.w
	sc.rescored = 0
	for i := range min(rescoreAhead, len(w)) {
		prefetchLines(unsafe.Pointer(ix.vecp(w[i].node)), ix.pfLines)
	}
	limit, stop := float32(math.Inf(1)), bound
	var sum, sumSq float64 // of the errors of the estimates scored
	for i, c := range w {
		if c.dist-stop > limit {
			break
		}
		if j := i + rescoreAhead; j < len(w) {
			prefetchLines(unsafe.Pointer(ix.vecp(w[j].node)), ix.pfLines)
		}
		if sc.skipOn && c.node == sc.skip {
			continue
		}
		d := ix.dist(qv, ix.vec(c.node))
		sc.rescored++
		e := float64(c.dist - d)
		sum += e
		sumSq += e * e
		if sc.rescored >= rescoreSample && !rescoreStrict {
			n := float64(sc.rescored)
			mean := sum / n
			sd := math.Sqrt(max(0, sumSq/n-mean*mean))
			stop = min(bound, float32(mean+rescoreSpread*max(sd, float64(noise))))
		}
		if t.Push(ix.idOf(c.node), d) && t.Full() {
			limit = ix.exactLimit(t.Worst())
		}
	}
	return t.Results()
}

// exactLimit is rescoreLimit for an exact distance dk: the k-th distance
// computed by the single kernel can be below the exact one by its rounding,
// which rescoreLimit bounds under Cosine and L2. Under Dot, whose rounding
// has no bound relative to the result, a relative margin of 10⁻⁵ of |dk|
// stands in for it (the estimate's error dwarfs it).
func (ix *Index) exactLimit(dk float32) float32 {
	if ix.metric == vector.Dot {
		return dk + 1e-5*float32(math.Abs(float64(dk)))
	}
	return ix.rescoreLimit(dk)
}

// writeVersion is the format version WriteTo writes: 4 for an index
// saved with its calibration (calibrated), else 3 with 1-bit or truncated
// codes, 2 with int8 codes of whole vectors, else 1, the format of graphs
// without codes (see encode.go).
func (ix *Index) writeVersion(calibrated bool) uint32 {
	switch {
	case calibrated:
		return formatVersion
	case ix.opts.Quantize == QuantizeNone:
		return 1
	case ix.opts.Quantize == QuantizeInt8 && ix.opts.QuantizeDims == 0:
		return 2
	}
	return 3
}

// appendQuantizer appends the version-2 fields: Quantize, the length of
// the quantizer's binary form and that form, and from version 3 on
// QuantizeDims after Quantize. mu is held.
func (ix *Index) appendQuantizer(b []byte, version uint32) []byte {
	b = append(b, byte(ix.opts.Quantize))
	if version >= 3 {
		b = binary.LittleEndian.AppendUint32(b, uint32(ix.opts.QuantizeDims))
	}
	var form []byte
	if ix.quant.q != nil {
		form, _ = ix.quant.q.MarshalBinary() // never fails
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(form)))
	return append(b, form...)
}

// decodeQuantizer reads the version-2 fields into o.Quantize and returns
// the saved quantizer (nil if none). Version 3 adds QuantizeDims after
// Quantize, and is the one that holds QuantizeBinary; version 4 holds the
// fields of version 3, zero for a graph without quantization, which
// decode then reads as version 1. A version-1 body has none: o keeps
// the reading index's option. A quantizer in a newer format gives an error
// wrapping [vector.ErrUnsupportedVersion], anything damaged one wrapping
// [vector.ErrCorrupt].
func decodeQuantizer(d *decoder, version uint32, o *Options) (*quant.Quantizer, error) {
	if version < 2 {
		return nil, nil
	}
	o.Quantize, o.QuantizeDims = Quantize(d.u8()), 0
	if version >= 3 {
		o.QuantizeDims = int(d.u32())
	}
	n := d.u32()
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", vector.ErrCorrupt, d.err)
	}
	if !o.Quantize.valid() || o.Quantize == QuantizeBinary && version < 3 || o.QuantizeDims > quant.MaxDim ||
		uint64(n) > uint64(len(d.b)) || (n > 0 || o.QuantizeDims > 0) && o.Quantize == QuantizeNone {
		return nil, fmt.Errorf("%w: quantization %d with a quantizer of %d bytes", vector.ErrCorrupt, o.Quantize, n)
	}
	if n == 0 {
		return nil, nil
	}
	qz := new(quant.Quantizer)
	if err := qz.UnmarshalBinary(d.take(int(n))); err != nil {
		return nil, err
	}
	return qz, nil
}

// loadCodes gives the freshly decoded graph ix its codes: made with qz, the
// saved quantizer, if it fits the store and is not stale for its size,
// else with one trained from the store (a graph saved without codes, or
// before any were trained, or with a quantizer trained, below a full
// sample, on half of today's store or less), and reports whether it
// trained one: the graph then walks other codes than it was saved with.
// A saved quantizer of the wrong dimension or metric is corrupt. mu is
// not needed: ix is not shared yet.
func (ix *Index) loadCodes(qz *quant.Quantizer) (trained bool, err error) {
	if ix.opts.Quantize == QuantizeNone || ix.live == 0 {
		return false, nil
	}
	if qz != nil {
		if err := qz.Check(ix.dim, ix.metric); err != nil {
			return false, fmt.Errorf("%w: %w", vector.ErrCorrupt, err)
		}
		if qz.Bits() != ix.opts.Quantize.bits() || qz.Coded() != ix.coded() {
			return false, fmt.Errorf("%w: codes of %d bits of %d components saved with quantization %v of %d",
				vector.ErrCorrupt, qz.Bits(), qz.Coded(), ix.opts.Quantize, ix.coded())
		}
	}
	// Codes of more components than a quantizer takes were never
	// trained (refreshCodes leaves such an index on the float32 walk):
	// it loads as it was saved, without them.
	if qz == nil && ix.coded() > quant.MaxDim {
		return false, nil
	}
	// A saved quantizer trained on a store since grown past its sample
	// (Stale's growth rule; no drift is known at load) is trained again.
	if qz == nil || qz.Stale(ix.live, 0, 0) {
		if qz, err = quant.Train(context.Background(), ix.store, ix.opts.trainOptions()); err != nil {
			return false, fmt.Errorf("%w: training the codes: %w", ErrStoreMismatch, err)
		}
		trained = true
	}
	ix.installQuantizerLocked(qz)
	return trained, nil
}
