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
type ID uint64

// Result is one hit of a search: the id and its distance to the query under
// the index's [Metric]. Smaller distances are closer for every metric.
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

// CheckNorm is [Check], also returning Σv² (summed in float64, in order)
// when v is valid, for callers that go on to normalise v or need its
// norm: PrepareInto, and package quant's query preparation, which would
// otherwise sum it again.
func CheckNorm(v Vector, dim int, m Metric) (float64, error) {
	if len(v) != dim {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrDimensionMismatch, len(v), dim)
	}
	// A float32 is NaN or ±Inf exactly when its exponent bits are all
	// ones; testing the bits is several times faster than converting each
	// component and calling math.IsNaN and math.IsInf, and Check runs on
	// every vector a store loads.
	var sum float64 // exact enough: a float32's square is far inside float64's range
	for i, x := range v {
		if math.Float32bits(x)&0x7f800000 == 0x7f800000 {
			return 0, fmt.Errorf("%w: component %d is %v", ErrNonFinite, i, x)
		}
		f := float64(x)
		sum += f * f
	}
	if m == Cosine && sum == 0 {
		return 0, ErrZeroVector
	}
	if m != Cosine && sum > MaxSquaredNorm {
		return 0, fmt.Errorf("%w: squared norm %.3g exceeds %.3g, where float32 distances could overflow", ErrOutOfRange, sum, MaxSquaredNorm)
	}
	return sum, nil
}

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
// close to unit norm as float32 allows.
func normalize(v Vector) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
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
