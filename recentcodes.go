package cairn

// This file holds the int8 codes of the newest items, which a recency
// walk scores before it reads an item's record and vector (recency.go).

import (
	"context"
	"math"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// recentCodes is int8 codes (package quant) of the newest records of a
// time list, in the list's order. Most items a recency walk meets are
// recent and important enough to need a distance, and far from the
// query: the walk estimates each one's distance from its code, with a
// strict error bound, and reads the record and vector of only those the
// bound cannot pass over. In time order, the codes a walk reads lie in
// sequence.
//
// A value is a snapshot: the codes it spans never change, and the
// timeOrder that fills them writes only past its span or into new
// buffers, so a query reads its snapshot without a lock.
type recentCodes struct {
	qz     *quant.Quantizer // nil: no codes
	stride int              // bytes between codes: the quantizer's GatherSpan, all of which a gather reads
	from   int              // the list index of the first code
	buf    []byte           // the codes of list[from : from+len(resid)]
	// resid holds, for each code, how far its vector lies from what the
	// code stands for (quant.Quantizer.Residual), which the bound needs;
	// +Inf where the record has no vector to code.
	resid []float32
}

// Codes start once a walk goes minCodeDepth items deep (tests lower
// it), and cover at most a quarter of the list: a sixteenth of the
// float32 vectors' bytes.
var minCodeDepth = 256

// codeSample is how many vectors training reads the ranges from.
const codeSample = 4096

// has reports whether the item at list index i has a code with a bound.
func (rc *recentCodes) has(i int) bool {
	j := i - rc.from
	return rc.qz != nil && j >= 0 && j < len(rc.resid) && !math.IsInf(float64(rc.resid[j]), 1)
}

// code returns the code of the item at list index i (has(i)).
func (rc *recentCodes) code(i int) *byte { return &rc.buf[(i-rc.from)*rc.stride] }

// fill brings the codes to the end of list, and back as far as the
// deepest walk went and a quarter more, within a quarter of the list. It
// starts them (training a quantizer on st) once a walk went minCodeDepth
// items deep; if training fails, the walks read vectors as before.
func (rc *recentCodes) fill(ctx context.Context, list timeList, walked int, st vector.Store) {
	n := len(list.recs)
	depth := min(walked+walked/4, n/4)
	if rc.qz == nil {
		if depth < minCodeDepth {
			return
		}
		qz, err := quant.Train(ctx, st, &quant.TrainOptions{Sample: codeSample})
		if err != nil {
			return
		}
		*rc = recentCodes{qz: qz, stride: qz.GatherSpan(), from: n}
	}
	if from := n - depth; from < rc.from {
		// New buffers, with room to append: a query may hold the old ones.
		size := len(rc.resid) + rc.from - from
		buf := make([]byte, size*rc.stride, (n-from+n/16)*rc.stride)
		resid := make([]float32, size, n-from+n/16)
		copy(buf[(rc.from-from)*rc.stride:], rc.buf)
		copy(resid[rc.from-from:], rc.resid)
		old := rc.from
		rc.from, rc.buf, rc.resid = from, buf, resid
		for i := from; i < old; i++ {
			rc.encode(list.recs[i], i, st)
		}
	}
	for i := rc.from + len(rc.resid); i < n; i++ {
		// Past the span of every snapshot, or into a new buffer.
		rc.buf = append(rc.buf, make([]byte, rc.stride)...)
		rc.resid = append(rc.resid, 0)
		rc.encode(list.recs[i], i, st)
	}
}

// encode codes the vector of rec, at list index i.
func (rc *recentCodes) encode(rec *record, i int, st vector.Store) {
	j := i - rc.from
	rc.resid[j] = float32(math.Inf(1))
	if !rec.published() {
		return // a walk passes it over
	}
	v, err := st.Get(rec.id)
	if err != nil {
		return // a walk reads it, and says what is wrong
	}
	code := rc.buf[j*rc.stride : j*rc.stride+rc.qz.CodeSize()]
	if _, err := rc.qz.Encode(code, v); err != nil {
		return
	}
	rc.resid[j] = rc.qz.Residual(v, code)
}

// codeBound is what a walk needs to bound an item's distance from its
// code: the query prepared for the codes' quantizer.
type codeBound struct {
	q      quant.BoundedQuery
	slack  float64 // the query's Slack, twice under L2
	rise   float64 // the query's Rise, twice under L2
	residW float64 // what a unit of a code's residual adds: ‖q‖, twice under L2
}

// prepare prepares q (a query of the collection) for rc's codes.
func (cb *codeBound) prepare(rc *recentCodes, q []float32) error {
	if err := rc.qz.PrepareBounded(&cb.q, q); err != nil {
		return err
	}
	m := 1.0
	if rc.qz.Metric() == vector.L2 {
		m = 2 // the inner product counts twice
	}
	cb.slack, cb.rise, cb.residW = m*float64(cb.q.Slack()), m*float64(cb.q.Rise()), m*float64(cb.q.Norm())
	return nil
}

// lowest returns a distance no greater than the exact one, for an
// estimate est from a code of residual resid.
func (cb *codeBound) lowest(est, resid float32) float32 {
	e := float64(est)
	// A relative margin covers the float32 rounding of the sums.
	return float32(e - cb.slack - cb.residW*float64(resid) - 1e-4*(1+math.Abs(e)))
}

// highest returns a distance no less than the exact one, for an
// estimate est from a code of residual resid.
func (cb *codeBound) highest(est, resid float32) float32 {
	e := float64(est)
	return float32(e + cb.rise + cb.residW*float64(resid) + 1e-4*(1+math.Abs(e)))
}
