package cairn

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"

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

// encodeMetadata returns the JSON form of a normalised map, nil for none.
func encodeMetadata(md map[string]any) ([]byte, error) {
	if len(md) == 0 {
		return nil, nil
	}
	return json.Marshal(md)
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
