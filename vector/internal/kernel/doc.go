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
// vectors in cache, best of five short runs on a shared machine, ns per
// call):
//
//	                    d=96  d=768  d=1536
//	Dot   avx512          7     22      41
//	      avx2            7     31      64
//	      vek32.Dot       8     33      64
//	      gonum blas32   13     64     124
//	      plain Go loop  43    499    1018
//	L2    avx512          7     23      45
//	      avx2            8     38      74
//	      vek32.Distance  9     45      83
//
//	256 rows of 768     batch  row by row
//	DotBatch avx512    6.0 µs    8.8 µs   (23.6 ns a row, L2-cache bound)
//	         avx2      7.6 µs   11.6 µs
//	         vek32.Dot    —     11.6 µs
//
// The 512-bit kernels tie with the 256-bit ones at d=96 and are a third
// faster from d=768 up, despite any clock reduction, so they are used for
// all four functions. The single forms are bound by the two vector loads
// per cycle the core can issue: four accumulators already reach that bound
// (eight measured no faster). The batch forms compute four rows per pass,
// so each chunk of q is loaded once for four rows, and loop over the groups
// of four in assembly; that is about 30% faster than the single form row by
// row. The gather forms (Dot4, L2x4) run the same four-row loop over four
// rows anywhere in memory, for a graph search scoring a node's neighbours;
// with the rows out of cache (BenchmarkGather4, 768-d) they are 5% (avx512)
// to 25% (avx2) faster than four single calls. Tails are handled with
// masked loads (K registers on AVX-512, VMASKMOVPS on AVX2), which never
// touch memory outside the slices.
//
// # Int8 kernels
//
// int8.go holds the dot products of package vector/quant: uint8 codes by
// an int8 query whose elements lie in [-64, 64], exact in int32, so every
// implementation returns the same integer. The AVX2 version multiplies
// with VPMADDUBSW and widens with VPMADDWD (int8_amd64.s); the avx512
// family runs it too, except for the kernels with an AVX-512 VNNI
// (VPDPBUSD) version, on CPUs that have VNNI. On the AMD EPYC
// (Zen 4) of issue 12, with codes in cache, a batch of 256 codes of 768
// bytes takes 4.0 µs against DotBatch's 11.5 µs over 256 rows of 768
// float32s (BenchmarkInt8Batch, a loaded machine, so a ratio only). The
// batch form loops over groups of four consecutive codes in assembly and
// prefetches the group after next: the four interleaved reads within a few
// KiB defeat the hardware's stream prefetcher, and without it a scan of
// 100,000 codes read memory at half the rate flat's scan does.
package kernel
