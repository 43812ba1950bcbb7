package cairn

// This file holds the Filter: its constructors, its readable form, and
// its compilation into a matcher over records.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/vector"
)

// Filter is a condition on an item's metadata and times, built with [Eq],
// [Ne], [In], [Lt], [Lte], [Gt], [Gte], [TimeRange], [And], [Or] and [Not].
// A nil *Filter in [QueryOptions] means no condition.
//
// Values compare after the normalisation that metadata goes through
// (see [Item]): numbers compare by their exact value whatever
// their Go type, so Eq("n", 3) matches an item stored with int 3 or
// float64 3.0, Eq("n", int64(1<<53+1)) does not match 1<<53, and a string
// never equals a number. A condition
// on a key that an item lacks is false, except through [Ne] and [Not].
//
// Constructors never fail; a malformed filter (an empty key, a value of an
// unsupported type, a range bound that is not a number, a nil operand) is
// reported by the call that uses it, with an error wrapping
// [vector.ErrInvalidOptions]. A Filter is immutable and safe to share
// between goroutines.
type Filter struct {
	op   filterOp
	key  string
	vals []any
	subs []*Filter
}

type filterOp uint8

const (
	opEq filterOp = iota + 1
	opNe
	opIn
	opLt
	opLte
	opGt
	opGte
	opAnd
	opOr
	opNot
	opTime // key is a TimeField's name, vals its from and to
)

var opNames = [...]string{opEq: "=", opNe: "!=", opIn: "in", opLt: "<", opLte: "<=", opGt: ">", opGte: ">=", opAnd: "and", opOr: "or", opNot: "not", opTime: "in"}

// TimeField names one of the times every item keeps, for [TimeRange].
//
// It is a plain value.
type TimeField uint8

const (
	// Created is [Item.CreatedAt].
	Created TimeField = iota + 1
	// Updated is [Item.UpdatedAt].
	Updated
	// Expires is [Item.ExpiresAt]; an item without one is in no range of
	// it.
	Expires
)

var timeFieldNames = [...]string{Created: "created", Updated: "updated", Expires: "expires"}

// String returns "created", "updated" or "expires".
func (f TimeField) String() string {
	if int(f) < len(timeFieldNames) && timeFieldNames[f] != "" {
		return timeFieldNames[f]
	}
	return fmt.Sprintf("TimeField(%d)", uint8(f))
}

// TimeRange matches items whose time field is in the half-open range
// [from, to): at or after from and before to. A zero from or to leaves
// that side open; an item without the time (one written before the store
// kept times, or without an ExpiresAt) is in no range. A from after to, or
// an unknown field, is reported by
// the call that uses the filter, with an error wrapping
// [vector.ErrInvalidOptions]; from equal to to matches nothing.
func TimeRange(field TimeField, from, to time.Time) *Filter {
	return &Filter{op: opTime, key: field.String(), vals: []any{from, to}}
}

// Eq matches items whose metadata value under key equals value.
func Eq(key string, value any) *Filter { return &Filter{op: opEq, key: key, vals: []any{value}} }

// Ne matches items whose metadata value under key differs from value,
// including items that have no value under key: it is Not(Eq(key, value)).
func Ne(key string, value any) *Filter { return &Filter{op: opNe, key: key, vals: []any{value}} }

// In matches items whose metadata value under key equals one of values. With
// no values it matches nothing.
func In(key string, values ...any) *Filter {
	return &Filter{op: opIn, key: key, vals: append([]any(nil), values...)}
}

// Lt matches items whose numeric metadata value under key is less than v.
func Lt(key string, v any) *Filter { return &Filter{op: opLt, key: key, vals: []any{v}} }

// Lte matches items whose numeric metadata value under key is at most v.
func Lte(key string, v any) *Filter { return &Filter{op: opLte, key: key, vals: []any{v}} }

// Gt matches items whose numeric metadata value under key is greater than v.
func Gt(key string, v any) *Filter { return &Filter{op: opGt, key: key, vals: []any{v}} }

// Gte matches items whose numeric metadata value under key is at least v.
func Gte(key string, v any) *Filter { return &Filter{op: opGte, key: key, vals: []any{v}} }

// And matches items that every filter matches; with none it matches all.
func And(filters ...*Filter) *Filter {
	return &Filter{op: opAnd, subs: append([]*Filter(nil), filters...)}
}

// Or matches items that at least one filter matches; with none it matches
// nothing.
func Or(filters ...*Filter) *Filter {
	return &Filter{op: opOr, subs: append([]*Filter(nil), filters...)}
}

// Not matches items that f does not match.
func Not(f *Filter) *Filter { return &Filter{op: opNot, subs: []*Filter{f}} }

// String returns the filter in a readable form, such as
// (topic = "go" and year >= 2020).
func (f *Filter) String() string {
	if f == nil {
		return "<nil>"
	}
	var b strings.Builder
	f.write(&b)
	return b.String()
}

func (f *Filter) write(b *strings.Builder) {
	if f == nil {
		b.WriteString("<nil>")
		return
	}
	name := "?"
	if int(f.op) < len(opNames) && opNames[f.op] != "" {
		name = opNames[f.op]
	}
	switch f.op {
	case opAnd, opOr:
		if len(f.subs) == 0 {
			b.WriteString(name + "()")
			return
		}
		b.WriteByte('(')
		for i, s := range f.subs {
			if i > 0 {
				b.WriteString(" " + name + " ")
			}
			s.write(b)
		}
		b.WriteByte(')')
	case opNot:
		b.WriteString("not ")
		for _, s := range f.subs {
			s.write(b)
		}
	case opTime:
		b.WriteString(f.key + " in [")
		for i, v := range f.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			if t, ok := v.(time.Time); ok && !t.IsZero() {
				b.WriteString(t.UTC().Format(time.RFC3339Nano))
			} else {
				b.WriteString("…")
			}
		}
		b.WriteByte(')')
	case opIn:
		b.WriteString(f.key + " in [")
		for i, v := range f.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, v)
		}
		b.WriteByte(']')
	default:
		b.WriteString(f.key + " " + name + " ")
		for _, v := range f.vals {
			writeValue(b, v)
		}
	}
}

