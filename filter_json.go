// This file holds the JSON form of a Filter: the document that command-line
// tools, MCP clients and other modules exchange instead of Go calls.

package cairn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/internal/metavalue"
	"github.com/cairndb/cairn/vector"
)

// maxFilterDepth bounds the nesting of a parsed filter, so that a hostile
// document cannot make compiling or evaluating it recurse without end.
const maxFilterDepth = 64

// ErrFilterType is returned (wrapped) by [FilterOf] for a value of a type
// it does not read as a filter.
var ErrFilterType = fmt.Errorf("cairn: a filter must be a map[string]any, a JSON string or []byte, or a *Filter: %w", vector.ErrInvalidOptions)

// FilterOf reads a filter in any of the forms a framework hands one over:
// a *Filter as it is; a map[string]any (a decoded JSON object, or one
// built in Go, whose float32s mean what they do in metadata), a string,
// []byte or json.RawMessage of the JSON form, read by [ParseFilter]. nil,
// an empty map, empty or blank JSON, null and {} are no filter (nil, nil).
// Another type gives an error wrapping [ErrFilterType].
func FilterOf(v any) (*Filter, error) {
	var doc []byte
	switch v := v.(type) {
	case nil:
		return nil, nil
	case *Filter:
		return v, nil
	case map[string]any:
		if len(v) == 0 {
			return nil, nil
		}
		w, _, err := forJSON(v, 0)
		if err != nil {
			return nil, fmt.Errorf("cairn: filter: %w", err)
		}
		b, err := json.Marshal(w)
		if err != nil {
			return nil, fmt.Errorf("cairn: filter: %w: %v", vector.ErrInvalidOptions, err)
		}
		doc = b
	case string:
		doc = []byte(v)
	case []byte:
		doc = v
	case json.RawMessage:
		doc = v
	default:
		return nil, fmt.Errorf("%w (got %T)", ErrFilterType, v)
	}
	doc = bytes.TrimSpace(doc)
	var obj map[string]json.RawMessage
	if len(doc) == 0 || string(doc) == "null" || (json.Unmarshal(doc, &obj) == nil && obj != nil && len(obj) == 0) {
		return nil, nil
	}
	return ParseFilter(doc)
}

// forJSON returns v ready for the JSON encoder to write the filter it
// means, and whether that changed anything, or an error wrapping
// [vector.ErrInvalidOptions]. Every float32 in v (in nested maps and
// slices) becomes the float64 that metadata stores for it (see
// metavalue.Of): JSON writes a float32 in its shortest float32 form, 0.1
// for float32(0.1), which reads back as another number than the stored
// 0.10000000149011612, so the filter would miss its own value; a whole
// float64 beyond 2^53 becomes its exact digits (metavalue.JSON). A key or
// string that is not valid UTF-8 is refused: JSON would write each bad
// byte as U+FFFD, another filter than the one asked for (Eq refuses it).
// v is copied only where a number changes. Below maxFilterDepth levels
// (depth counts them) v is left as it is: no filter goes deeper, and a
// map that holds itself must not recurse forever before the encoder
// refuses it.
func forJSON(v any, depth int) (any, bool, error) {
	if depth > maxFilterDepth {
		return v, false, nil
	}
	switch x := v.(type) {
	case string:
		return v, false, checkUTF8(x)
	case []string:
		for _, e := range x {
			if err := checkUTF8(e); err != nil {
				return v, false, err
			}
		}
	case map[string]string:
		for k, e := range x {
			if err := checkUTF8(k, e); err != nil {
				return v, false, err
			}
		}
	case float32:
		return float64(x), true, nil
	case float64:
		// JSON would write a whole number beyond 2^53 in its shortest
		// digits, which read back as another integer, or none.
		if j, ok := metavalue.JSON(x).(json.Number); ok {
			return j, true, nil
		}
	case []float32:
		out := make([]float64, len(x))
		for i, f := range x {
			out[i] = float64(f)
		}
		return out, true, nil
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if err := checkUTF8(k); err != nil {
				return v, false, err
			}
			w, changed, err := forJSON(e, depth+1)
			if err != nil {
				return v, false, err
			}
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = w
			}
		}
		if out != nil {
			return out, true, nil
		}
	case []any:
		var out []any
		for i, e := range x {
			w, changed, err := forJSON(e, depth+1)
			if err != nil {
				return v, false, err
			}
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = w
			}
		}
		if out != nil {
			return out, true, nil
		}
	}
	return v, false, nil
}

