// This file holds the Query: a vector prepared once for distances to many
// codes.

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/internal/kernel"
)

// queryMax bounds the query's int8 weights: the kernels' contract (their
// AVX2 pair sums must not saturate int16). Seven bits of query against
// eight of data cost little: TestEstimateRanks and qflat's recall tests
// measure the result.
const queryMax = 64

// Query is a search vector prepared for one quantizer: its int8 weights
// and the terms that turn their dot product with a code into a distance
// estimate. It is read-only once made, and safe for concurrent use.
type Query struct {
	metric vector.Metric
	dim    int
	w      []int8 // wp[:dim]
	// wp is w padded with zeros to a multiple of 32 elements (GatherSpan),
	// so that the gather kernel has no tail: the bytes of a code past dim
	// are multiplied by zero.
	wp []int8
	// slack bounds how far an estimate of q·x can exceed q·x (ErrorBound).
	slack float32
	// sigma is the standard deviation of an estimate's error from the
	// codes' rounding alone (NoiseSD).
	sigma float32
	alpha float32 // the weight of one unit of the int8 dot product
	base  float32 // Σ qⱼ·loⱼ (for 1-bit codes, ⟨q, μ⟩)
	qq    float32 // ‖q‖² (for 1-bit codes, ‖q − μ‖²)

	// truncated is whether the codes hold only the vectors' first
	// components (TrainOptions.Dims).
	truncated bool

	// For 1-bit codes (bits = 1; 0 means int8): the bit planes of the
	// query's rounded components (prepareBits), the scratch of their
	// values, and what turns a count into a sum.
	bits            uint8
	planes          []uint64
	ys              []float32
	lo, delta, sumY float32
}

// Prepare validates v as a search query ([vector.Check]: the same errors
// as the float path), normalises it under Cosine, and returns it prepared
// for distances to q's codes.
func (q *Quantizer) Prepare(v vector.Vector) (*Query, error) {
	r := new(Query)
	if err := q.PrepareInto(r, v); err != nil {
		return nil, err
	}
	return r, nil
}

// GatherSpan returns the number of bytes [Query.GatherDistances] reads at
// each code: Dim rounded up to a multiple of 32, or CodeSize if that is
// more (CodeSize for 1-bit codes). Codes kept in rows at least that long (an index's layer-0 rows)
// can be scored without a tail.
func (q *Quantizer) GatherSpan() int {
	if q.bits == 1 {
		return q.CodeSize()
	}
	return max((q.dim+31)&^31, q.CodeSize())
}

// PrepareInto is Prepare into r, reusing r's storage: a search that keeps
// one Query allocates nothing for it. r must not be in use by another
// goroutine; on error it is unchanged.
func (q *Quantizer) PrepareInto(r *Query, v vector.Vector) error {
	if len(v) != q.full {
		_, err := vector.CheckNorm(v, q.full, q.metric)
		return fmt.Errorf("quant: prepare: %w", err)
	}
	// vector.CheckNorm checks the query and sums Σv² as every store and
	// search does; the weights' sums and their rounding are two vector
	// kernels (float32, sixteen lanes on AVX-512: at d = 768 a
	// preparation took 2.5 µs in two scalar float64 passes, and was a
	// quarter of an int8 walk's time at small ef). Each weight is the
	// one product v[j]*step[j] in both kernels, so the largest, scaled to
	// queryMax, never rounds past it.
	sum, err := vector.CheckNorm(v, q.full, q.metric)
	if err != nil {
		return fmt.Errorf("quant: prepare: %w", err)
	}
	v, sum = q.prefix(v, sum)
	if q.bits == 1 {
		q.prepareBits(r, v, sum)
		r.truncated = q.dim < q.full
		return nil
	}
	base32, wmax32, half32, sq32 := kernel.WeightSums(v, q.lo, q.step)
	base, wmax, half, sq := float64(base32), float64(wmax32), float64(half32), float64(sq32)
	if math.IsInf(base+half+sq, 0) {
		// Components near the largest a store accepts (Dot, L2) can
		// overflow a float32 sum of squares (not a weight: a component
		// times a step stays far below float32's limit): take the sums
		// in float64.
		base, half, sq = weightSums64(v, q.lo, q.step)
	}
	scale := 1.0
	if q.metric == vector.Cosine && sum > 0 { // a prefix can be zero
		scale = 1 / math.Sqrt(sum)
		sum = 1
	}
	span := (q.dim + 31) &^ 31
	wp := r.wp
	if cap(wp) < span {
		wp = make([]int8, span)
	}
	wp = wp[:span]
	clear(wp[q.dim:])
	*r = Query{
		planes: r.planes, ys: r.ys, // kept for a 1-bit quantizer's next use
		metric: q.metric, dim: q.dim, w: wp[:q.dim], wp: wp, truncated: q.dim < q.full,
		base: float32(base * scale), qq: float32(sum),
		sigma: float32(scale * math.Sqrt(sq/12)),
	}
	if wmax == 0 {
		clear(r.w)
		return nil
	}
	// Each weight is rounded to the nearest unit of alpha, ties to even.
	alpha := wmax32 / queryMax
	b, _ := kernel.RoundWeights(v, q.step, queryMax/wmax32, alpha, r.w)
	below := float64(b)
	r.alpha = float32(float64(alpha) * scale)
	// Each code byte is at most 255; each coded component within half a
	// step of the vector's (unless clipped).
	r.slack = float32(scale * (255*below + half/2))
	return nil
}

