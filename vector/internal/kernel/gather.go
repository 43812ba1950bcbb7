// This file holds the pointer-gather kernels' portable form and the loop
// that every family's pointer-gather form shares for a last group of fewer
// than four rows.
package kernel

import "unsafe"

// DotGatherGeneric writes q·row i into out[i] for each row i of rows, a
// pointer to at least len(q) float32s; out holds at least len(rows).
func DotGatherGeneric(q []float32, rows []*float32, out []float32) {
	gatherWith(q, rows, out, Dot4Generic)
}

// L2GatherGeneric writes the squared distance of q to each row of rows
// into out, as DotGatherGeneric.
func L2GatherGeneric(q []float32, rows []*float32, out []float32) {
	gatherWith(q, rows, out, L2x4Generic)
}

// gatherWith applies a four-row kernel to rows, four at a time; a last
// group of one to three rows repeats its last row (the lanes are
// independent, so the repeated lane changes nothing) and keeps only the
// results of its own rows.
func gatherWith(q []float32, rows []*float32, out []float32, four func(q, a, b, c, d []float32) [4]float32) {
	out = out[:len(rows)]
	n := len(q)
	if n == 0 {
		clear(out)
		return
	}
	at := func(p *float32) []float32 { return unsafe.Slice(p, n) }
	i := 0
	for ; i+4 <= len(rows); i += 4 {
		r := four(q, at(rows[i]), at(rows[i+1]), at(rows[i+2]), at(rows[i+3]))
		copy(out[i:i+4], r[:])
	}
	if rest := len(rows) - i; rest > 0 {
		last := rows[len(rows)-1]
		b, c := rows[min(i+1, len(rows)-1)], rows[min(i+2, len(rows)-1)]
		r := four(q, at(rows[i]), at(b), at(c), at(last))
		copy(out[i:], r[:rest])
	}
}

// tail4 returns the pointers of the last len(rows)%4 rows (at least one),
// the last repeated to fill four lanes.
func tail4(rows []*float32) [4]*float32 {
	i := len(rows) &^ 3
	var t [4]*float32
	for j := range t {
		t[j] = rows[min(i+j, len(rows)-1)]
	}
	return t
}