// checkUTF8 refuses a string of ss that is not valid UTF-8.
func checkUTF8(ss ...string) error {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w: %q is not valid UTF-8", vector.ErrInvalidOptions, s)
		}
	}
	return nil
}

// ParseFilter reads a filter from its JSON form, the query language of
// MongoDB and Chroma's where clauses:
//
//	{"kind": "fact"}                             Eq("kind", "fact")
//	{"year": {"$gte": 2020, "$lt": 2025}}        And(Gte("year", 2020), Lt("year", 2025))
//	{"tag": {"$in": ["a", "b"]}}                 In("tag", "a", "b")
//	{"tag": {"$nin": ["a"]}}                     Not(In("tag", "a"))
//	{"$or": [{"kind": "fact"}, {"pinned": true}]}
//	{"$and": [...]}, {"$not": {...}}
//
// The operators are $eq, $ne, $in, $nin, $lt, $lte, $gt and $gte; several
// entries in one object are all required (an And, in key order). Values are
// strings, numbers and booleans. A metadata key that starts with "$" cannot
// be named in this form. Integers are read exactly, to int64. Every error
// wraps [vector.ErrInvalidOptions].
//
// The item's times ([TimeRange]) are the reserved keys $created, $updated
// and $expires, with an RFC 3339 time for $gte (from) and $lt (to), either
// or both ({} for neither):
//
//	{"$created": {"$gte": "2026-01-01T00:00:00Z", "$lt": "2026-02-01T00:00:00Z"}}
//
// The result is the filter built by the constructors, so it is checked
// again, against the collection, when it is used.
func ParseFilter(data []byte) (*Filter, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: filter JSON is not valid UTF-8", vector.ErrInvalidOptions)
	}
	f, err := parseFilter(json.RawMessage(data), 0)
	if err != nil {
		return nil, fmt.Errorf("%w: filter JSON: %v", vector.ErrInvalidOptions, err)
	}
	return f, nil
}