// weightSums64 returns Σ v·lo, Σ |v·step| and Σ (v·step)² in float64.
func weightSums64(v, lo, step []float32) (base, half, sq float64) {
	lo, step = lo[:len(v)], step[:len(v)]
	for j, x := range v {
		base += float64(x) * float64(lo[j])
		a := math.Abs(float64(x * step[j]))
		half += a
		sq += a * a
	}
	return base, half, sq
}

// ErrorBound returns b such that, for every vector x all of whose
// components lie within the quantizer's ranges, the exact distance to x is
// at least the estimate from x's code minus b (up to float32 rounding of
// the two). Two terms make it: each component of the code is within half a
// step of x's (Σ|qⱼ|·stepⱼ/2 over the inner product), and each of the
// query's int8 weights within half a unit of its exact value, a unit
// weighing up to 255 in the sum. Under L2 the inner product counts twice.
// A component clipped to its range (about 0.1% of them with the default
// clip) can add more than its half step: the bound is then not strict.
//
// A search that rescores its candidates exactly uses it to stop: once a
// candidate's estimate minus b exceeds the k-th exact distance found, no
// later candidate (in ascending order of estimate) can rank among the
// first k.
//
// A 1-bit code's estimate has no such bound, nor has one of truncated
// codes against the whole vectors' distance: ErrorBound is +Inf.
func (r *Query) ErrorBound() float32 {
	if r.bits == 1 || r.truncated {
		return float32(math.Inf(1))
	}
	if r.metric == vector.L2 {
		return 2 * r.slack
	}
	return r.slack
}

// NoiseSD returns the standard deviation of the part of an estimate's
// error that the rounding of a vector's components to its code makes:
// each component is off by up to half a step, uniformly for any smooth
// spread of the data within a step, and the query weighs it by
// |qⱼ|·stepⱼ, so the inner product is off by a sum of independent terms
// of variance (qⱼ·stepⱼ)²/12 (doubled under L2). It is a floor, not the
// whole error: the query's own rounding to int8 weights each code byte by
// the weight's rounding error, which adds as much again or more (about
// twice the standard deviation on codes spread over their whole ranges,
// less on real data, whose codes crowd the middle); a search that
// rescores measures the whole from the codes it scores exactly. Unlike
// ErrorBound it is a typical size, not a bound. For 1-bit codes it is
// 0: their error is mostly the signs', which only the scored codes
// measure.
func (r *Query) NoiseSD() float32 {
	if r.bits == 1 {
		return 0
	}
	if r.metric == vector.L2 {
		return 2 * r.sigma
	}
	return r.sigma
}

