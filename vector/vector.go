package vector

import (
	"fmt"
	"math"
)

// Vector is a dense embedding. Functions that accept a Vector from a caller
// never keep it: stores copy what they are given.
type Vector = []float32

// ID is the numeric key of a stored vector. Every uint64 value is valid at
// this layer; the memory store at the module root maps the user's string ids
// to IDs, so applications rarely see them.
//
// It is a plain value.
type ID uint64

// Result is one hit of a search: the id and its distance to the query under
// the index's [Metric]. Smaller distances are closer for every metric.
//
// It is a plain value.
type Result struct {
	ID       ID
	Distance float32
}

// Less reports whether r ranks before o: a smaller distance, or an equal
// distance and a smaller id. It is the one ordering of results in cairn.
func (r Result) Less(o Result) bool {
	if r.Distance != o.Distance {
		return r.Distance < o.Distance
	}
	return r.ID < o.ID
}

// MaxSquaredNorm is the largest squared Euclidean norm Check accepts under
// [Dot] and [L2]: MaxFloat32/8, a norm of about 6.5e18.
//
// It is the bound that keeps every distance between two accepted vectors
// finite in the float32 kernels. For vectors a and b with ‖a‖², ‖b‖² ≤ B,
// each product and every partial sum of a·b is at most Σ|aᵢbᵢ| ≤ ‖a‖‖b‖ ≤ B
// (Cauchy–Schwarz), and every partial sum of Σ(aᵢ−bᵢ)² is at most
// (‖a‖+‖b‖)² ≤ 4B. Float32 rounding of a sum of up to 2²⁰ non-negative
// terms inflates it by less than 7%, so 4B·1.07 < MaxFloat32 needs
// B < MaxFloat32/4.28; MaxFloat32/8 leaves a margin for any summation order
// a kernel chooses. Under [Cosine] vectors are normalised (in float64) to
// unit length, so any finite non-zero vector is accepted.
const MaxSquaredNorm = math.MaxFloat32 / 8

// Check validates v for a collection of dimension dim under metric m: the
// length must be dim, every component finite, under Cosine the norm must be
// non-zero, and under Dot and L2 the squared norm at most [MaxSquaredNorm].
// It returns an error wrapping [ErrDimensionMismatch], [ErrNonFinite],
// [ErrZeroVector] or [ErrOutOfRange].
func Check(v Vector, dim int, m Metric) error {
	_, err := CheckNorm(v, dim, m)
	return err
}

// CheckNorm is [Check], also returning Σv² (summed in float64 by
// sumSquares) when v is valid, for callers that go on to normalise v or
// need its norm: PrepareInto, and package quant's query preparation, which
// would otherwise sum it again.
func CheckNorm(v Vector, dim int, m Metric) (float64, error) {
	if len(v) != dim {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrDimensionMismatch, len(v), dim)
	}
	sum, bad := sumSquares(v)
	if bad >= 0 {
		return 0, fmt.Errorf("%w: component %d is %v", ErrNonFinite, bad, v[bad])
	}
	if m == Cosine && sum == 0 {
		return 0, ErrZeroVector
	}
	if m != Cosine && sum > MaxSquaredNorm {
		return 0, fmt.Errorf("%w: squared norm %.3g exceeds %.3g, where float32 distances could overflow", ErrOutOfRange, sum, MaxSquaredNorm)
	}
	return sum, nil
}

// sumSquares returns Σv² in float64, and the index of v's first NaN or
// ±Inf component (-1 if there is none; the sum is then 0). Each square is
// exact in float64; the sum is taken in four interleaved parts, which
// keeps four additions in flight instead of one (at 768 dimensions half
// the time of one running sum: BenchmarkCheckNorm), and every vector and
// query is normalised with the same sum, so that a vector stored and the
// same vector asked as a query agree to the bit.
func sumSquares(v Vector) (float64, int) {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		a, b, c, d := v[i], v[i+1], v[i+2], v[i+3]
		if nonFinite(a) || nonFinite(b) || nonFinite(c) || nonFinite(d) {
			break // the loop below finds which
		}
		s0 += float64(a) * float64(a)
		s1 += float64(b) * float64(b)
		s2 += float64(c) * float64(c)
		s3 += float64(d) * float64(d)
	}
	for ; i < len(v); i++ {
		if nonFinite(v[i]) {
			return 0, i
		}
		s0 += float64(v[i]) * float64(v[i])
	}
	return (s0 + s1) + (s2 + s3), -1
}

// nonFinite reports whether x is NaN or ±Inf: its exponent bits all ones.
// Testing the bits is several times faster than converting x and calling
// math.IsNaN and math.IsInf, and the check runs on every vector a store
// loads.
func nonFinite(x float32) bool { return math.Float32bits(x)&0x7f800000 == 0x7f800000 }

// Prepare validates v with [Check] and returns the form in which it is
// stored and compared: a copy, normalised to unit length under Cosine.
// Indexes and stores call it once on the way in, for stored vectors and for
// queries alike, so that the hot loops only ever compute dot products or
// squared distances.
func Prepare(v Vector, dim int, m Metric) (Vector, error) {
	if err := Check(v, dim, m); err != nil {
		return nil, err
	}
	out := make(Vector, len(v))
	copy(out, v)
	if m == Cosine {
		normalize(out)
	}
	return out, nil
}

// PrepareInto is [Prepare] writing into dst, which must have length dim.
func PrepareInto(dst, v Vector, dim int, m Metric) error {
	sum, err := CheckNorm(v, dim, m)
	if err != nil {
		return err
	}
	if m == Cosine {
		// Check's Σv² is normalize's: one pass fewer.
		scaleInto(dst, v, 1/math.Sqrt(sum))
		return nil
	}
	copy(dst, v)
	return nil
}

// normalize scales v to unit length in float64, so that the result is as
// close to unit norm as float32 allows; v is finite.
func normalize(v Vector) {
	sum, _ := sumSquares(v)
	if sum == 0 {
		return
	}
	scaleInto(v, v, 1/math.Sqrt(sum))
}

// scaleInto writes v·inv, rounded from float64, into dst (len(v) values).
func scaleInto(dst, v Vector, inv float64) {
	dst = dst[:len(v)]
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
}