// UnmarshalJSON sets f to the filter that data holds, in the form
// [ParseFilter] reads.
func (f *Filter) UnmarshalJSON(data []byte) error {
	g, err := ParseFilter(data)
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// MarshalJSON returns f in the form [ParseFilter] reads, each condition
// spelled with its operator: {"kind":{"$eq":"fact"}}. A filter that
// [Filter.String] would show with "?" (the zero Filter), or that names a
// metadata key starting with "$", which this form cannot, is an error.
func (f *Filter) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := f.writeJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var jsonOps = map[string]filterOp{
	"$eq": opEq, "$ne": opNe, "$in": opIn,
	"$lt": opLt, "$lte": opLte, "$gt": opGt, "$gte": opGte,
}

func (f *Filter) writeJSON(b *bytes.Buffer) error {
	if f == nil {
		return fmt.Errorf("%w: nil filter", vector.ErrInvalidOptions)
	}
	switch f.op {
	case opTime:
		return f.writeTimeJSON(b)
	case opAnd, opOr, opNot:
		name := map[filterOp]string{opAnd: "$and", opOr: "$or", opNot: "$not"}[f.op]
		b.WriteString(`{"` + name + `":`)
		if f.op == opNot {
			if len(f.subs) != 1 {
				return fmt.Errorf("%w: not takes one filter", vector.ErrInvalidOptions)
			}
			if err := f.subs[0].writeJSON(b); err != nil {
				return err
			}
		} else {
			b.WriteByte('[')
			for i, s := range f.subs {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := s.writeJSON(b); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
		return nil
	}
	var name string
	for n, op := range jsonOps {
		if op == f.op {
			name = n
		}
	}
	if name == "" {
		return fmt.Errorf("%w: zero Filter (build filters with Eq, In, And, ...)", vector.ErrInvalidOptions)
	}
	if strings.HasPrefix(f.key, "$") {
		return fmt.Errorf("%w: filter %s: a key starting with \"$\" has no JSON form", vector.ErrInvalidOptions, f)
	}
	if err := checkUTF8(f.key); err != nil {
		return fmt.Errorf("filter %s: %w", f, err)
	}
	key, err := json.Marshal(f.key)
	if err != nil {
		return err
	}
	vals := make([]any, len(f.vals))
	for i, x := range f.vals {
		vals[i] = jsonValue(x)
	}
	var val any = vals
	if f.op != opIn {
		if len(vals) != 1 {
			return fmt.Errorf("%w: filter %s: one value expected", vector.ErrInvalidOptions, f)
		}
		val = vals[0]
	}
	v, err := json.Marshal(val)
	if err != nil {
		return fmt.Errorf("%w: filter %s: %v", vector.ErrInvalidOptions, f, err)
	}
	fmt.Fprintf(b, `{%s:{"%s":%s}}`, key, name, v)
	return nil
}

// jsonValue returns the filter value v as encoding/json must be given it
// for ParseFilter to read back the value it compares as: a float32 as the
// float64 it stands for (0.1 would read back as float64 0.1), and a whole
// number beyond 2^53 in its exact digits (see [metavalue.JSON]). A value
// metadata cannot hold is returned as it is.
func jsonValue(v any) any {
	box, err := metavalue.Of(v)
	if err != nil {
		return v
	}
	return metavalue.JSON(box)
}

// writeTimeJSON writes a TimeRange.
func (f *Filter) writeTimeJSON(b *bytes.Buffer) error {
	if _, err := f.compileTime(); err != nil {
		return err
	}
	b.WriteString(`{"$` + f.key + `":{`)
	sep := ""
	for i, op := range []string{"$gte", "$lt"} {
		if t := f.vals[i].(time.Time); !t.IsZero() {
			fmt.Fprintf(b, `%s"%s":"%s"`, sep, op, t.UTC().Format(time.RFC3339Nano))
			sep = ","
		}
	}
	b.WriteString("}}")
	return nil
}

// timeKeys are the reserved keys of the item's times.
var timeKeys = map[string]TimeField{"$created": Created, "$updated": Updated, "$expires": Expires}

// parseTimeRange reads the value of a reserved time key: an object with
// $gte, $lt or both, each an RFC 3339 time.
func parseTimeRange(field TimeField, e entry) (*Filter, error) {
	ops, err := objectEntries(e.val)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", e.key, err)
	}
	var bounds [2]time.Time
	for _, o := range ops {
		i := slices.Index([]string{"$gte", "$lt"}, o.key)
		if i < 0 {
			return nil, fmt.Errorf("%s: unknown operator %q (a time range takes $gte and $lt)", e.key, o.key)
		}
		var s string
		if err := json.Unmarshal(o.val, &s); err != nil {
			return nil, fmt.Errorf("%s: %s wants an RFC 3339 time string, got %s", e.key, o.key, describe(o.val))
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", e.key, o.key, err)
		}
		if t.IsZero() {
			return nil, fmt.Errorf("%s: %s: the zero time is no bound (leave the side out)", e.key, o.key)
		}
		bounds[i] = t
	}
	f := TimeRange(field, bounds[0], bounds[1])
	if _, err := f.compileTime(); err != nil {
		return nil, err
	}
	return f, nil
}

// entry is one member of a JSON object, in document order.
type entry struct {
	key string
	val json.RawMessage
}

// objectEntries reads a JSON object's members in order, refusing duplicate
// keys (which encoding/json would silently resolve to the last).
func objectEntries(data json.RawMessage) ([]entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want an object, got %s", describe(data))
	}
	var out []entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if slices.ContainsFunc(out, func(e entry) bool { return e.key == key }) {
			return nil, fmt.Errorf("key %q given twice", key)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, entry{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the filter object")
	}
	return out, nil
}

func parseFilter(data json.RawMessage, depth int) (*Filter, error) {
	if depth > maxFilterDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxFilterDepth)
	}
	entries, err := objectEntries(data)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, errors.New("empty object (use no filter to match everything)")
	}
	var parts []*Filter
	for _, e := range entries {
		f, err := parseEntry(e, depth)
		if err != nil {
			return nil, err
		}
		parts = append(parts, f)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return And(parts...), nil
}

