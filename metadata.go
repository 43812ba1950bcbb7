package cairn

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/cairndb/cairn/internal/metavalue"
	"github.com/cairndb/cairn/vector"
)

// An item's metadata is kept in a compact form rather than as the map the
// caller gave: a slice of fields sorted by key, each value a small struct.
// It costs one allocation per item where a map costs several (a map, its
// slots, and a box for every number), and a lookup among the few keys an
// item has is a short scan.

// valueKind is the type of a metadata value.
type valueKind uint8

const (
	kindString valueKind = iota + 1
	kindNumber
	kindBool
)

// value is a normalised metadata value: a string, a number or a bool. It
// is comparable, so it serves as a map key; numbers compare by their exact
// value (0 and −0 are equal, int 3 and float64 3.0 are equal), and a
// string never equals a number.
//
// A number is held as a float64 whenever a float64 holds it exactly, which
// is every float and every integer up to 2^53 in magnitude; an integer
// that a float64 would round (int64 2^53+1, say) is held as an int64, so
// that it stays itself through storage, filters and JSON. That choice is
// canonical, so equal numbers make equal values.
//
// box holds the value as the caller sees it (the string, the float64 or
// int64, or the bool), boxed once when it is stored, so that a query returning the
// item's metadata fills each map without boxing a value again: a boxed
// scalar cannot be changed, so every result may share it. It costs no
// more memory than the string it replaces, and usually no allocation: a
// string, float64 or bool the caller gave (or JSON decoded) is kept in
// the box it came in, and small whole numbers share boxes (package
// metavalue, which owns the rules for what metadata may hold).
type value struct {
	kind valueKind
	num  float64 // the number, rounded if box is an int64; 1 or 0 for a bool
	box  any     // the string, float64, int64 or bool; see any
}

// toValue returns the stored form of a metadata value (see
// [metavalue.Of]), or an error wrapping [vector.ErrInvalidOptions] for
// one that metadata cannot hold.
func toValue(v any) (value, error) {
	box, err := metavalue.Of(v)
	if err != nil {
		return value{}, err
	}
	return boxValue(box), nil
}

// jsonNumberValue returns the value of a JSON number (see
// [metavalue.JSONNumber]).
func jsonNumberValue(x json.Number) (value, error) {
	box, err := metavalue.JSONNumber(x)
	if err != nil {
		return value{}, err
	}
	return boxValue(box), nil
}

// boxValue returns the value of box, a stored form from package
// metavalue: a string, a float64, an int64 or a bool.
func boxValue(box any) value {
	switch x := box.(type) {
	case string:
		return value{kind: kindString, box: box}
	case float64:
		return value{kind: kindNumber, num: x, box: box}
	case int64:
		return value{kind: kindNumber, num: float64(x), box: box}
	case bool:
		if x {
			return value{kind: kindBool, num: 1, box: box}
		}
		return value{kind: kindBool, box: box}
	}
	panic(fmt.Sprintf("cairn: metadata value of type %T", box))
}

// compareNumbers compares the numbers a and b exactly, returning −1, 0
// or +1. Rounding to float64 keeps order, so differing nums decide; equal
// nums differ only if one holds an int64 that rounded to the other.
func compareNumbers(a, b value) int {
	if c := cmp.Compare(a.num, b.num); c != 0 {
		return c
	}
	ai, aInt := a.box.(int64)
	bi, bInt := b.box.(int64)
	switch {
	case !aInt && !bInt:
		return 0
	case aInt && bInt:
		return cmp.Compare(ai, bi)
	case aInt:
		return compareIntFloat(ai, b.num)
	}
	return -compareIntFloat(bi, a.num)
}

// compareIntFloat compares i with f, a whole float64 that i rounds to
// (so at least 2^53 in magnitude, at most 2^63).
func compareIntFloat(i int64, f float64) int {
	if f >= 1<<63 {
		return -1 // beyond every int64
	}
	return cmp.Compare(i, int64(f))
}

