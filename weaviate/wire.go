// This file holds the protocol-buffer messages of Weaviate's gRPC API
// (package weaviate.v1, v1.39's grpc/proto/v1) that this package sends
// and reads, encoded and decoded by hand with protowire: only the fields
// cairn uses, under Weaviate's field numbers, so the bytes are the ones
// the published messages give. A field a reply carries that is not read
// here is skipped, as protobuf requires.

package weaviate

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cairndb/cairn/vector"
	"google.golang.org/protobuf/encoding/protowire"
)

// The gRPC methods called.
const (
	methodSearch = "/weaviate.v1.Weaviate/Search"
	methodBatch  = "/weaviate.v1.Weaviate/BatchObjects"
	methodHealth = "/grpc.health.v1.Health/Check"
)

// query is a search of a class: the objects closest to vec (nil: no
// ranking) that where matches, up to limit, with props and, if withVec,
// their vectors.
type query struct {
	class   string
	vec     []float32
	limit   int
	where   *where
	props   []string
	withVec bool
}

// levelNumber is a consistency level as weaviate.v1.ConsistencyLevel.
func levelNumber(c Consistency) uint64 {
	switch c {
	case One:
		return 1
	case All:
		return 3
	}
	return 2 // Quorum
}

// appendMessage appends field num holding the message that build
// appends, with its length before it.
func appendMessage(b []byte, num protowire.Number, build func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = build(b)
	n := len(b) - at
	// Move the body up to make room for its length.
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size)...)
	copy(b[at+size:], b[at:at+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBool(b []byte, num protowire.Number, v bool) []byte {
	return appendVarint(b, num, protowire.EncodeBool(v))
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

// appendFloats appends field num holding v as little-endian float32s, the
// form of Weaviate's vector_bytes.
func appendFloats(b []byte, num protowire.Number, v []float32) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(4*len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// encodeSearch encodes q as a SearchRequest read at level.
func encodeSearch(q *query, level Consistency) []byte {
	b := make([]byte, 0, 64+4*len(q.vec))
	b = appendString(b, 1, q.class) // collection
	if level != "" {
		b = appendVarint(b, 11, levelNumber(level)) // consistency_level
	}
	b = appendMessage(b, 20, func(b []byte) []byte { // properties: these, or none
		for _, p := range q.props {
			b = appendString(b, 1, p) // non_ref_properties
		}
		return b
	})
	b = appendMessage(b, 21, func(b []byte) []byte { // metadata
		b = appendBool(b, 1, true) // uuid
		if q.withVec {
			b = appendBool(b, 2, true) // vector
		}
		b = appendBool(b, 3, true) // creation_time_unix
		if q.vec != nil {
			b = appendBool(b, 5, true) // distance
		}
		return b
	})
	b = appendVarint(b, 30, uint64(q.limit)) // limit
	if q.where != nil {
		b = appendMessage(b, 40, q.where.appendProto) // filters
	}
	if q.vec != nil {
		b = appendMessage(b, 43, func(b []byte) []byte { // near_vector
			return appendMessage(b, 9, func(b []byte) []byte { // vectors
				b = appendFloats(b, 3, q.vec) // vector_bytes
				return appendVarint(b, 4, 1)  // type: VECTOR_TYPE_SINGLE_FP32
			})
		})
	}
	return appendBool(b, 102, true) // uses_127_api: properties in non_ref_props
}

// filterOps maps where-filter operators to weaviate.v1.Filters.Operator.
var filterOps = map[string]uint64{
	"Equal": 1, "NotEqual": 2, "GreaterThan": 3, "GreaterThanEqual": 4, "LessThan": 5,
	"LessThanEqual": 6, "And": 7, "Or": 8, "Like": 10, "ContainsAny": 12, "Not": 15,
}

// appendProto appends w's fields as a weaviate.v1.Filters message.
func (w *where) appendProto(b []byte) []byte {
	b = appendVarint(b, 1, filterOps[w.Operator])
	for _, o := range w.Operands {
		b = appendMessage(b, 3, o.appendProto)
	}
	switch {
	case w.Text != nil:
		b = appendString(b, 4, *w.Text)
	case w.Bool != nil:
		b = appendBool(b, 6, *w.Bool)
	case w.Number != nil:
		b = appendDouble(b, 7, *w.Number)
	case w.TextArray != nil:
		b = appendMessage(b, 9, func(b []byte) []byte {
			for _, s := range w.TextArray {
				b = appendString(b, 1, s)
			}
			return b
		})
	}
	if len(w.Path) > 0 {
		prop := w.Path[0]
		if prop == "id" { // GraphQL's name of the UUID; gRPC's is _id
			prop = "_id"
		}
		b = appendMessage(b, 20, func(b []byte) []byte { return appendString(b, 1, prop) }) // target.property
	}
	return b
}

// encodeBatch encodes objs as a BatchObjectsRequest written at level.
// Property values must be strings, float64s or bools (what rows hold).
func encodeBatch(objs []object, level Consistency) ([]byte, error) {
	size := 16
	for _, o := range objs {
		size += 64 + len(o.Class) + 4*len(o.Vector)
	}
	b := make([]byte, 0, size)
	for _, o := range objs {
		var err error
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendString(b, 1, o.ID) // uuid
			if len(o.Properties) > 0 {
				b = appendMessage(b, 3, func(b []byte) []byte { // properties
					return appendMessage(b, 1, func(b []byte) []byte { // non_ref_properties: a Struct
						for k, v := range o.Properties {
							b = appendMessage(b, 1, func(b []byte) []byte { // fields entry
								b = appendString(b, 1, k)
								return appendMessage(b, 2, func(b []byte) []byte {
									var verr error
									b, verr = appendStructValue(b, v)
									if verr != nil && err == nil {
										err = fmt.Errorf("property %s of %s: %w", k, o.ID, verr)
									}
									return b
								})
							})
						}
						return b
					})
				})
			}
			b = appendString(b, 4, o.Class) // collection
			return appendFloats(b, 6, o.Vector)
		})
		if err != nil {
			return nil, err
		}
	}
	if level == "" {
		return b, nil
	}
	return appendVarint(b, 2, levelNumber(level)), nil
}

// appendStructValue appends v's fields as a google.protobuf.Value.
func appendStructValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return appendVarint(b, 1, 0), nil // null_value
	case float64:
		return appendDouble(b, 2, x), nil // number_value
	case string:
		return appendString(b, 3, x), nil // string_value
	case bool:
		return appendBool(b, 4, x), nil // bool_value
	}
	return b, fmt.Errorf("%w: value of type %T", vector.ErrInvalidOptions, v)
}

