// This file holds the BoundedQuery: a query whose estimates come with a
// strict bound tight enough to pass items over without reading them.

package quant

import (
	"fmt"
	"math"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/internal/kernel"
)

// BoundedQuery is a search vector prepared in two levels of int8
// weights: the second weighs what rounding the first left over, so that
// the query's own rounding moves an estimate about a hundred times less
// than a [Query]'s. What bounds an estimate's error is then mostly the
// code's, which [Quantizer.Residual] measures for each vector: the
// exact distance lies between
//
//	estimate − m·(Slack + Norm·Residual(x))
//	estimate + m·(Rise + Norm·Residual(x))
//
// with m = 2 under L2 (its inner product counts twice) and 1 otherwise,
// up to the float32 rounding of the sums. A [Query]'s ErrorBound on the
// same data is several times larger, being made for any vector in the
// ranges. Scoring a code costs two int8 dot products instead of one.
//
// It is read-only once made, and safe for concurrent use.
type BoundedQuery struct {
	metric vector.Metric
	dim    int
	w1, w2 []int8    // the two levels, padded with zeros to GatherSpan
	rest   []float32 // what the first level leaves of each weight
	ones   []float32 // the steps of the second level's rounding
	a1, a2 float64
	base   float64 // Σ qⱼ·loⱼ
	qq     float32 // ‖q‖²
	slack  float32
	rise   float32
	norm   float32
}

// PrepareBounded prepares v as PrepareInto does (the same checks and
// errors; normalised under Cosine) into r, reusing its storage. A 1-bit
// quantizer, or one of truncated codes, gives an error wrapping
// [vector.ErrInvalidOptions]: their estimates have no strict bound.
func (q *Quantizer) PrepareBounded(r *BoundedQuery, v vector.Vector) error {
	if q.bits == 1 || q.dim < q.full {
		return fmt.Errorf("%w: quant: a bounded query needs int8 codes of whole vectors", vector.ErrInvalidOptions)
	}
	sum, err := vector.CheckNorm(v, q.dim, q.metric)
	if err != nil {
		return fmt.Errorf("quant: prepare: %w", err)
	}
	scale := 1.0
	if q.metric == vector.Cosine {
		scale = 1 / math.Sqrt(sum)
		sum = 1
	}
	span := (q.dim + 31) &^ 31
	w1, w2, rest, ones := r.w1, r.w2, r.rest, r.ones
	if cap(w1) < span || cap(ones) < q.dim {
		w1, w2, rest, ones = make([]int8, span), make([]int8, span), make([]float32, q.dim), make([]float32, q.dim)
		for j := range ones {
			ones[j] = 1
		}
	}
	w1, w2, rest, ones = w1[:span], w2[:span], rest[:q.dim], ones[:q.dim]
	clear(w1[q.dim:])
	clear(w2[q.dim:])
	base, wmax, _, _ := kernel.WeightSums(v, q.lo, q.step)
	*r = BoundedQuery{metric: q.metric, dim: q.dim, w1: w1, w2: w2, rest: rest, ones: ones,
		base: float64(base) * scale, qq: float32(sum), norm: float32(math.Sqrt(sum))}
	if math.IsInf(float64(base), 0) || wmax == 0 {
		// Components near the largest a store accepts overflow the
		// float32 sum: no estimate then bounds anything (every item is
		// read), as with no weights at all.
		clear(w1)
		clear(w2)
		r.slack = float32(math.Inf(1))
		if wmax == 0 && !math.IsInf(float64(base), 0) {
			r.slack = 0
		}
		r.rise = r.slack
		return nil
	}
	// The first level rounds each weight qⱼ·stepⱼ to a unit of a1; the
	// second rounds what that left (at most half a unit) to a unit of a2.
	a1 := wmax / queryMax
	kernel.RoundWeights(v, q.step, queryMax/wmax, a1, w1[:q.dim])
	for j, x := range v {
		rest[j] = x*q.step[j] - float32(w1[j])*a1
	}
	a2 := a1 / 2 / queryMax
	below, above := kernel.RoundWeights(rest, ones, 1/a2, a2, w2[:q.dim])
	r.a1, r.a2 = float64(a1)*scale, float64(a2)*scale
	// Codes are at most 255; the relative margin covers the float32
	// rounding of the leftovers.
	r.slack = float32(255 * float64(below) * scale * (1 + 1e-5))
	r.rise = float32(255 * float64(above) * scale * (1 + 1e-5))
	return nil
}

// Slack bounds how far the query's rounding can move an estimate of q·x
// upward, for any code.
func (r *BoundedQuery) Slack() float32 { return r.slack }

// Rise bounds how far the query's rounding can move an estimate of q·x
// downward, for any code: Slack's counterpart, which bounds the exact
// distance from above.
func (r *BoundedQuery) Rise() float32 { return r.rise }

// Norm returns ‖q‖ (1 under Cosine, which normalises the query).
func (r *BoundedQuery) Norm() float32 { return r.norm }

// GatherDistances writes into out[i] the estimated distance to the code
// at codes[i]; each pointer must address GatherSpan readable bytes, as
// for [Query.GatherDistances].
func (r *BoundedQuery) GatherDistances(codes []*byte, out []float32) {
	out = out[:len(codes)]
	var d1, d2 [32]int32
	for lo := 0; lo < len(codes); lo += len(d1) {
		cs := codes[lo:min(lo+len(d1), len(codes))]
		kernel.DotU8I8Gather2(r.w1, r.w2, cs, d1[:len(cs)], d2[:len(cs)])
		for i, c := range cs {
			ip := float32(r.base + r.a1*float64(d1[i]) + r.a2*float64(d2[i]))
			switch r.metric {
			case vector.Cosine:
				out[lo+i] = 1 - ip
			case vector.Dot:
				out[lo+i] = -ip
			default:
				out[lo+i] = r.qq - 2*ip + normAt(c, r.dim)
			}
		}
	}
}

// Residual returns ‖x − x̂‖, rounded up: how far v (normalised under
// Cosine, as Encode codes it) lies from what its code stands for. code
// must be v's int8 code (q's Bits 8).
func (q *Quantizer) Residual(v vector.Vector, code []byte) float32 {
	scale := 1.0
	if q.metric == vector.Cosine {
		sum := 0.0
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		scale = 1 / math.Sqrt(sum)
	}
	s := 0.0
	for j, x := range v {
		e := float64(x)*scale - (float64(q.lo[j]) + float64(q.step[j])*float64(code[j]))
		s += e * e
	}
	return float32(math.Sqrt(s) * (1 + 1e-6))
}
