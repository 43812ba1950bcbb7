// This file translates cairn's filters into Weaviate's where-filters,
// through the filters' JSON form ({"k":{"$eq":v}}, $and, $or, $not, $in,
// $lt ...), with the meaning the local store gives them.

package weaviate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// Property data types of metadata, as Weaviate names them.
const (
	typeText   = "text"
	typeNumber = "number"
	typeBool   = "boolean"
)

// where is a Weaviate where-filter: an operator with operands, or a
// condition on one property.
type where struct {
	Operator  string   `json:"operator"`
	Operands  []*where `json:"operands,omitempty"`
	Path      []string `json:"path,omitempty"`
	Text      *string  `json:"valueText,omitempty"`
	Number    *float64 `json:"valueNumber,omitempty"`
	Bool      *bool    `json:"valueBoolean,omitempty"`
	TextArray []string `json:"valueTextArray,omitempty"`
}

// cond is a translated filter: a where-filter, or (w == nil) a constant,
// which is what a condition on a key no item has, or on a value of the
// wrong type, folds to.
type cond struct {
	w   *where
	val bool
}

var condTrue, condFalse = cond{val: true}, cond{val: false}

// typeOf returns the data type of the property of metadata key k, and
// false if the collection has none.
type typeOf func(k string) (string, bool)

// translate turns f into a cond. Every malformed filter (those the local
// store rejects) gives an error wrapping vector.ErrInvalidOptions, whatever
// the collection holds.
func translate(f *cairn.Filter, types typeOf) (cond, error) {
	if f == nil {
		return cond{}, fmt.Errorf("%w: nil filter", vector.ErrInvalidOptions)
	}
	data, err := f.MarshalJSON()
	if err != nil {
		return cond{}, fmt.Errorf("weaviate: filter: %w", err)
	}
	c, err := translateJSON(data, types)
	if err != nil {
		return cond{}, fmt.Errorf("weaviate: filter %s: %w", f, err)
	}
	return c, nil
}

// translateJSON translates a filter in its JSON form.
func translateJSON(data []byte, types typeOf) (cond, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return cond{}, fmt.Errorf("%w: %v", vector.ErrInvalidOptions, err)
	}
	// More is false before a stray "}" or "]", which Token refuses.
	if _, err := dec.Token(); err != io.EOF {
		return cond{}, fmt.Errorf("%w: data after the filter", vector.ErrInvalidOptions)
	}
	return node(doc, types, 0)
}

const maxDepth = 64

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", vector.ErrInvalidOptions, fmt.Sprintf(format, args...))
}

// node translates one filter object: every entry must hold, in key order.
func node(doc any, types typeOf, depth int) (cond, error) {
	if depth > maxDepth {
		return cond{}, invalid("nested deeper than %d", maxDepth)
	}
	obj, ok := doc.(map[string]any)
	if !ok || len(obj) == 0 {
		return cond{}, invalid("want a non-empty object, got %v", doc)
	}
	var parts []cond
	for _, k := range sortedKeys(obj) {
		c, err := entry(k, obj[k], types, depth)
		if err != nil {
			return cond{}, err
		}
		parts = append(parts, c)
	}
	return and(parts), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func entry(k string, v any, types typeOf, depth int) (cond, error) {
	switch k {
	case "$and", "$or":
		list, ok := v.([]any)
		if !ok {
			return cond{}, invalid("%s wants an array of filters", k)
		}
		parts := make([]cond, len(list))
		for i, s := range list {
			c, err := node(s, types, depth+1)
			if err != nil {
				return cond{}, err
			}
			parts[i] = c
		}
		if k == "$and" {
			return and(parts), nil
		}
		return or(parts), nil
	case "$not":
		c, err := node(v, types, depth+1)
		if err != nil {
			return cond{}, err
		}
		return not(c), nil
	}
	if k == "" {
		return cond{}, invalid("empty metadata key")
	}
	if k[0] == '$' { // $created, $updated, $expires: cairn.TimeRange
		return cond{}, invalid("%s: time-range filters are not supported by the cluster store", k)
	}
	ops, ok := v.(map[string]any)
	if !ok { // {"k": v}, the short form of $eq
		ops = map[string]any{"$eq": v}
	}
	if len(ops) == 0 {
		return cond{}, invalid("key %q: no operator", k)
	}
	var parts []cond
	for _, op := range sortedKeys(ops) {
		c, err := condition(k, op, ops[op], types)
		if err != nil {
			return cond{}, err
		}
		parts = append(parts, c)
	}
	return and(parts), nil
}

// rangeOps maps cairn's range operators to Weaviate's.
var rangeOps = map[string]string{"$lt": "LessThan", "$lte": "LessThanEqual", "$gt": "GreaterThan", "$gte": "GreaterThanEqual"}

func condition(k, op string, v any, types typeOf) (cond, error) {
	prop, err := propName(k)
	if err != nil {
		return cond{}, err
	}
	switch op {
	case "$eq", "$ne":
		s, err := scalar(v)
		if err != nil {
			return cond{}, fmt.Errorf("key %q: %w", k, err)
		}
		typ, _ := types(k)
		c := equal(prop, s, typ)
		if op == "$ne" {
			c = not(c)
		}
		return c, nil
	case "$in", "$nin":
		list, ok := v.([]any)
		if !ok && v != nil { // In with no values marshals as null
			return cond{}, invalid("key %q: %s wants an array of values", k, op)
		}
		parts := make([]cond, len(list))
		for i, x := range list {
			s, err := scalar(x)
			if err != nil {
				return cond{}, fmt.Errorf("key %q: %w", k, err)
			}
			typ, _ := types(k)
			parts[i] = equal(prop, s, typ)
		}
		c := or(parts)
		if op == "$nin" {
			c = not(c)
		}
		return c, nil
	}
	wop, ok := rangeOps[op]
	if !ok {
		return cond{}, invalid("key %q: unknown operator %q", k, op)
	}
	s, err := scalar(v)
	if err != nil {
		return cond{}, fmt.Errorf("key %q: %w", k, err)
	}
	n, ok := s.(float64)
	if !ok {
		return cond{}, invalid("key %q: range bound must be a number, got %v", k, v)
	}
	if t, _ := types(k); t != typeNumber {
		return condFalse, nil // no item has a number under k
	}
	return cond{w: &where{Operator: wop, Path: []string{prop}, Number: &n}}, nil
}

// equal is the condition "the value under prop equals s" for a property
// of type typ ("" if the collection has no such property). A value of
// another type equals nothing stored there, as in the local store.
func equal(prop string, s any, typ string) cond {
	w := &where{Operator: "Equal", Path: []string{prop}}
	switch x := s.(type) {
	case string:
		if typ != typeText {
			return condFalse
		}
		w.Text = &x
	case float64:
		if typ != typeNumber {
			return condFalse
		}
		w.Number = &x
	case bool:
		if typ != typeBool {
			return condFalse
		}
		w.Bool = &x
	}
	return cond{w: w}
}

// scalar returns a JSON value as a string, float64 or bool.
func scalar(v any) (any, error) {
	switch x := v.(type) {
	case string, bool:
		return x, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, invalid("number %s out of range", x)
		}
		if !exactNumber(string(x), f) {
			return nil, invalid("integer %s: Weaviate's numbers are float64s, which do not hold it exactly", x)
		}
		return f, nil
	}
	return nil, invalid("want a string, number or boolean, got %v", v)
}

