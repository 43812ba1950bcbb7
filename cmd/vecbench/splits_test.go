package main

import (
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
		out = append(out, split{ef: 20 + i, best: 30, estimate: 0.95, stdErr: 0.002 + float64(i)/10000, achieved: 0.9302 + float64(i)/1000, qpsRatio: 0.801 + float64(i)/50})
	}
	out[0].ef, out[1].ef = 0, 0 // two splits chose exact search
	got := splitCells(0.95, out)
	// Quantiles by rank ⌊q·19⌉ of 20: the 5th percentile is the second.
	want := []string{"0.95", "exact / 30 / 38", "30 / 30 / 30", "+0.0108 / ±0.0188", "0.0030",
		"0.931 / 0.940", "10 of 20", "0.82× / 1.00×", "15 of 20"}
	if !slices.Equal(got, want) {
		t.Errorf("splitCells =\n%q\nwant\n%q", got, want)
	}
}