func writeValue(b *strings.Builder, v any) {
	if s, ok := v.(string); ok {
		b.WriteString(strconv.Quote(s))
		return
	}
	fmt.Fprint(b, v)
}

// matcher is a compiled filter: it reports whether a version (its
// normalised metadata, its times) satisfies the condition.
type matcher func(r *record) bool

// compile validates f and turns it into a matcher. The error wraps
// [vector.ErrInvalidOptions] and names the offending condition.
func (f *Filter) compile() (matcher, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: nil filter", vector.ErrInvalidOptions)
	}
	switch f.op {
	case opEq, opNe:
		if err := f.checkKey(); err != nil {
			return nil, err
		}
		want, err := f.value(0)
		if err != nil {
			return nil, err
		}
		key := f.key
		if f.op == opEq {
			return func(r *record) bool { v, ok := r.md.get(key); return ok && v == want }, nil
		}
		return func(r *record) bool { v, ok := r.md.get(key); return !ok || v != want }, nil
	case opIn:
		if err := f.checkKey(); err != nil {
			return nil, err
		}
		set := make(map[value]struct{}, len(f.vals))
		for i := range f.vals {
			v, err := f.value(i)
			if err != nil {
				return nil, err
			}
			set[v] = struct{}{}
		}
		key := f.key
		return func(r *record) bool {
			v, ok := r.md.get(key)
			if !ok {
				return false
			}
			_, in := set[v]
			return in
		}, nil
	case opLt, opLte, opGt, opGte:
		if err := f.checkKey(); err != nil {
			return nil, err
		}
		v, err := f.value(0)
		if err != nil {
			return nil, err
		}
		if v.kind != kindNumber {
			return nil, fmt.Errorf("%w: filter %s: range bound must be a number, got %T", vector.ErrInvalidOptions, f, f.vals[0])
		}
		key, op, bound := f.key, f.op, v
		return func(r *record) bool {
			v, ok := r.md.get(key)
			if !ok || v.kind != kindNumber {
				return false
			}
			c := compareNumbers(v, bound)
			switch op {
			case opLt:
				return c < 0
			case opLte:
				return c <= 0
			case opGt:
				return c > 0
			default:
				return c >= 0
			}
		}, nil
	case opAnd, opOr:
		subs := make([]matcher, len(f.subs))
		for i, s := range f.subs {
			m, err := s.compile()
			if err != nil {
				return nil, err
			}
			subs[i] = m
		}
		if f.op == opAnd {
			return func(r *record) bool {
				for _, m := range subs {
					if !m(r) {
						return false
					}
				}
				return true
			}, nil
		}
		return func(r *record) bool {
			for _, m := range subs {
				if m(r) {
					return true
				}
			}
			return false
		}, nil
	case opNot:
		if len(f.subs) != 1 {
			return nil, fmt.Errorf("%w: not takes one filter", vector.ErrInvalidOptions)
		}
		m, err := f.subs[0].compile()
		if err != nil {
			return nil, err
		}
		return func(r *record) bool { return !m(r) }, nil
	case opTime:
		return f.compileTime()
	}
	return nil, fmt.Errorf("%w: zero Filter (build filters with Eq, In, And, ...)", vector.ErrInvalidOptions)
}

// compileTime compiles a TimeRange.
func (f *Filter) compileTime() (matcher, error) {
	var field TimeField
	for i, n := range timeFieldNames {
		if n != "" && n == f.key {
			field = TimeField(i)
		}
	}
	if field == 0 {
		return nil, fmt.Errorf("%w: filter %s: unknown time field %q", vector.ErrInvalidOptions, f, f.key)
	}
	if len(f.vals) != 2 {
		return nil, fmt.Errorf("%w: filter %s: a time range takes from and to", vector.ErrInvalidOptions, f)
	}
	bounds := [2]int64{math.MinInt64, math.MaxInt64} // open sides
	for i, v := range f.vals {
		t, ok := v.(time.Time)
		if !ok {
			return nil, fmt.Errorf("%w: filter %s: bound %T is not a time.Time", vector.ErrInvalidOptions, f, v)
		}
		if err := checkTime("bound", t); err != nil {
			return nil, fmt.Errorf("filter %s: %w", f, err)
		}
		if !t.IsZero() {
			bounds[i] = t.UnixNano()
		}
	}
	from, to := bounds[0], bounds[1]
	if from > to {
		return nil, fmt.Errorf("%w: filter %s: from is after to", vector.ErrInvalidOptions, f)
	}
	in := func(t int64) bool { return t != noTime && t >= from && t < to }
	switch field {
	case Created:
		return func(r *record) bool { return in(r.created) }, nil
	case Updated:
		return func(r *record) bool { return in(r.updated) }, nil
	}
	return func(r *record) bool { return in(r.expires) }, nil
}

func (f *Filter) checkKey() error {
	if f.key == "" {
		return fmt.Errorf("%w: filter %s: empty key", vector.ErrInvalidOptions, f)
	}
	if len(f.vals) == 0 && f.op != opIn {
		return fmt.Errorf("%w: filter %s: no value", vector.ErrInvalidOptions, f)
	}
	return nil
}

func (f *Filter) value(i int) (value, error) {
	v, err := toValue(f.vals[i])
	if err != nil {
		return value{}, fmt.Errorf("filter %s: %w", f, err)
	}
	return v, nil
}
