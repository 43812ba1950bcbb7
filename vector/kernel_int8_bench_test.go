package vector_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector/internal/kernel"
)

// The int8 kernel benchmarks compare each int8 family this CPU runs with
// the float32 dot product of the same family, at the benchmark dimensions,
// codes in cache; SetBytes counts the code bytes (or the float32 row), so
// the MB/s column compares bytes consumed:
//
//	go test -run '^$' -bench 'U8I8|Int8' -benchtime=20000x ./vector/   (about 10 s)

var int8Sink int32

func BenchmarkDotU8I8(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, dim := range benchDims {
		q := make([]int8, dim)
		c := make([]uint8, dim)
		x, y := make([]float32, dim), make([]float32, dim)
		for i := range q {
			q[i], c[i] = int8(r.IntN(129)-64), uint8(r.IntN(256))
			x[i], y[i] = r.Float32(), r.Float32()
		}
		for _, k := range kernel.Impls() {
			b.Run(fmt.Sprintf("dim=%d/impl=%s/int8", dim, k.Name), func(b *testing.B) {
				b.SetBytes(int64(dim))
				for b.Loop() {
					int8Sink += k.DotU8I8(q, c)
				}
			})
			b.Run(fmt.Sprintf("dim=%d/impl=%s/float32", dim, k.Name), func(b *testing.B) {
				b.SetBytes(int64(4 * dim))
				for b.Loop() {
					kernelSink += k.Dot(x, y)
				}
			})
		}
	}
}

// BenchmarkInt8Batch scores 256 contiguous codes (dim + 4 bytes apart, as
// package quant lays them out) per call, beside DotBatch over 256 float32
// rows: the inner loops of qflat's and flat's scans.
func BenchmarkInt8Batch(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	const rows = 256
	for _, dim := range benchDims {
		stride := dim + 4
		q := make([]int8, dim)
		codes := make([]uint8, rows*stride)
		for i := range q {
			q[i] = int8(r.IntN(129) - 64)
		}
		for i := range codes {
			codes[i] = uint8(r.IntN(256))
		}
		fq := make([]float32, dim)
		frows := make([]float32, rows*dim)
		for i := range frows {
			frows[i] = r.Float32()
		}
		out := make([]int32, rows)
		fout := make([]float32, rows)
		for _, k := range kernel.Impls() {
			b.Run(fmt.Sprintf("dim=%d/impl=%s/int8", dim, k.Name), func(b *testing.B) {
				b.SetBytes(int64(rows * stride))
				for b.Loop() {
					k.DotU8I8Batch(q, codes, stride, out)
				}
			})
			b.Run(fmt.Sprintf("dim=%d/impl=%s/float32", dim, k.Name), func(b *testing.B) {
				b.SetBytes(int64(rows * dim * 4))
				for b.Loop() {
					k.DotBatch(fq, frows, fout)
				}
			})
		}
	}
}

// BenchmarkInt8GatherAffine measures the gather a graph walk on codes
// calls: the 32 codes of a neighbour list, anywhere in memory (here in
// cache), with the affine finish, for every kernel family.
func BenchmarkInt8GatherAffine(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	const rows = 32
	for _, dim := range []int{128, 384, 768, 1024} {
		q := make([]int8, dim)
		for i := range q {
			q[i] = int8(r.IntN(129) - 64)
		}
		ptrs := make([]*uint8, rows)
		for i := range ptrs {
			c := make([]uint8, dim+4)
			for j := range c {
				c[j] = uint8(r.IntN(256))
			}
			ptrs[i] = &c[0]
		}
		out := make([]float32, rows)
		for _, k := range kernel.Impls() {
			b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, k.Name), func(b *testing.B) {
				b.SetBytes(int64(rows * dim))
				for b.Loop() {
					k.DotU8I8GatherAffine(q, ptrs, 0.5, 1, out)
				}
			})
		}
	}
}

// BenchmarkInt8Gather2 measures the gather a recency walk calls: 32
// codes anywhere in memory (here in cache) against the two levels of a
// bounded query, for every kernel family.
func BenchmarkInt8Gather2(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	const rows = 32
	for _, dim := range []int{384, 768, 1024} {
		q1, q2 := make([]int8, dim), make([]int8, dim)
		for i := range q1 {
			q1[i], q2[i] = int8(r.IntN(129)-64), int8(r.IntN(129)-64)
		}
		ptrs := make([]*uint8, rows)
		for i := range ptrs {
			c := make([]uint8, dim+4)
			for j := range c {
				c[j] = uint8(r.IntN(256))
			}
			ptrs[i] = &c[0]
		}
		out1, out2 := make([]int32, rows), make([]int32, rows)
		for _, k := range kernel.Impls() {
			b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, k.Name), func(b *testing.B) {
				b.SetBytes(int64(rows * dim))
				for b.Loop() {
					k.DotU8I8Gather2(q1, q2, ptrs, out1, out2)
				}
			})
		}
	}
}
