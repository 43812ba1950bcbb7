// This file holds 1-bit codes (TrainOptions.Bits = 1): one sign bit a
// dimension about the sample's mean, scored against a query rounded to
// four bits.

package quant

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/internal/kernel"
)

// binTrailer is the size of a 1-bit code's trailer: the scale
// ‖x−μ‖²/‖x−μ‖₁ and the exact term (‖x−μ‖² under L2, else ⟨x−μ, μ⟩) as
// float32, and the count of set bits as a uint32.
const binTrailer = 12

// queryLevels is the number of steps a query's components are rounded
// to for 1-bit codes (four bits, each a plane of the kernel).
const queryLevels = 15

// binWords is the number of 64-bit words of a 1-bit code's bits.
func binWords(dim int) int { return (dim + 63) / 64 }

// CodeSizeOf returns the length of a code of a vector of dim components
// at bits bits a component (8 or 1): [Quantizer.CodeSize] before there
// is a quantizer, for laying out the memory that will hold codes.
func CodeSizeOf(dim, bits int) int {
	if bits == 1 {
		return 8*binWords(dim) + binTrailer
	}
	return dim + normBytes
}

// setMean makes q a 1-bit quantizer centred on the mean of the n sampled
// vectors in arena (unit vectors under Cosine, as the store keeps them).
func (q *Quantizer) setMean(arena []float32, n int) {
	sum := make([]float64, q.dim)
	for i := range n {
		for j, x := range arena[i*q.dim : (i+1)*q.dim] {
			sum[j] += float64(x)
		}
	}
	q.lo = make([]float32, q.dim)
	for j, s := range sum {
		q.lo[j] = float32(s / float64(n))
	}
	q.step, q.inv = nil, nil
}

// encodeBits writes the 1-bit code of v into dst: bit j of the words is
// set where x − μ is positive in component j, x being v normalised under
// Cosine, then the trailer.
func (q *Quantizer) encodeBits(dst []byte, v vector.Vector) {
	scale := 1.0
	if q.metric == vector.Cosine {
		sum := 0.0
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if sum > 0 { // a prefix can be zero
			scale = 1 / math.Sqrt(sum)
		}
	}
	var l1, l2, xm float64
	var pop int
	for w := range binWords(q.dim) {
		var word uint64
		for j := w * 64; j < min(q.dim, w*64+64); j++ {
			x := float64(v[j])*scale - float64(q.lo[j])
			if x > 0 {
				word |= 1 << (j - w*64)
			}
			l1 += math.Abs(x)
			l2 += x * x
			xm += x * float64(q.lo[j])
		}
		binary.LittleEndian.PutUint64(dst[8*w:], word)
		pop += bits.OnesCount64(word)
	}
	c := 0.0
	if l1 > 0 {
		c = l2 / l1
	}
	t := dst[8*binWords(q.dim):]
	binary.LittleEndian.PutUint32(t, math.Float32bits(float32(c)))
	if q.metric != vector.L2 {
		l2 = xm
	}
	binary.LittleEndian.PutUint32(t[4:], math.Float32bits(float32(l2)))
	binary.LittleEndian.PutUint32(t[8:], uint32(pop))
}

