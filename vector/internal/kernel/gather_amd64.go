//go:build amd64 && !purego

// This file holds the AVX2 pointer-gather kernels' Go side: the groups of
// four rows go to one assembly call, a last group of one to three rows
// through a padded copy of its pointers (tail4).
package kernel

// dotGatherNAVX2 and l2GatherNAVX2 compute out[j] = f(q, rows[j]) for
// j < 4*groups, reading n elements (n > 0) of q and of each row, four rows
// a pass, the loop over groups in assembly: one call scores a node's whole
// neighbour list.
//
//go:noescape
func dotGatherNAVX2(q *float32, rows **float32, groups, n int, out *float32)

//go:noescape
func l2GatherNAVX2(q *float32, rows **float32, groups, n int, out *float32)

// dotGatherAVX2 and l2GatherAVX2 call the assembly directly, never
// through a func value (the stack buffer of the last group would escape).
func dotGatherAVX2(q []float32, rows []*float32, out []float32) {
	out = out[:len(rows)]
	if len(q) == 0 {
		clear(out)
		return
	}
	g := len(rows) / 4
	if g > 0 {
		dotGatherNAVX2(&q[0], &rows[0], g, len(q), &out[0])
	}
	if rest := len(rows) - 4*g; rest > 0 {
		t := tail4(rows)
		var o [4]float32
		dotGatherNAVX2(&q[0], &t[0], 1, len(q), &o[0])
		copy(out[4*g:], o[:rest])
	}
}

func l2GatherAVX2(q []float32, rows []*float32, out []float32) {
	out = out[:len(rows)]
	if len(q) == 0 {
		clear(out)
		return
	}
	g := len(rows) / 4
	if g > 0 {
		l2GatherNAVX2(&q[0], &rows[0], g, len(q), &out[0])
	}
	if rest := len(rows) - 4*g; rest > 0 {
		t := tail4(rows)
		var o [4]float32
		l2GatherNAVX2(&q[0], &t[0], 1, len(q), &o[0])
		copy(out[4*g:], o[:rest])
	}
}

// The AVX-512 family loops over its four-row gather kernel in Go (no
// AVX-512 machine here to test an assembly loop on).

func dotGatherAVX512(q []float32, rows []*float32, out []float32) {
	gatherWith(q, rows, out, dot4GatherAVX512)
}

func l2GatherAVX512(q []float32, rows []*float32, out []float32) {
	gatherWith(q, rows, out, l2x4GatherAVX512)
}
