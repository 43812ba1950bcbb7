// This file holds the Quantizer: training from a store, encoding, and the
// staleness rule.

package quant

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/internal/kernel"
)

// MaxDim is the largest dimension a quantizer accepts: the int32 sums of
// the kernels are exact up to 65,536 products of 128·255.
const MaxDim = 1 << 16

// normBytes is the size of the ‖x‖² trailer of every code.
const normBytes = 4

// DefaultSample is the number of vectors training reads its ranges from
// when [TrainOptions.Sample] is zero. It is enough to place the quantiles
// of DefaultClip: 16 values lie beyond each end of every range.
const DefaultSample = 16384

// DefaultClip is the fraction of each dimension's sampled values that
// training leaves outside the range at each end when [TrainOptions.Clip]
// is zero.
//
// Measured by TestClipRecall (recall@10 of the quantized estimate alone,
// before rescoring): with a few huge components in 1% of the vectors,
// min/max ranges fall to 0.61 and 0.1% clipping keeps 0.99; on data
// without outliers (synthetic and the shared real sets) the two are within
// 0.01, and 1% clipping loses 0.02–0.03.
const DefaultClip = 0.001

// TrainOptions tune [Train]. The zero value (or a nil pointer) takes the
// defaults.
type TrainOptions struct {
	// Sample is the most vectors whose components set the ranges; a
	// uniform random sample is drawn when the store holds more. Default
	// DefaultSample.
	Sample int
	// Clip is the fraction of each dimension's sampled values left outside
	// its range at each end, in [0, 0.25); those values are clamped to the
	// nearest end. Default DefaultClip; a negative value means 0 (min/max
	// ranges). 1-bit codes have no ranges and ignore it.
	Clip float64
	// Bits is the size of a coded component: 8 (int8 codes, the default
	// for 0) or 1 (a sign bit about the sample's mean; see
	// [Quantizer.Bits]).
	Bits int
	// Dims, if not zero, codes only the first Dims components of each
	// vector (renormalised under Cosine): Matryoshka truncation, for
	// embeddings trained so that their leading components carry the
	// most (OpenAI's text-embedding-3, nomic-embed and others). It must
	// not exceed the store's dimension. See [Quantizer.Coded].
	Dims int
}

// Validate reports a problem with o, as an error wrapping
// [vector.ErrInvalidOptions]; a nil o is valid. Dims is checked against
// a dimension only by Train.
func (o *TrainOptions) Validate() error {
	_, err := o.withDefaults()
	return err
}

func (o *TrainOptions) withDefaults() (TrainOptions, error) {
	var r TrainOptions
	if o != nil {
		r = *o
	}
	if r.Sample == 0 {
		r.Sample = DefaultSample
	}
	switch {
	case r.Clip == 0:
		r.Clip = DefaultClip
	case r.Clip < 0:
		r.Clip = 0
	}
	if r.Bits == 0 {
		r.Bits = 8
	}
	if r.Sample < 0 || r.Clip >= 0.25 || math.IsNaN(r.Clip) {
		return r, fmt.Errorf("%w: quant: sample %d must not be negative and clip %v must be below 0.25", vector.ErrInvalidOptions, r.Sample, r.Clip)
	}
	if r.Bits != 8 && r.Bits != 1 {
		return r, fmt.Errorf("%w: quant: %d bits a component, want 8 or 1", vector.ErrInvalidOptions, r.Bits)
	}
	if r.Dims < 0 {
		return r, fmt.Errorf("%w: quant: Dims %d is negative", vector.ErrInvalidOptions, r.Dims)
	}
	return r, nil
}

// Quantizer maps vectors of one dimension and metric to int8 codes (see
// the package documentation for the rule). It is immutable and safe for
// concurrent use.
type Quantizer struct {
	dim     int // the components a code holds: the first dim of full
	full    int // the vectors' dimension
	metric  vector.Metric
	clip    float64
	sample  int   // the Sample option it was trained with
	trained int   // vectors in the store at training
	bits    uint8 // 1 for sign codes (then lo is the mean, step and inv nil); else int8
	lo      []float32
	step    []float32
	inv     []float32 // 1/step, or 0 where step is 0
}