func parseEntry(e entry, depth int) (*Filter, error) {
	switch e.key {
	case "$and", "$or":
		var raws []json.RawMessage
		if err := json.Unmarshal(e.val, &raws); err != nil || raws == nil {
			return nil, fmt.Errorf("%s wants an array of filters, got %s", e.key, describe(e.val))
		}
		subs := make([]*Filter, len(raws))
		for i, r := range raws {
			s, err := parseFilter(r, depth+1)
			if err != nil {
				return nil, err
			}
			subs[i] = s
		}
		if e.key == "$and" {
			return And(subs...), nil
		}
		return Or(subs...), nil
	case "$not":
		s, err := parseFilter(e.val, depth+1)
		if err != nil {
			return nil, err
		}
		return Not(s), nil
	}
	if field, ok := timeKeys[e.key]; ok {
		return parseTimeRange(field, e)
	}
	if strings.HasPrefix(e.key, "$") {
		return nil, fmt.Errorf("unknown operator %q at the top of a filter", e.key)
	}
	if e.key == "" {
		return nil, errors.New("empty metadata key")
	}
	trimmed := bytes.TrimSpace(e.val)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		v, err := scalar(e.val)
		if err != nil {
			return nil, fmt.Errorf("key %q: %v", e.key, err)
		}
		return Eq(e.key, v), nil
	}
	ops, err := objectEntries(e.val)
	if err != nil {
		return nil, fmt.Errorf("key %q: %v", e.key, err)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("key %q: no operator", e.key)
	}
	var conds []*Filter
	for _, o := range ops {
		c, err := parseCondition(e.key, o)
		if err != nil {
			return nil, fmt.Errorf("key %q: %v", e.key, err)
		}
		conds = append(conds, c)
	}
	if len(conds) == 1 {
		return conds[0], nil
	}
	return And(conds...), nil
}

func parseCondition(key string, o entry) (*Filter, error) {
	if o.key == "$in" || o.key == "$nin" {
		var raws []json.RawMessage
		if err := json.Unmarshal(o.val, &raws); err != nil || raws == nil {
			return nil, fmt.Errorf("%s wants an array of values, got %s", o.key, describe(o.val))
		}
		vals := make([]any, len(raws))
		for i, r := range raws {
			v, err := scalar(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", o.key, err)
			}
			vals[i] = v
		}
		if o.key == "$nin" {
			return Not(In(key, vals...)), nil
		}
		return In(key, vals...), nil
	}
	op, ok := jsonOps[o.key]
	if !ok {
		return nil, fmt.Errorf("unknown operator %q", o.key)
	}
	v, err := scalar(o.val)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", o.key, err)
	}
	return &Filter{op: op, key: key, vals: []any{v}}, nil
}

// scalar decodes a string, number or boolean; a number becomes what
// metadata makes of it (a float64, or an int64 a float64 would round), so
// an integer stays exact to int64.
func scalar(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string, bool:
		return x, nil
	case json.Number:
		v, err := jsonNumberValue(x)
		if err != nil {
			return nil, fmt.Errorf("number %s out of range (not finite, or an integer beyond int64 that no float64 holds exactly)", x)
		}
		return v.any(), nil
	}
	return nil, fmt.Errorf("want a string, number or boolean, got %s", describe(raw))
}

// describe names the JSON type of raw for an error message.
func describe(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
