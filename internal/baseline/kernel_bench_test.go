package baseline_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/viterin/vek/vek32"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/cairndb/cairn/vector"
)

// The kernel benchmarks put cairn's dispatched distance functions beside
// vek, gonum and a plain one-accumulator Go loop, in one run, at the
// dimensions of small, medium and large embedding models. The vectors stay
// in L1/L2 cache, so these measure arithmetic throughput; SetBytes counts
// both inputs.
//
//	go test -run '^$' -bench 'Dot|L2' -benchtime=20000x ./internal/baseline/

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

// gonumDot is blas32.Dot: gonum's SSE assembly (f32.DotUnitary).
func gonumDot(a, b []float32) float32 {
	return blas32.Dot(blas32.Vector{N: len(a), Inc: 1, Data: a}, blas32.Vector{N: len(b), Inc: 1, Data: b})
}

func cairnDot(a, b []float32) float32 { return vector.InnerProduct(a, b) }
func cairnL2(a, b []float32) float32  { return vector.SquaredL2(a, b) }

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
	benchPair(b, []pairFunc{
		{"cairn-" + vector.KernelName(), cairnDot},
		{"vek", vek32.Dot},
		{"gonum", gonumDot},
		{"loop", loopDot},
	})
}

// BenchmarkL2 has no gonum entry: blas32 offers no distance, and gonum's
// float32 distance (internal/asm/f32.L2DistanceUnitary) is internal. vek
// has no squared distance either; vek32.Distance is the Euclidean
// distance, the same loop plus one square root.
func BenchmarkL2(b *testing.B) {
	benchPair(b, []pairFunc{
		{"cairn-" + vector.KernelName(), cairnL2},
		{"vek", vek32.Distance},
		{"loop", loopL2},
	})
}