// exactNumber reports whether f, parsed from the JSON number lit, is that
// number: an integer literal beyond 2^53 may have been rounded (a float
// literal is taken as near enough, as JSON means it).
func exactNumber(lit string, f float64) bool {
	if strings.ContainsAny(lit, ".eE") {
		return true
	}
	n, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		return false
	}
	g, _ := big.NewFloat(f).Int(nil)
	return n.Cmp(g) == 0
}

func and(parts []cond) cond {
	var ws []*where
	for _, p := range parts {
		if p.w == nil {
			if !p.val {
				return condFalse
			}
			continue
		}
		ws = append(ws, p.w)
	}
	switch len(ws) {
	case 0:
		return condTrue
	case 1:
		return cond{w: ws[0]}
	}
	return cond{w: &where{Operator: "And", Operands: ws}}
}

func or(parts []cond) cond {
	var ws []*where
	for _, p := range parts {
		if p.w == nil {
			if p.val {
				return condTrue
			}
			continue
		}
		ws = append(ws, p.w)
	}
	switch len(ws) {
	case 0:
		return condFalse
	case 1:
		return cond{w: ws[0]}
	}
	return cond{w: &where{Operator: "Or", Operands: ws}}
}

func not(c cond) cond {
	if c.w == nil {
		return cond{val: !c.val}
	}
	if c.w.Operator == "Not" {
		return cond{w: c.w.Operands[0]}
	}
	return cond{w: &where{Operator: "Not", Operands: []*where{c.w}}}
}

// graphQL writes w in GraphQL's input syntax, as the where argument of a
// Get or Aggregate takes it.
func (w *where) graphQL(b *strings.Builder) {
	b.WriteString("{operator: ")
	b.WriteString(w.Operator)
	if len(w.Operands) > 0 {
		b.WriteString(", operands: [")
		for i, o := range w.Operands {
			if i > 0 {
				b.WriteString(", ")
			}
			o.graphQL(b)
		}
		b.WriteByte(']')
	}
	if len(w.Path) > 0 {
		b.WriteString(", path: [")
		for i, p := range w.Path {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(p))
		}
		b.WriteByte(']')
	}
	switch {
	case w.Text != nil:
		b.WriteString(", valueText: ")
		b.WriteString(quote(*w.Text))
	case w.Number != nil:
		b.WriteString(", valueNumber: ")
		b.WriteString(strconv.FormatFloat(*w.Number, 'g', -1, 64))
	case w.Bool != nil:
		b.WriteString(", valueBoolean: ")
		b.WriteString(strconv.FormatBool(*w.Bool))
	case w.TextArray != nil:
		b.WriteString(", valueText: [")
		for i, s := range w.TextArray {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(s))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
}

// quote returns s as a GraphQL string literal (JSON's escapes are
// GraphQL's).
func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
