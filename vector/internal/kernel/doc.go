// Package kernel holds cairn's distance kernels: a portable Go version of
// each, and native versions selected once at start-up by CPU feature. Only
// package vector may import it; everything else reaches the kernels through
// vector's exported functions.
//
// The layout follows the standard library's internal/bytealg: generic.go is
// the real portable code, used on every CPU and under the purego build tag;
// kernel_amd64.go and kernel_amd64.s add AVX-512 and AVX2+FMA versions on
// amd64, and kernel_amd64.go's init stores the fastest available ones in the
// dispatch variables below.
//
// All functions assume equal lengths (len(b) == len(a), and
// len(rows) == len(q)*len(out) for the batch forms); the callers in package
// vector check. The results are float32 sums in an order that differs
// between implementations, so they agree to rounding, not bit for bit.
//
// # Choice of kernels
//
// On amd64 the AVX-512 kernels are chosen when the CPU has AVX512F, else
// the AVX2+FMA ones. Measured on an Intel Sapphire Rapids Xeon (Go 1.26,
// vectors in cache, ns per call, lower is better):
//
//	                   d=96   d=768  d=1536
//	Dot     avx512      7      22      42
//	        avx2        7-12   31      63
//	        vek32.Dot   9      33      63
//	L2      avx512      7      25      48
//	        avx2        7      42      71
//	Batch   avx512    6.5 µs for 256 rows of 768 (25 ns a row, L2-cache bound)
//	        avx2      8.4 µs
//
// The 512-bit kernels win at every size that matters despite any clock
// reduction, so they are used for all four functions. The single forms are
// bound by the two vector loads per cycle the core can issue: four
// accumulators already reach that bound (eight measured no faster). The
// batch forms compute four rows per pass so each chunk of q is loaded once
// for four rows, which is 25-35% faster than calling the single form per
// row. Tails are handled with masked loads (K registers on AVX-512,
// VMASKMOVPS on AVX2), which never touch memory outside the slices.
package kernel
