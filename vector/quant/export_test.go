package quant

// Globalize gives every dimension of q the union of all their ranges: a
// single global range, which TestClipRecall measures against per-dimension
// ranges.
func Globalize(q *Quantizer) { *q = *q.global() }

// ChooseRanges sets whether Train may pick one global range over
// per-dimension ones, and returns the previous setting.
func ChooseRanges(on bool) bool {
	was := chooseRanges
	chooseRanges = on
	return was
}
