//go:build !amd64 || purego

package kernel

// BitsGather is the selected bit-plane kernel (see bits.go).
func BitsGather(planes []uint64, words int, codes []*byte, out []int32) {
	BitsGatherGeneric(planes, words, codes, out)
}
