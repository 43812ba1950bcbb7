// Package metavalue holds the rules for metadata values: which Go values an
// item's metadata may hold, and the form each is stored in and returned as.
// The root package builds its compact metadata on [Of] and [Field]; the
// modules beside it (weaviate, cmd/cairn) call [Map] to accept exactly what
// a local collection accepts.
//
// The stored form of a value is a string, a bool, or a number: a float64
// whenever a float64 holds it exactly, which is every float and every
// integer up to 2^53 in magnitude, else (an integer a float64 would round)
// the int64 itself, so that it stays exact through storage, filters and
// JSON. The choice is canonical, so equal numbers have equal forms.
package metavalue

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairndb/cairn/vector"
)

// Of returns the stored form of a metadata value: strings and booleans as
// they are, every Go number type (and json.Number) as a float64 or an int64
// (see the package doc). A string or float64 comes back in the interface it
// came in, and small whole numbers in shared boxes, so that most values
// cost no allocation. It returns an error wrapping
// [vector.ErrInvalidOptions] for any other type, for non-finite numbers,
// for an integer beyond int64 that no float64 holds exactly, and for
// strings that are not valid UTF-8, none of which JSON can carry.
func Of(v any) (any, error) {
	var f float64
	var given any // v, if it is a float64
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("%w: metadata string %q is not valid UTF-8", vector.ErrInvalidOptions, x)
		}
		return v, nil
	case bool:
		return v, nil
	case float64:
		f, given = x, v
	case float32:
		f = float64(x)
	case int:
		return intValue(int64(x)), nil
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		return intValue(x), nil
	case uint:
		return uintOrError(uint64(x))
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		return uintOrError(x)
	case json.Number:
		return JSONNumber(x)
	default:
		return nil, fmt.Errorf("%w: unsupported metadata type %T (want string, number or bool)", vector.ErrInvalidOptions, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: metadata number %v is not finite", vector.ErrInvalidOptions, f)
	}
	return numberValue(f, given), nil
}

// JSONNumber returns the stored form of a JSON number: exact if it is an
// integer within int64, else the float64 nearest to it. An integer literal
// beyond int64 that no float64 holds exactly is refused, rather than
// silently rounded, as is a number that is not finite.
func JSONNumber(x json.Number) (any, error) {
	if i, err := x.Int64(); err == nil {
		return intValue(i), nil
	}
	f, err := x.Float64()
	if err != nil {
		return nil, fmt.Errorf("%w: number %q: %v", vector.ErrInvalidOptions, x, err)
	}
	if s := string(x); !strings.ContainsAny(s, ".eE") && strconv.FormatFloat(f, 'f', 0, 64) != strings.TrimPrefix(s, "+") {
		return nil, fmt.Errorf("%w: integer %s is beyond int64 and no float64 holds it exactly", vector.ErrInvalidOptions, x)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: metadata number %v is not finite", vector.ErrInvalidOptions, f)
	}
	return numberValue(f, nil), nil
}

// JSON returns v, a stored form, as encoding/json must be given it for
// [JSONNumber] to read back the same value: a whole float64 of at least
// 2^53 in magnitude (and below 1e21, where encoding/json turns to an
// exponent) as a json.Number of its exact digits, since encoding/json
// writes the shortest digits that round to it, which read back as another
// integer (2^60 as 1152921504606847000) or as none (2^63). Other values
// are returned as they are.
func JSON(v any) any {
	f, ok := v.(float64)
	if a := math.Abs(f); !ok || a < 1<<53 || a >= 1e21 || f != math.Trunc(f) {
		return v
	}
	return json.Number(strconv.FormatFloat(f, 'f', 0, 64))
}

// Field returns the stored form of the value v of metadata key k, or an
// error naming the key: a key must be valid UTF-8, a value one [Of]
// accepts.
func Field(k string, v any) (any, error) {
	if !utf8.ValidString(k) {
		return nil, fmt.Errorf("%w: metadata key %q is not valid UTF-8", vector.ErrInvalidOptions, k)
	}
	box, err := Of(v)
	if err != nil {
		return nil, fmt.Errorf("metadata %q: %w", k, err)
	}
	return box, nil
}

// Map returns md as a collection stores it and returns it, every value in
// its stored form ([Field]); nil for an empty map.
func Map(md map[string]any) (map[string]any, error) {
	if len(md) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(md))
	for k, v := range md {
		box, err := Field(k, v)
		if err != nil {
			return nil, err
		}
		out[k] = box
	}
	return out, nil
}

// smallNumbers holds the boxes of the whole numbers from smallNumberMin to
// smallNumberMax as float64s, shared by every value that holds one (a
// bucket, a count, a year), which then costs no allocation. It is built by
// the first use of such a number, not by every program that imports the
// package.
var smallNumbers = sync.OnceValue(func() *[smallNumberMax - smallNumberMin + 1]any {
	t := new([smallNumberMax - smallNumberMin + 1]any)
	for i := range t {
		t[i] = float64(i + smallNumberMin)
	}
	return t
})

const smallNumberMin, smallNumberMax = -128, 2100

// numberValue returns the stored form of the finite number f; given, if it
// is not nil, is f already boxed as a float64.
func numberValue(f float64, given any) any {
	switch {
	case given != nil:
		return given
	case f >= smallNumberMin && f <= smallNumberMax && f == math.Trunc(f):
		return smallNumbers()[int(f)-smallNumberMin] // −0 is 0, equal to it
	}
	return f
}

// exactFloat reports whether the integer of magnitude u is a float64
// exactly: its significant bits fit the 53 of a float64's mantissa.
func exactFloat(u uint64) bool {
	return u == 0 || bits.Len64(u)-bits.TrailingZeros64(u) <= 53
}

// intValue returns the stored form of the integer i: a float64 if that
// holds i exactly, else the int64 itself.
func intValue(i int64) any {
	u := uint64(i)
	if i < 0 {
		u = -u // MinInt64 stays 1<<63, its magnitude
	}
	if exactFloat(u) {
		return numberValue(float64(i), nil)
	}
	return i
}

// uintOrError returns the stored form of the integer u, or an error if it
// is beyond int64 and no float64 holds it exactly.
func uintOrError(u uint64) (any, error) {
	if u <= math.MaxInt64 {
		return intValue(int64(u)), nil
	}
	if exactFloat(u) {
		return numberValue(float64(u), nil), nil
	}
	return nil, fmt.Errorf("%w: metadata number %d is beyond int64 and no float64 holds it exactly", vector.ErrInvalidOptions, u)
}
