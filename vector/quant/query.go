// This file holds the Query: a vector prepared once for distances to many
// codes.

package quant

import (
	"encoding/binary"
	"fmt"
	"math"

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
	w      []int8
	alpha  float32 // the weight of one unit of the int8 dot product
	base   float32 // Σ qⱼ·loⱼ
	qq     float32 // ‖q‖²
}

// Prepare validates v as a search query ([vector.Check]: the same errors
// as the float path), normalises it under Cosine, and returns it prepared
// for distances to q's codes.
func (q *Quantizer) Prepare(v vector.Vector) (*Query, error) {
	if err := vector.Check(v, q.dim, q.metric); err != nil {
		return nil, fmt.Errorf("quant: prepare: %w", err)
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	scale := 1.0
	if q.metric == vector.Cosine {
		scale = 1 / math.Sqrt(sum)
		sum = 1
	}
	// The weights qⱼ·sⱼ are computed twice, for their maximum and then for
	// their rounding, rather than kept in a float64 slice: a search
	// prepares one query each, and at d = 768 that slice (6 KiB) was most
	// of what a graph search allocated, enough to bring the GC into the
	// query loop. The two products are the same expression, so they are
	// bit-identical.
	var base, wmax float64
	for j, x := range v {
		f := float64(x) * scale
		base += f * float64(q.lo[j])
		wmax = max(wmax, math.Abs(f*float64(q.step[j])))
	}
	r := &Query{metric: q.metric, dim: q.dim, w: make([]int8, q.dim), base: float32(base), qq: float32(sum)}
	if wmax > 0 {
		alpha := wmax / queryMax
		for j, x := range v {
			w := float64(x) * scale * float64(q.step[j])
			r.w[j] = int8(math.Round(w / alpha))
		}
		r.alpha = float32(alpha)
	}
	return r, nil
}

// finish turns the int8 dot product of a code into its distance estimate.
func (r *Query) finish(dot int32, code []byte) float32 {
	ip := r.base + r.alpha*float32(dot)
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
	if len(code) != r.dim+normBytes {
		panic("quant: Distance of a code of the wrong length")
	}
	return r.finish(kernel.DotU8I8(r.w, code), code)
}

// Distance4 returns the estimated distances to four codes anywhere in
// memory, in one pass over the query (a graph scores a node's neighbours
// with it). It panics if a code is not CodeSize bytes.
func (r *Query) Distance4(a, b, c, d []byte) [4]float32 {
	n := r.dim + normBytes
	if len(a) != n || len(b) != n || len(c) != n || len(d) != n {
		panic("quant: Distance4 of a code of the wrong length")
	}
	dots := kernel.DotU8I8x4(r.w, a, b, c, d)
	return [4]float32{r.finish(dots[0], a), r.finish(dots[1], b), r.finish(dots[2], c), r.finish(dots[3], d)}
}

// Distances writes into out[i] the estimated distance to code i of codes,
// len(out) codes of CodeSize bytes laid end to end: the kernel of a scan.
// It panics if len(codes) != len(out)·CodeSize.
func (r *Query) Distances(codes []byte, out []float32) {
	n := r.dim + normBytes
	if len(codes) != n*len(out) {
		panic("quant: Distances size mismatch")
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