// prepareBits prepares v (its first Coded components), of squared norm
// sum, for 1-bit codes into r,
// reusing r's storage. The components y of the query less the mean
// are rounded to queryLevels steps, u = round((y − lo)/Δ), and laid out
// as four bit planes (plane b holds bit b of every u; kernel.BitsGather),
// so that Σ uⱼ over the set bits of a code is four AND and popcount
// pairs a word.
func (q *Quantizer) prepareBits(r *Query, v vector.Vector, sum float64) {
	scale := 1.0
	if q.metric == vector.Cosine && sum > 0 {
		scale = 1 / math.Sqrt(sum)
	}
	words := binWords(q.dim)
	planes, y := r.planes, r.ys
	if cap(planes) < 4*words+kernel.BitsPad || cap(y) < q.dim {
		planes, y = make([]uint64, 4*words+kernel.BitsPad), make([]float32, q.dim)
	}
	planes, y = planes[:4*words+kernel.BitsPad], y[:q.dim]
	clear(planes)
	lo, hi := math.Inf(1), math.Inf(-1)
	var base, qq float64
	for j, x := range v {
		yj := float64(x)*scale - float64(q.lo[j])
		qq += yj * yj
		base += float64(x) * scale * float64(q.lo[j])
		y[j] = float32(yj)
		lo, hi = min(lo, float64(y[j])), max(hi, float64(y[j]))
	}
	delta := (hi - lo) / queryLevels
	sumU := 0
	for j, yj := range y {
		u := 0
		if delta > 0 {
			u = int(math.Round((float64(yj) - lo) / delta))
		}
		sumU += u
		for b := range 4 {
			if u>>b&1 != 0 {
				planes[b*words+j/64] |= 1 << (j % 64)
			}
		}
	}
	// The sum of the rounded components, so that the estimate is of
	// ⟨s, ŷ⟩ exactly (ŷ the rounded query).
	sumY := lo*float64(q.dim) + delta*float64(sumU)
	*r = Query{
		metric: q.metric, dim: q.dim, bits: 1, planes: planes, ys: y, wp: r.wp[:0],
		lo: float32(lo), delta: float32(delta), sumY: float32(sumY),
		base: float32(base), qq: float32(qq),
	}
}

// bitsDistances writes the estimated distance from the 1-bit query r
// to the code at codes[i] into out[i] (see bitsFinish).
func (r *Query) bitsDistances(codes []*byte, out []float32) {
	out = out[:len(codes)]
	if len(out) == 0 {
		return
	}
	// The kernel's sums go into out's own memory, each read back just
	// before its distance takes its place.
	sums := unsafe.Slice((*int32)(unsafe.Pointer(&out[0])), len(out))
	kernel.BitsGather(r.planes, binWords(r.dim), codes, sums)
	for i, c := range codes {
		out[i] = r.bitsFinish(sums[i], c)
	}
}

// bitsFinish returns the estimated distance to the code at c whose
// bit-plane sum is t. With x' = x − μ and y = q − μ, s the code's signs
// (±1) and its trailer's scale c = ‖x'‖²/‖x'‖₁, the inner product ⟨x', y⟩
// is estimated as c·⟨s, y⟩: exact for y = x', and RaBitQ's estimator
// without its random rotation. Then
//
//	⟨x, q⟩ = ⟨x', y⟩ + ⟨x', μ⟩ + ⟨μ, q⟩    (Cosine, Dot)
//	‖x − q‖² = ‖x'‖² + ‖y‖² − 2⟨x', y⟩      (L2)
//
// where ⟨x', μ⟩ or ‖x'‖², the exact term, is in the trailer. Centring
// the query too keeps ⟨x', μ⟩, which signs estimate badly, out of the
// estimate.
func (r *Query) bitsFinish(t int32, c *byte) float32 {
	tr := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(c), 8*binWords(r.dim))), binTrailer)
	scale := math.Float32frombits(binary.LittleEndian.Uint32(tr))
	exact := math.Float32frombits(binary.LittleEndian.Uint32(tr[4:]))
	pop := binary.LittleEndian.Uint32(tr[8:])
	// Σ ŷⱼ over the set bits, then ⟨s, ŷ⟩ = 2·that − Σ ŷ.
	ip := scale * (2*(r.delta*float32(t)+r.lo*float32(pop)) - r.sumY)
	switch r.metric {
	case vector.Cosine:
		return 1 - (ip + exact + r.base)
	case vector.Dot:
		return -(ip + exact + r.base)
	}
	return exact + r.qq - 2*ip
}

// bitsDistance is the estimated distance to one code of CodeSize bytes.
func (r *Query) bitsDistance(c []byte) float32 {
	var out [1]float32
	r.bitsDistances([]*byte{&c[0]}, out[:])
	return out[0]
}