// errWire is wrapped by the errors of decoding a malformed reply.
var errWire = fmt.Errorf("%w: malformed gRPC reply", vector.ErrCorrupt)

// fields calls f for each field of the message in b, with the field's
// bytes (a length-delimited field's content, or a scalar's encoding) and
// the scalar's value; it stops at f's first error. Malformed input gives
// an error wrapping errWire, never a panic.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", errWire, protowire.ParseError(n))
		}
		b = b[n:]
		var data []byte
		var v uint64
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %v", errWire, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, data, v); err != nil {
			return err
		}
	}
	return nil
}

// want checks that field num came with wire type typ.
func want(num protowire.Number, got, typ protowire.Type) error {
	if got != typ {
		return fmt.Errorf("%w: field %d has wire type %d, want %d", errWire, num, got, typ)
	}
	return nil
}

// floatsOf decodes little-endian float32s, all finite: what cairn
// writes to Weaviate is checked finite, so a NaN or an infinity is damage.
func floatsOf(data []byte) ([]float32, error) {
	if len(data)%4 != 0 {
		return nil, fmt.Errorf("%w: vector of %d bytes", errWire, len(data))
	}
	v := make([]float32, len(data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		if x := float64(v[i]); math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: vector component %d is %v", errWire, i, v[i])
		}
	}
	return v, nil
}

// decodeSearch decodes a SearchReply into its objects: each result's
// uuid, creation time, distance, vector and properties (all of them, as
// weaviate.v1.Value's text, number, bool or null; other kinds as nil).
func decodeSearch(b []byte) ([]fetched, error) {
	var out []fetched
	err := fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if num != 2 { // results
			return nil
		}
		if err := want(num, typ, protowire.BytesType); err != nil {
			return err
		}
		f := fetched{Props: map[string]any{}}
		err := fields(data, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
			switch num {
			case 1: // properties
				if err := want(num, typ, protowire.BytesType); err != nil {
					return err
				}
				return decodeProperties(data, f.Props)
			case 2: // metadata
				if err := want(num, typ, protowire.BytesType); err != nil {
					return err
				}
				return decodeMetadata(data, &f)
			}
			return nil
		})
		if err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// decodeMetadata decodes a MetadataResult into f.
