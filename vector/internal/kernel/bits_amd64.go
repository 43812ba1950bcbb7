//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// hasPopcnt512 is AVX-512's vector popcount of 64-bit lanes.
var hasPopcnt512 = hasAVX512 && cpu.X86.HasAVX512VPOPCNTDQ

// bitsGatherVPOPCNT runs BitsGather for count > 0 codes and words > 0:
// eight words of a code a step, the last step masked.
//
//go:noescape
func bitsGatherVPOPCNT(planes *uint64, codes **byte, count, words int, out *int32)

// BitsGather is the selected bit-plane kernel (see bits.go).
func BitsGather(planes []uint64, words int, codes []*byte, out []int32) {
	out = out[:len(codes)]
	if !hasPopcnt512 || len(codes) == 0 || words == 0 {
		BitsGatherGeneric(planes, words, codes, out)
		return
	}
	_ = planes[4*words+BitsPad-1] // what the assembly may read
	bitsGatherVPOPCNT(&planes[0], &codes[0], len(codes), words, &out[0])
}
