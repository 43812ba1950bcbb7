// This file holds the benchmark of a query's preparation, for callgrind
// to count (a search prepares one query each).

package quant_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// BenchmarkPrepare prepares a query of each dimension under Cosine, into
// one reused Query, as a search does:
//
//	go test -c -o /tmp/quant.test ./vector/quant
//	valgrind --tool=callgrind --toggle-collect='*prepareQueries' /tmp/quant.test \
//	    -test.run '^$' -test.bench 'Prepare/d=768' -test.benchtime 1000x
//
// and divide the count by 1000.
func BenchmarkPrepare(b *testing.B) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, dim := range []int{100, 768} {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			q := train(b, storeOf(b, dim, vector.Cosine, randVecs(r, 200, dim)), nil)
			qv := randVecs(r, 1, dim)[0]
			var p quant.Query
			prepareQueries(b, q, &p, qv)
		})
	}
}

//go:noinline
func prepareQueries(b *testing.B, q *quant.Quantizer, p *quant.Query, v vector.Vector) {
	for b.Loop() {
		if err := q.PrepareInto(p, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGather scores 64 codes in cache with GatherDistances, int8 and
// 1-bit, at d = 768 and 1536: the kernel a graph walk calls a
// neighbour list at a time.
func BenchmarkGather(b *testing.B) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, dim := range []int{768, 1536} {
		vs := randVecs(r, 256, dim)
		s := storeOf(b, dim, vector.Cosine, vs)
		for _, bits := range []int{8, 1} {
			b.Run(fmt.Sprintf("d=%d/bits=%d", dim, bits), func(b *testing.B) {
				q := train(b, s, &quant.TrainOptions{Bits: bits})
				n := q.GatherSpan()
				arena := make([]byte, 64*n)
				codes := make([]*byte, 64)
				for i := range codes {
					if _, err := q.Encode(arena[i*n:i*n+q.CodeSize()], vs[i]); err != nil {
						b.Fatal(err)
					}
					codes[i] = &arena[i*n]
				}
				p, err := q.Prepare(vs[100])
				if err != nil {
					b.Fatal(err)
				}
				out := make([]float32, 64)
				for b.Loop() {
					p.GatherDistances(codes, out)
				}
			})
		}
	}
}