func decodeMetadata(b []byte, f *fetched) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error {
		switch num {
		case 1: // id
			if err := want(num, typ, protowire.BytesType); err != nil {
				return err
			}
			f.UUID = string(data)
		case 3: // creation_time_unix
			if err := want(num, typ, protowire.VarintType); err != nil {
				return err
			}
			f.Created = int64(v)
		case 7: // distance
			if err := want(num, typ, protowire.Fixed32Type); err != nil {
				return err
			}
			f.Distance = math.Float32frombits(uint32(v))
		case 19: // vector_bytes
			if err := want(num, typ, protowire.BytesType); err != nil {
				return err
			}
			vec, err := floatsOf(data)
			if err != nil {
				return err
			}
			f.Vector, f.HasVector = vec, true
		}
		return nil
	})
}

// decodeProperties decodes a PropertiesResult's non_ref_props into props.
func decodeProperties(b []byte, props map[string]any) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if num != 11 { // non_ref_props: a weaviate.v1.Properties
			return nil
		}
		if err := want(num, typ, protowire.BytesType); err != nil {
			return err
		}
		return fields(data, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
			if num != 1 { // fields: map<string, Value>
				return nil
			}
			if err := want(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var key string
			var val any
			err := fields(data, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
				switch num {
				case 1:
					if err := want(num, typ, protowire.BytesType); err != nil {
						return err
					}
					key = string(data)
				case 2:
					if err := want(num, typ, protowire.BytesType); err != nil {
						return err
					}
					var err error
					val, err = decodeValue(data)
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
			props[key] = val
			return nil
		})
	})
}

// decodeValue decodes a weaviate.v1.Value holding a text, number, bool or
// null; other kinds (lists, objects, geo) are nil here.
func decodeValue(b []byte) (any, error) {
	var val any
	err := fields(b, func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error {
		var wt protowire.Type
		switch num {
		case 1: // number_value
			wt, val = protowire.Fixed64Type, math.Float64frombits(v)
		case 3: // bool_value
			wt, val = protowire.VarintType, v != 0
		case 6, 7, 10, 13: // date, uuid, blob, text
			wt, val = protowire.BytesType, string(data)
		case 8: // int_value
			wt, val = protowire.VarintType, float64(int64(v))
		case 12: // null_value
			wt, val = protowire.VarintType, nil
		default:
			val = nil
			return nil
		}
		return want(num, typ, wt)
	})
	return val, err
}

// decodeBatch decodes a BatchObjectsReply into the errors of the objects
// of a batch of n, by index; an index outside the batch is an error.
func decodeBatch(b []byte, n int) (map[int]string, error) {
	bad := map[int]string{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if num != 2 { // errors
			return nil
		}
		if err := want(num, typ, protowire.BytesType); err != nil {
			return err
		}
		var index int64
		var msg string
		err := fields(data, func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error {
			switch num {
			case 1:
				if err := want(num, typ, protowire.VarintType); err != nil {
					return err
				}
				index = int64(int32(v))
			case 2:
				if err := want(num, typ, protowire.BytesType); err != nil {
					return err
				}
				msg = string(data)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if index < 0 || index >= int64(n) {
			return fmt.Errorf("%w: error for object %d of a batch of %d", errWire, index, n)
		}
		if prev, ok := bad[int(index)]; ok {
			msg = prev + "; " + msg
		}
		bad[int(index)] = msg
		return nil
	})
	return bad, err
}

// decodeHealth decodes a HealthCheckResponse's status (1: serving).
func decodeHealth(b []byte) (uint64, error) {
	var status uint64
	err := fields(b, func(num protowire.Number, typ protowire.Type, _ []byte, v uint64) error {
		if num == 1 {
			status = v
			return want(num, typ, protowire.VarintType)
		}
		return nil
	})
	return status, err
}
