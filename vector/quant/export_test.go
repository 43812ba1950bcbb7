package quant

// Globalize gives every dimension of q the union of all their ranges: a
// single global range, which TestClipRecall measures against per-dimension
// ranges.
func Globalize(q *Quantizer) {
	lo, hi := q.lo[0], q.lo[0]+255*q.step[0]
	for j := range q.dim {
		l, h := q.Range(j)
		lo, hi = min(lo, l), max(hi, h)
	}
	for j := range q.dim {
		q.setRange(j, lo, hi)
	}
}
