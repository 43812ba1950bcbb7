package cairn

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/cairndb/cairn/vector"
)

// normalizeValue returns the stored form of a metadata value: strings and
// booleans as they are, every Go number type as a float64. It returns an
// error wrapping [vector.ErrInvalidOptions] for any other type and for
// non-finite numbers, which JSON cannot carry.
func normalizeValue(v any) (any, error) {
	var f float64
	switch x := v.(type) {
	case string, bool:
		return x, nil
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case json.Number:
		g, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%w: number %q: %v", vector.ErrInvalidOptions, x, err)
		}
		f = g
	default:
		return nil, fmt.Errorf("%w: unsupported metadata type %T (want string, number or bool)", vector.ErrInvalidOptions, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: metadata number %v is not finite", vector.ErrInvalidOptions, f)
	}
	return f, nil
}

// normalizeMetadata returns a copy of md with every value in its stored
// form (see normalizeValue), or nil for an empty map.
func normalizeMetadata(md map[string]any) (map[string]any, error) {
	if len(md) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(md))
	for k, v := range md {
		nv, err := normalizeValue(v)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		out[k] = nv
	}
	return out, nil
}

// cloneMetadata returns a copy of a normalised map, so that callers cannot
// change what the collection holds. The values are immutable scalars.
func cloneMetadata(md map[string]any) map[string]any {
	if md == nil {
		return nil
	}
	return maps.Clone(md)
}

// encodeMetadata returns the JSON form of a normalised map, nil for none:
// an object with its keys sorted. It is written by hand because it runs
// for every item of every write to a file, and a flat object of scalars
// needs none of encoding/json's reflection (it is several times faster).
func encodeMetadata(md map[string]any) ([]byte, error) {
	if len(md) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 16*len(md)+2)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch v := md[k].(type) {
		case string:
			b = appendJSONString(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: metadata %q: number %v is not finite", vector.ErrInvalidOptions, k, v)
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		default:
			return nil, fmt.Errorf("%w: metadata %q has type %T", vector.ErrInvalidOptions, k, v)
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
// that every value is a supported scalar.
func decodeMetadata(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var md map[string]any
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", vector.ErrCorrupt, err)
	}
	for k, v := range md {
		switch v.(type) {
		case string, bool, float64:
		default:
			return nil, fmt.Errorf("%w: metadata %q has type %T", vector.ErrCorrupt, k, v)
		}
	}
	if len(md) == 0 {
		return nil, nil
	}
	return md, nil
}
