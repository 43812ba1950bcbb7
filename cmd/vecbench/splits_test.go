package main

import (
	"errors"
	"slices"
	"testing"
)

// TestSplitCells: the row of a target over its splits gives the spread of
// the beam widths (exact search as "exact"), of the estimate's error and
// standard error, of the recall reached and of the speed, and counts the
// splits within the bars.
func TestSplitCells(t *testing.T) {
	var out []split
	for i := range 20 {
		out = append(out, split{ef: 20 + i, best: 30, estimate: 0.95, stdErr: 0.002 + float64(i)/10000, achieved: 0.9302 + float64(i)/1000, qpsRatio: 0.801 + float64(i)/50,
			wholeAchieved: 0.935 + float64(i)/1000, wholeRatio: 0.85 + float64(i)/100})
	}
	out[0].ef, out[1].ef = 0, 0 // two splits chose exact search
	got := splitCells(0.95, out, 33)
	// Quantiles by rank ⌊q·19⌉ of 20: the 5th percentile is the second.
	want := []string{"0.95", "exact / 30 / 38", "30 / 30 / 30", "+0.0108 / ±0.0188", "0.0030",
		"0.931 / 0.940", "10 of 20", "0.82× / 1.00×", "15 of 20",
		"33", "15, 15 of 20"}
	if !slices.Equal(got, want) {
		t.Errorf("splitCells =\n%q\nwant\n%q", got, want)
	}
}

// TestWholeEf: the whole query file's ef is the smallest beam width whose
// recall reaches the target, between the ladder's steps as well as on
// them; k if k does; exact search if no ef of the ladder up to n does; and
// an error of the measurement is returned.
func TestWholeEf(t *testing.T) {
	// Recall rising by 0.01 an ef from 0.80 at ef 10.
	rising := func(ef int) (float64, error) { return 0.80 + float64(ef-10)/100, nil }
	for _, c := range []struct {
		target float64
		n      int
		want   int
	}{
		{0.80, 10_000, 10}, // k itself
		{0.85, 10_000, 15}, // between the ladder's 14 and 16
		{0.98, 10_000, 28}, // on the ladder's 28
		{0.98, 20, 0},      // the ladder stops at 20: exact
	} {
		got, err := wholeEf(c.target, 10, c.n, rising)
		if err != nil || got != c.want {
			t.Errorf("wholeEf(%v, n %d) = %d, %v; want %d", c.target, c.n, got, err, c.want)
		}
	}
	// A slow rise, reached at ef 1,000, between ladder steps hundreds
	// apart: found by bisection, in a few dozen measurements at most.
	calls := 0
	slow := func(ef int) (float64, error) { calls++; return 0.5 + float64(ef)/10_000, nil }
	if got, err := wholeEf(0.6, 10, 100_000, slow); err != nil || got != 1000 || calls > 40 {
		t.Errorf("wholeEf on a slow rise = %d, %v after %d measurements; want 1000 in at most 40", got, err, calls)
	}
	bad := errors.New("search failed")
	if _, err := wholeEf(0.9, 10, 10_000, func(int) (float64, error) { return 0, bad }); !errors.Is(err, bad) {
		t.Errorf("a failed measurement: %v, want %v", err, bad)
	}
}
