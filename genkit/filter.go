package cairngenkit

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// filterOf turns a RetrieverOptions.Filter into a cairn filter, reading
// maps and JSON with cairn.ParseFilter, the parser of every door.
func filterOf(f any) (*cairn.Filter, error) {
	var doc []byte
	switch f := f.(type) {
	case nil:
		return nil, nil
	case *cairn.Filter:
		return f, nil
	case map[string]any:
		if len(f) == 0 {
			return nil, nil
		}
		b, err := json.Marshal(f)
		if err != nil {
			return nil, fmt.Errorf("cairngenkit: filter: %w: %v", vector.ErrInvalidOptions, err)
		}
		doc = b
	case string:
		doc = []byte(f)
	case []byte:
		doc = f
	case json.RawMessage:
		doc = f
	default:
		return nil, fmt.Errorf("%w (got %T)", ErrInvalidFilter, f)
	}
	if noFilter(doc) {
		return nil, nil
	}
	cf, err := cairn.ParseFilter(doc)
	if err != nil {
		return nil, fmt.Errorf("cairngenkit: filter: %w", err)
	}
	return cf, nil
}

// noFilter reports whether doc is empty, null or an empty object, each of
// which means no filter.
func noFilter(doc []byte) bool {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || string(doc) == "null" {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(doc, &m) == nil && len(m) == 0
}