// finish turns the int8 dot product of a code into its distance estimate.
func (r *Query) finish(dot int32, code []byte) float32 {
	// The product is rounded before the add (the conversion forbids a fused
	// multiply-add), as the gather kernel computes it.
	ip := r.base + float32(r.alpha*float32(dot))
	switch r.metric {
	case vector.Cosine:
		return 1 - ip
	case vector.Dot:
		return -ip
	}
	norm := math.Float32frombits(binary.LittleEndian.Uint32(code[r.dim:]))
	return r.qq - 2*ip + norm
}

// Distance returns the estimated distance from the query to the vector
// whose code is code, under the quantizer's metric. Like
// [vector.InnerProduct] it is low-level arithmetic: it panics if code is
// not CodeSize bytes.
func (r *Query) Distance(code []byte) float32 {
	if len(code) != r.codeSize() {
		panic("quant: Distance of a code of the wrong length")
	}
	if r.bits == 1 {
		return r.bitsDistance(code)
	}
	return r.finish(kernel.DotU8I8(r.w, code), code)
}

// Distance4 returns the estimated distances to four codes anywhere in
// memory, in one pass over the query (a graph scores a node's neighbours
// with it). It panics if a code is not CodeSize bytes.
func (r *Query) Distance4(a, b, c, d []byte) [4]float32 {
	n := r.codeSize()
	if len(a) != n || len(b) != n || len(c) != n || len(d) != n {
		panic("quant: Distance4 of a code of the wrong length")
	}
	if r.bits == 1 {
		return [4]float32{r.bitsDistance(a), r.bitsDistance(b), r.bitsDistance(c), r.bitsDistance(d)}
	}
	dots := kernel.DotU8I8x4(r.w, a, b, c, d)
	return [4]float32{r.finish(dots[0], a), r.finish(dots[1], b), r.finish(dots[2], c), r.finish(dots[3], d)}
}

// GatherDistances writes into out[i] the estimated distance to the code
// at codes[i], for the len(codes) codes, scored four at a time in one
// kernel call. Each pointer must address GatherSpan readable bytes (the
// code, then anything): they are read without bounds checks, and bytes
// past the code's Dim count zero. out must hold len(codes) values.
func (r *Query) GatherDistances(codes []*byte, out []float32) {
	out = out[:len(codes)]
	if len(codes) == 0 {
		return
	}
	if r.bits == 1 {
		r.bitsDistances(codes, out)
		return
	}
	// The kernel writes each inner-product estimate base + alpha·dot
	// (finish's first step, bit for bit); the metric's step follows.
	kernel.DotU8I8GatherAffine(r.wp, codes, r.alpha, r.base, out)
	switch r.metric {
	case vector.Cosine:
		for i, ip := range out {
			out[i] = 1 - ip
		}
	case vector.Dot:
		for i, ip := range out {
			out[i] = -ip
		}
	default:
		for i, ip := range out {
			out[i] = r.qq - 2*ip + normAt(codes[i], r.dim)
		}
	}
}

// codeSize is the length of the codes r scores.
func (r *Query) codeSize() int {
	if r.bits == 1 {
		return CodeSizeOf(r.dim, 1)
	}
	return r.dim + normBytes
}

// normAt returns the ‖x‖² trailer of the code at c, of dimension dim.
func normAt(c *byte, dim int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(c), dim)), normBytes)))
}

// Distances writes into out[i] the estimated distance to code i of codes,
// len(out) codes of CodeSize bytes laid end to end: the kernel of a scan.
// It panics if len(codes) != len(out)·CodeSize.
func (r *Query) Distances(codes []byte, out []float32) {
	n := r.codeSize()
	if len(codes) != n*len(out) {
		panic("quant: Distances size mismatch")
	}
	if r.bits == 1 {
		for i := range out {
			out[i] = r.bitsDistance(codes[i*n : (i+1)*n])
		}
		return
	}
	var buf [64]int32
	for lo := 0; lo < len(out); lo += len(buf) {
		m := min(len(buf), len(out)-lo)
		dots := buf[:m]
		kernel.DotU8I8Batch(r.w, codes[lo*n:(lo+m)*n], n, dots)
		for i, d := range dots {
			out[lo+i] = r.finish(d, codes[(lo+i)*n:(lo+i+1)*n])
		}
	}
}
