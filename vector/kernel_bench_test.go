package vector_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector/internal/kernel"
)

// The kernel benchmarks compare, in one run, each of our kernels on this
// CPU (kernel.Impls: avx512, avx2, generic) with a plain one-accumulator Go
// loop, at the dimensions of small, medium and large
// embedding models. The vectors are small enough to stay in L1/L2 cache,
// so these measure arithmetic throughput, not memory bandwidth; SetBytes
// counts both inputs so the GB/s column reads as bytes consumed.
//
//	go test -run '^$' -bench 'Dot|L2' -benchtime=20000x ./vector/
//
// The same comparison against vek and gonum, which the library does not
// import, is in the internal/baseline module.

var benchDims = []int{96, 768, 1536}

// kernelSink keeps the compiler from discarding the benchmarked calls.
var kernelSink float32

type pairFunc struct {
	name string
	f    func(a, b []float32) float32
}

func loopDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func loopL2(a, b []float32) float32 {
	var s float32
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

func benchPair(b *testing.B, fs []pairFunc) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, dim := range benchDims {
		x := make([]float32, dim)
		y := make([]float32, dim)
		for i := range x {
			x[i], y[i] = r.Float32(), r.Float32()
		}
		for _, f := range fs {
			b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, f.name), func(b *testing.B) {
				b.SetBytes(int64(2 * 4 * dim))
				b.ReportAllocs()
				var s float32
				for b.Loop() {
					s += f.f(x, y)
				}
				kernelSink = s
			})
		}
	}
}

func BenchmarkDot(b *testing.B) {
	var fs []pairFunc
	for _, k := range kernel.Impls() {
		fs = append(fs, pairFunc{k.Name, k.Dot})
	}
	fs = append(fs, pairFunc{"loop", loopDot})
	benchPair(b, fs)
}

func BenchmarkL2(b *testing.B) {
	var fs []pairFunc
	for _, k := range kernel.Impls() {
		fs = append(fs, pairFunc{k.Name, k.L2})
	}
	fs = append(fs, pairFunc{"loop", loopL2})
	benchPair(b, fs)
}

type batchFunc struct {
	name string
	f    func(q, rows, out []float32)
}

// singleBatch turns a single-pair kernel into a batch one, row by row.
func singleBatch(f func(a, b []float32) float32) func(q, rows, out []float32) {
	return func(q, rows, out []float32) {
		d := len(q)
		for i := range out {
			out[i] = f(q, rows[i*d:(i+1)*d])
		}
	}
}

// benchBatch measures one query against a block of 256 rows of 768
// floats (768 KiB, in L2 cache), the unit of flat's exact scan. impl=X is
// the batch kernel, impl=X-single the same family's single kernel called
// row by row, to show what sharing q across four rows buys.
func benchBatch(b *testing.B, fs []batchFunc) {
	const dim, rows = 768, 256
	r := rand.New(rand.NewPCG(9, 10))
	q := make([]float32, dim)
	m := make([]float32, dim*rows)
	for i := range q {
		q[i] = r.Float32()
	}
	for i := range m {
		m[i] = r.Float32()
	}
	out := make([]float32, rows)
	for _, f := range fs {
		b.Run(fmt.Sprintf("dim=%d/rows=%d/impl=%s", dim, rows, f.name), func(b *testing.B) {
			b.SetBytes(int64(4 * dim * rows))
			b.ReportAllocs()
			for b.Loop() {
				f.f(q, m, out)
			}
			kernelSink = out[0]
		})
	}
}

func BenchmarkDotBatch(b *testing.B) {
	var fs []batchFunc
	for _, k := range kernel.Impls() {
		fs = append(fs, batchFunc{k.Name, k.DotBatch}, batchFunc{k.Name + "-single", singleBatch(k.Dot)})
	}
	benchBatch(b, fs)
}

func BenchmarkL2Batch(b *testing.B) {
	var fs []batchFunc
	for _, k := range kernel.Impls() {
		fs = append(fs, batchFunc{k.Name, k.L2Batch}, batchFunc{k.Name + "-single", singleBatch(k.L2)})
	}
	benchBatch(b, fs)
}

// BenchmarkGather4 scores a query against four rows picked at random from
// a 48 MiB table (so mostly out of cache, as in a graph search), with the
// gather form and with four single calls, for each kernel family.
//
//	go test -run '^$' -bench Gather4 -benchtime=200000x ./vector/
func BenchmarkGather4(b *testing.B) {
	const dim, rows = 768, 16384
	r := rand.New(rand.NewPCG(1, 2))
	table := make([]float32, dim*rows)
	for i := range table {
		table[i] = r.Float32()
	}
	q := table[:dim]
	row := func() []float32 { i := r.IntN(rows); return table[i*dim : (i+1)*dim] }
	for _, k := range kernel.Impls() {
		b.Run(k.Name+"/gather", func(b *testing.B) {
			var s float32
			for b.Loop() {
				out := k.Dot4(q, row(), row(), row(), row())
				s += out[0] + out[3]
			}
			kernelSink = s
		})
		b.Run(k.Name+"/single", func(b *testing.B) {
			var s float32
			for b.Loop() {
				s += k.Dot(q, row()) + k.Dot(q, row()) + k.Dot(q, row()) + k.Dot(q, row())
			}
			kernelSink = s
		})
	}
}