// any returns v as the caller sees it: a string, a float64, an int64
// (a whole number a float64 would round) or a bool.
func (v value) any() any { return v.box }

// str returns the string v holds, "" if it holds none.
func (v value) str() string {
	s, _ := v.box.(string)
	return s
}

// field is one key of an item's metadata with its value.
type field struct {
	key string
	val value
}

// metadata is an item's normalised metadata: its fields sorted by key,
// each key once; nil for none. It is never changed once built.
type metadata []field

// normalizeMetadata returns md in its stored form (see toValue), or nil
// for an empty map.
func normalizeMetadata(md map[string]any) (metadata, error) {
	out, err := appendMetadata(nil, md)
	if len(out) == 0 {
		return nil, err
	}
	return out, err
}

// appendMetadata appends md in its stored form to dst and returns the
// result, whose new part, sorted, is md's metadata. A batch's items share
// one allocation this way (and keep it alive together).
func appendMetadata(dst metadata, md map[string]any) (metadata, error) {
	n := len(dst)
	for k, v := range md {
		box, err := metavalue.Field(k, v)
		if err != nil {
			return dst[:n], err
		}
		dst = append(dst, field{k, boxValue(box)})
	}
	slices.SortFunc(dst[n:], func(a, b field) int { return cmp.Compare(a.key, b.key) })
	return dst, nil
}

// get returns the value of key.
func (m metadata) get(key string) (value, bool) {
	if len(m) > 16 {
		i, ok := slices.BinarySearchFunc(m, key, func(f field, k string) int { return cmp.Compare(f.key, k) })
		if !ok {
			return value{}, false
		}
		return m[i].val, true
	}
	for i := range m {
		if m[i].key == key {
			return m[i].val, true
		}
	}
	return value{}, false
}

// toMap returns m as a new map for the caller, nil for none.
func (m metadata) toMap() map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for _, f := range m {
		out[f.key] = f.val.any()
	}
	return out
}

// encodeMetadata returns the JSON form of md, nil for none: an object with
// its keys sorted. It is written by hand because it runs for every item of
// every write to a file, and a flat object of scalars needs none of
// encoding/json's reflection (it is several times faster).
func encodeMetadata(md metadata) ([]byte, error) {
	if len(md) == 0 {
		return nil, nil
	}
	b := make([]byte, 0, 16*len(md)+2)
	b = append(b, '{')
	for i, f := range md {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.key)
		b = append(b, ':')
		switch v := f.val; v.kind {
		case kindString:
			b = appendJSONString(b, v.str())
		case kindBool:
			b = strconv.AppendBool(b, v.num != 0)
		case kindNumber:
			if math.IsNaN(v.num) || math.IsInf(v.num, 0) {
				return nil, fmt.Errorf("%w: metadata %q: number %v is not finite", vector.ErrInvalidOptions, f.key, v.num)
			}
			if i, ok := v.box.(int64); ok {
				b = strconv.AppendInt(b, i, 10)
			} else {
				b = strconv.AppendFloat(b, v.num, 'g', -1, 64)
			}
		default:
			return nil, fmt.Errorf("%w: metadata %q has no value", vector.ErrInvalidOptions, f.key)
		}
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string. Plain printable ASCII is
// copied as is; anything else goes through encoding/json, which escapes
// control characters and replaces invalid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // never fails for a string
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// decodeMetadata parses the JSON form written by encodeMetadata and checks
// that every value is a supported scalar. Numbers are read exactly (an
// integer as an integer, not through a float64).
func decodeMetadata(b []byte) (metadata, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", vector.ErrCorrupt, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: metadata: data after the object", vector.ErrCorrupt)
	}
	for k, v := range raw {
		switch v.(type) {
		case string, bool, json.Number:
		default:
			return nil, fmt.Errorf("%w: metadata %q has type %T", vector.ErrCorrupt, k, v)
		}
	}
	md, err := normalizeMetadata(raw)
	if err != nil { // a number out of range
		return nil, fmt.Errorf("%w: %v", vector.ErrCorrupt, err)
	}
	return md, nil
}
