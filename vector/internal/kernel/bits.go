package kernel

import (
	"math/bits"
	"unsafe"
)

// The bit-plane kernel of 1-bit codes (package quant): a query rounded to
// four bits is held as four planes, plane j the bit j of every rounded
// component, plane-major (plane j at planes[j*words:]); a code is words
// 64-bit words of signs. The sum of the query's rounded components over
// a code's set bits is
//
//	Σⱼ 2ʲ·popcount(planeⱼ AND code)
//
// BitsGather(planes, words, codes, out) writes that sum for each code:
// planes must hold 4*words + BitsPad words (the assembly reads whole
// 64-byte blocks of the planes, masking what is past words), and each
// code pointer must address words*8 readable bytes.

// BitsPad is how many words past the four planes a planes slice must
// hold (zero or not) for BitsGather.
const BitsPad = 8

// BitsGatherGeneric is BitsGather in portable Go.
func BitsGatherGeneric(planes []uint64, words int, codes []*byte, out []int32) {
	out = out[:len(codes)]
	p0, p1, p2, p3 := planes[:words], planes[words:2*words], planes[2*words:3*words], planes[3*words:4*words]
	for i, c := range codes {
		code := unsafe.Slice((*uint64)(unsafe.Pointer(c)), words)
		var t0, t1, t2, t3 int
		for w, b := range code {
			t0 += bits.OnesCount64(b & p0[w])
			t1 += bits.OnesCount64(b & p1[w])
			t2 += bits.OnesCount64(b & p2[w])
			t3 += bits.OnesCount64(b & p3[w])
		}
		out[i] = int32(t0 + 2*t1 + 4*t2 + 8*t3)
	}
}
