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