// Train returns a quantizer for the vectors of s: the ranges come from a
// sample of at most opts.Sample of them (a fixed-seed uniform sample, so
// training the same store twice gives the same quantizer). It reads the
// store with ForEach and returns an error wrapping
// [vector.ErrInvalidOptions] for an empty store or bad options, and
// ctx.Err() if ctx is done first.
func Train(ctx context.Context, s vector.Store, opts *TrainOptions) (*Quantizer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	full, m := s.Dim(), s.Metric()
	if full <= 0 || full > MaxDim || !m.Valid() {
		return nil, fmt.Errorf("%w: quant: dimension %d (at most %d) or metric %v", vector.ErrInvalidOptions, full, MaxDim, m)
	}
	if o.Dims > full {
		return nil, fmt.Errorf("%w: quant: Dims %d of vectors of %d", vector.ErrInvalidOptions, o.Dims, full)
	}
	dim := full
	if o.Dims > 0 {
		dim = o.Dims
	}
	// Reservoir sampling (Algorithm R) into one arena.
	r := rand.New(rand.NewPCG(0x9e3779b97f4a7c15, uint64(dim)))
	arena := make([]float32, 0, min(o.Sample, s.Len()+1)*dim)
	seen := 0
	err = s.ForEach(func(_ vector.ID, v vector.Vector) error {
		if seen%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		seen++
		if len(arena) < o.Sample*dim {
			arena = append(arena, v[:dim]...)
			return nil
		}
		if j := r.IntN(seen); j < o.Sample {
			copy(arena[j*dim:(j+1)*dim], v[:dim])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("quant: train: %w", err)
	}
	n := len(arena) / dim
	if n == 0 {
		return nil, fmt.Errorf("%w: quant: train: the store is empty", vector.ErrInvalidOptions)
	}
	if dim < full && m == vector.Cosine {
		for i := range n {
			unitPrefix(arena[i*dim : (i+1)*dim])
		}
	}
	// Trained as a quantizer of the prefixes (dim = full = dim), so that
	// rankError encodes and prepares the arena's rows, then widened.
	var q *Quantizer
	if o.Bits == 1 {
		q = &Quantizer{dim: dim, full: dim, metric: m, sample: o.Sample, trained: seen, bits: 1}
		q.setMean(arena, n)
	} else {
		q = &Quantizer{
			dim: dim, full: dim, metric: m, clip: o.Clip, sample: o.Sample, trained: seen, bits: 8,
			lo: make([]float32, dim), step: make([]float32, dim), inv: make([]float32, dim),
		}
		if err := q.setRanges(ctx, arena, n); err != nil {
			return nil, err
		}
		if g := q.global(); chooseRanges && g.rankError(arena, n) < q.rankError(arena, n) {
			q = g
		}
	}
	q.full = full
	return q, nil
}

// chooseRanges is whether Train measures one global range against
// per-dimension ones; TestClipRecall turns it off to measure each alone.
var chooseRanges = true

// global returns a copy of q whose dimensions all share one range, the
// union of q's.
func (q *Quantizer) global() *Quantizer {
	g := *q
	g.lo, g.step, g.inv = make([]float32, q.dim), make([]float32, q.dim), make([]float32, q.dim)
	lo, hi := q.Range(0)
	for j := range q.dim {
		l, h := q.Range(j)
		lo, hi = min(lo, l), max(hi, h)
	}
	for j := range q.dim {
		g.setRange(j, lo, hi)
	}
	return &g
}

// rankError measures how well q's estimates rank the sampled vectors: the
// first up to 32 of them serve as queries and the next up to 2,048 as
// data, and it sums, per query, the variance of the estimate's error in
// the inner product (a constant offset per query ranks nothing wrong).
//
// Training measures per-dimension ranges against one global range with
// it and keeps the better. Per-dimension ranges code every dimension
// finely, but a dimension with a wide range takes a large weight in the
// query, and the query's weights are rounded to 7 bits relative to the
// largest: on data with a few such dimensions (the bge-m3 set measured by
// TestClipRecall) one range for all ranks better.
func (q *Quantizer) rankError(arena []float32, n int) float64 {
	nq := min(32, n/2)
	nd := min(2048, n-nq)
	if nq == 0 || nd == 0 {
		return 0
	}
	cs := q.CodeSize()
	codes := make([]byte, nd*cs)
	for j := range nd {
		if _, err := q.Encode(codes[j*cs:(j+1)*cs], arena[(nq+j)*q.dim:(nq+j+1)*q.dim]); err != nil {
			return math.Inf(1) // not reached: the store's vectors are valid
		}
	}
	var total float64
	errs := make([]float64, nd)
	for i := range nq {
		qv := arena[i*q.dim : (i+1)*q.dim]
		p, err := q.Prepare(qv)
		if err != nil {
			continue // a zero vector under Cosine cannot be a query
		}
		var mean float64
		for j := range nd {
			// float32 is exact enough: its rounding is far below the
			// quantization's error.
			dot := float64(vector.InnerProduct(qv, arena[(nq+j)*q.dim:(nq+j+1)*q.dim]))
			// Every metric's estimate is an affine function of q·x̂, and
			// the store keeps unit vectors under Cosine.
			est := float64(p.base) + float64(p.alpha)*float64(kernel.DotU8I8(p.w, codes[j*cs:j*cs+q.dim]))
			errs[j] = est - dot
			mean += errs[j]
		}
		mean /= float64(nd)
		for _, e := range errs {
			total += (e - mean) * (e - mean)
		}
	}
	return total
}

// setRanges places every dimension's range at the clip quantiles of the n
// sampled vectors in arena. Each worker takes groups of 16 dimensions, so
// a pass over the arena reads whole cache lines (16 float32s a row), and
// finds each quantile with a bounded heap, O(n log k) rather than a sort.
func (q *Quantizer) setRanges(ctx context.Context, arena []float32, n int) error {
	const group = 16
	k := int(q.clip * float64(n)) // values left out at each end
	groups := (q.dim + group - 1) / group
	workers := max(1, min(runtime.GOMAXPROCS(0), groups))
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			cols := make([]float32, group*n)
			low, high := make([]float32, 0, k+1), make([]float32, 0, k+1)
			for g := w; g < groups; g += workers {
				if errs[w] = ctx.Err(); errs[w] != nil {
					return
				}
				j0, j1 := g*group, min((g+1)*group, q.dim)
				width := j1 - j0
				for i := range n {
					row := arena[i*q.dim+j0 : i*q.dim+j1]
					for c, x := range row {
						cols[c*n+i] = x
					}
				}
				for c := range width {
					col := cols[c*n : (c+1)*n]
					lo, hi := extremes(col, k, low, high)
					q.setRange(j0+c, lo, hi)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("quant: train: %w", err)
		}
	}
	return nil
}

// extremes returns the (k+1)-th smallest and (k+1)-th largest of col
// (k < len(col)), using low and high as the heaps' storage: a max-heap of
// the k+1 smallest values seen and a min-heap of the k+1 largest.
func extremes(col []float32, k int, low, high []float32) (lo, hi float32) {
	low, high = low[:0], high[:0]
	for _, x := range col {
		if len(low) <= k {
			low = heapPush(low, x, func(a, b float32) bool { return a > b })
			high = heapPush(high, x, func(a, b float32) bool { return a < b })
			continue
		}
		if x < low[0] {
			low[0] = x
			heapDown(low, func(a, b float32) bool { return a > b })
		}
		if x > high[0] {
			high[0] = x
			heapDown(high, func(a, b float32) bool { return a < b })
		}
	}
	return low[0], high[0]
}

// heapPush adds x to the heap h ordered by before (the root comes before
// every other element).
func heapPush(h []float32, x float32, before func(a, b float32) bool) []float32 {
	h = append(h, x)
	for j := len(h) - 1; j > 0; {
		i := (j - 1) / 2
		if !before(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
	return h
}

// heapDown restores the heap h after its root changed.
func heapDown(h []float32, before func(a, b float32) bool) {
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && before(h[r], h[l]) {
			j = r
		}
		if !before(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (q *Quantizer) setRange(j int, lo, hi float32) {
	q.setStep(j, lo, float32((float64(hi)-float64(lo))/255))
}

func (q *Quantizer) setStep(j int, lo, step float32) {
	q.lo[j], q.step[j] = lo, step
	q.inv[j] = 1 / step
	if !(q.step[j] > 0) || math.IsInf(float64(q.inv[j]), 0) {
		q.step[j], q.inv[j] = 0, 0 // a constant dimension, or too narrow to divide
	}
}

// Dim returns the dimension of the vectors q encodes.
func (q *Quantizer) Dim() int { return q.full }

// Coded returns how many leading components of a vector its code holds:
// Dim, unless [TrainOptions].Dims truncated the codes. Distances are then
// estimated between the vectors' first Coded components (renormalised
// under Cosine), which rank like the whole vectors only as far as the
// leading components carry what the rest do.
func (q *Quantizer) Coded() int { return q.dim }

// prefix returns the first Coded components of v and their sum of
// squares: v and sum as they are when codes hold every component.
func (q *Quantizer) prefix(v vector.Vector, sum float64) (vector.Vector, float64) {
	if q.dim == q.full {
		return v, sum
	}
	v, sum = v[:q.dim], 0
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return v, sum
}

// unitPrefix scales v to unit length in float64, unless it is zero.
func unitPrefix(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	f := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * f)
	}
}

// Metric returns the metric q estimates distances under.
func (q *Quantizer) Metric() vector.Metric { return q.metric }

// CodeSize returns the length of one code: Dim bytes and a 4-byte norm,
// or for 1-bit codes Dim bits in 64-bit words and a 12-byte trailer
// ([CodeSizeOf]).
func (q *Quantizer) CodeSize() int { return CodeSizeOf(q.dim, int(q.bits)) }

// Bits returns the size of a coded component: 8 for int8 codes, 1 for
// sign codes. A 1-bit code holds, for each component of x − μ (μ the
// sample's mean), whether it is positive, and estimates inner products
// far more coarsely than int8 codes: an index walks them only to choose
// which vectors to score exactly.
func (q *Quantizer) Bits() int {
	if q.bits == 1 {
		return 1
	}
	return 8
}

// Trained returns how many vectors the store held when q was trained.
func (q *Quantizer) Trained() int { return q.trained }

// Range returns the range of dimension j: the values coded 0 and 255.
// For 1-bit codes both are the mean of dimension j.
func (q *Quantizer) Range(j int) (lo, hi float32) {
	if q.bits == 1 {
		return q.lo[j], q.lo[j]
	}
	return q.lo[j], q.lo[j] + 255*q.step[j]
}

// Check returns nil if q can encode the vectors of a store of dimension
// dim under metric m, an error wrapping [vector.ErrDimensionMismatch] if
// the dimensions differ, and one wrapping [vector.ErrInvalidOptions] if
// the metrics do. An index checks a quantizer it read back from a file
// this way before it trusts the codes stored with it.
func (q *Quantizer) Check(dim int, m vector.Metric) error {
	if dim != q.full {
		return fmt.Errorf("%w: quant: codes of dimension %d for vectors of %d", vector.ErrDimensionMismatch, q.full, dim)
	}
	if m != q.metric {
		return fmt.Errorf("%w: quant: codes for metric %v, vectors under %v", vector.ErrInvalidOptions, q.metric, m)
	}
	return nil
}

// Encode writes the code of v into dst, which must be CodeSize bytes, and
// returns how many components fell outside their range by more than half
// a step (clamped to it): the measure of drift [Quantizer.Stale] uses. It
// validates v as the store does ([vector.Check]) and normalises it under
// Cosine; on error dst is unchanged. A dst of the wrong length gives an
// error wrapping [vector.ErrInvalidOptions].
func (q *Quantizer) Encode(dst []byte, v vector.Vector) (clipped int, err error) {
	if len(dst) != q.CodeSize() {
		return 0, fmt.Errorf("%w: quant: encode into %d bytes, want %d", vector.ErrInvalidOptions, len(dst), q.CodeSize())
	}
	if err := vector.Check(v, q.full, q.metric); err != nil {
		return 0, fmt.Errorf("quant: encode: %w", err)
	}
	v = v[:q.dim]
	if q.bits == 1 {
		q.encodeBits(dst, v)
		return 0, nil
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	scale := float32(1)
	if q.metric == vector.Cosine && sum > 0 { // a prefix can be zero
		scale = float32(1 / math.Sqrt(sum))
		sum = 1
	}
	for j, x := range v {
		if scale != 1 {
			x *= scale
		}
		f := (x - q.lo[j]) * q.inv[j]
		var c byte
		switch {
		case q.inv[j] == 0:
			if x != q.lo[j] {
				clipped++
			}
		case f < -0.5:
			clipped++
		case f >= 255.5:
			c = 255
			clipped++
		case f >= 254.5:
			c = 255
		case f > 0:
			c = byte(f + 0.5)
		}
		dst[j] = c
	}
	binary.LittleEndian.PutUint32(dst[q.dim:], math.Float32bits(float32(sum)))
	return clipped, nil
}

// Stale reports whether codes made by q should be rebuilt (train again,
// encode every vector again), given the store's size now, and the number of
// vectors encoded since training with the clipped components among them
// (the sum of Encode's results).
//
// Two conditions make codes stale. Growth: q was trained from fewer than a
// full sample and the store has since doubled, so better ranges can be
// had. Drift: over at least 1,000 vectors encoded since training, and at
// least an eighth of the store, the fraction of clipped components exceeds 4 times the fraction that new
// data from the training distribution would clip, plus 0.1%. That
// expected fraction is 2(k+1)/(n+1) for ranges set at the k-th smallest
// and largest of n sampled values (k = Clip·n), about 2·Clip for a full
// sample. Rebuilding on growth costs O(n) encodes each time the store
// doubles, and on drift each time an eighth of it is new, so O(1) a vector
// over time.
func (q *Quantizer) Stale(size, encoded int, clipped int64) bool {
	if q.trained < q.sample && size >= 2*q.trained {
		return true
	}
	if encoded < max(1000, size/8) {
		return false
	}
	n := float64(min(q.trained, q.sample))
	expected := 2 * (math.Floor(q.clip*n) + 1) / (n + 1)
	rate := float64(clipped) / (float64(encoded) * float64(q.dim))
	return rate > 4*expected+0.001
}
