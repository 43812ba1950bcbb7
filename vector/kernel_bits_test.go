package vector_test

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector/internal/kernel"
)

// refBits is Σⱼ 2ʲ·popcount(planeⱼ AND code) over words words, the plane
// j at planes[j*words:].
func refBits(planes []uint64, words int, code []uint64) int32 {
	s := 0
	for j := range 4 {
		for w := range words {
			s += bits.OnesCount64(planes[j*words+w]&code[w]) << j
		}
	}
	return int32(s)
}

// TestBitsKernel checks the selected bit-plane kernel (AVX-512 where the
// CPU has its popcount) and the portable one against the reference at
// every length from 1 to 40 words (whole 64-byte steps and every partial
// one), with every bit set past the codes and the planes, so that a
// kernel that reads past either changes its sum, and with codes at
// unaligned addresses.
func TestBitsKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for words := 1; words <= 40; words++ {
		planes := make([]uint64, 4*words+kernel.BitsPad)
		for i := range planes {
			planes[i] = r.Uint64()
		}
		for i := 4 * words; i < len(planes); i++ {
			planes[i] = ^uint64(0)
		}
		const n = 9
		codes := make([]*byte, n)
		want := make([]int32, n)
		for i := range codes {
			off := r.IntN(8)
			buf := make([]byte, off+8*words+64)
			for j := range buf {
				buf[j] = 0xff
			}
			code := make([]uint64, words)
			for w := range code {
				code[w] = r.Uint64()
				if i == 0 {
					code[w] = ^uint64(0) // every bit
				}
				for b := range 8 {
					buf[off+8*w+b] = byte(code[w] >> (8 * b))
				}
			}
			codes[i] = &buf[off]
			want[i] = refBits(planes, words, code)
		}
		for name, f := range map[string]func([]uint64, int, []*byte, []int32){
			"selected": kernel.BitsGather, "generic": kernel.BitsGatherGeneric,
		} {
			got := make([]int32, n)
			f(planes, words, codes, got)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s, %d words, code %d: %d, want %d", name, words, i, got[i], want[i])
				}
			}
		}
	}
}
