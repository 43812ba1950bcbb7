package metavalue

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestMap: strings and bools as given, numbers as float64 unless a float64
// would round them, nil for none, and an error for what JSON cannot carry.
func TestMap(t *testing.T) {
	const big = int64(1)<<53 + 1
	got, err := Map(map[string]any{"s": "x", "b": true, "i": int8(-3), "u": uint64(7), "f": float32(0.5), "n": json.Number("12"), "big": big})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": "x", "b": true, "i": -3.0, "u": 7.0, "f": 0.5, "n": 12.0, "big": big}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := Map(nil); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for name, md := range map[string]map[string]any{
		"NaN":         {"x": math.NaN()},
		"Inf":         {"x": math.Inf(-1)},
		"slice":       {"x": []int{1}},
		"bad string":  {"x": "\xff"},
		"bad key":     {"\xfe": 1},
		"json.Number": {"x": json.Number("1e999")},
		"uint64 max":  {"x": uint64(math.MaxUint64)},
		"JSON 2^63+1": {"x": json.Number("9223372036854775809")},
	} {
		if _, err := Map(md); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}
}

// TestOfNumbers: an integer is a float64 exactly when a float64 holds it,
// small whole numbers share boxes, and a float64 keeps its own.
func TestOfNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want any
	}{
		{int64(1) << 53, float64(1 << 53)},
		{int64(1)<<53 + 1, int64(1)<<53 + 1},
		{int64(math.MinInt64), float64(math.MinInt64)},
		{uint64(1) << 63, math.Exp2(63)},
		{json.Number("9223372036854775808"), math.Exp2(63)},
		{json.Number("-7"), -7.0},
		{json.Number("2.5"), 2.5},
	} {
		if got, err := Of(tc.in); err != nil || got != tc.want {
			t.Errorf("Of(%v %T) = %v %T, %v; want %v %T", tc.in, tc.in, got, got, err, tc.want, tc.want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { Of(2024) }); a != 0 {
		t.Errorf("Of(2024) allocates %v times, want 0 (a shared box)", a)
	}
}
