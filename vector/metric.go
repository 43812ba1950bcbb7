package vector

import (
	"fmt"
	"math"
)

// Metric says how distance is measured. In every metric a smaller distance
// means closer, so results are always sorted ascending.
//
// It is a plain value.
type Metric uint8

const (
	// Cosine distance is 1 − cos(a, b), in [0, 2]. Vectors are normalised
	// to unit length when stored and when queried, so it is computed as
	// 1 − a·b. Zero vectors are rejected with [ErrZeroVector].
	Cosine Metric = iota + 1

	// Dot distance is the negated inner product, −a·b: the largest inner
	// product ranks first. Vectors are stored as given.
	Dot

	// L2 distance is the squared Euclidean distance, Σ(aᵢ − bᵢ)². The square
	// root is omitted: it does not change the ranking.
	L2
)

// String returns "cosine", "dot" or "l2".
func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Dot:
		return "dot"
	case L2:
		return "l2"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// Valid reports whether m is one of the defined metrics.
func (m Metric) Valid() bool { return m >= Cosine && m <= L2 }

// ParseMetric returns the metric named s ("cosine", "dot" or "ip", "l2").
func ParseMetric(s string) (Metric, error) {
	switch s {
	case "cosine":
		return Cosine, nil
	case "dot", "ip":
		return Dot, nil
	case "l2":
		return L2, nil
	}
	return 0, fmt.Errorf("%w: unknown metric %q", ErrInvalidOptions, s)
}

// Distance returns the distance between two arbitrary vectors of equal
// length under m, computed in float64. It normalises under Cosine, so it
// accepts vectors that were never prepared; it is the slow, exact reference,
// not the function indexes use. It panics if the lengths differ.
func (m Metric) Distance(a, b Vector) float64 {
	if len(a) != len(b) {
		panic("vector: Distance of vectors of unequal length")
	}
	var dot, na, nb, l2 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		d := x - y
		l2 += d * d
	}
	switch m {
	case Cosine:
		return 1 - dot/math.Sqrt(na*nb)
	case Dot:
		return -dot
	case L2:
		return l2
	}
	panic("vector: Distance with invalid metric")
}

// DistanceFunc returns the fast distance under m between two vectors that
// went through [Prepare] (unit length under Cosine). It is what indexes call
// in their hot loops; it panics if the lengths differ.
func (m Metric) DistanceFunc() func(a, b Vector) float32 {
	switch m {
	case Cosine:
		return cosineDistance
	case Dot:
		return dotDistance
	case L2:
		return SquaredL2
	}
	panic("vector: DistanceFunc of invalid metric")
}

func cosineDistance(a, b Vector) float32 { return 1 - InnerProduct(a, b) }
func dotDistance(a, b Vector) float32    { return -InnerProduct(a, b) }

// BatchDistance writes into out[i] the distance under m between the
// prepared query q and row i of rows, a row-major matrix of len(out) vectors
// of len(q) components. It is the kernel of exact scans: one call per block
// lets the SIMD code keep q in registers. It panics if the sizes disagree.
func (m Metric) BatchDistance(q Vector, rows []float32, out []float32) {
	dim := len(q)
	if len(rows) != dim*len(out) {
		panic("vector: BatchDistance size mismatch")
	}
	switch m {
	case Cosine:
		dotBatch(q, rows, out)
		for i, d := range out {
			out[i] = 1 - d
		}
	case Dot:
		dotBatch(q, rows, out)
		for i, d := range out {
			out[i] = -d
		}
	case L2:
		l2Batch(q, rows, out)
	default:
		panic("vector: BatchDistance with invalid metric")
	}
}
