// This file holds the benchmarks of the index: a query's latency over many
// short texts, and the cost of indexing one.
package keyword

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

var benchDocs = flag.Int("keyword.n", 100000, "number of short texts for BenchmarkSearch")

// shortTexts returns n texts of 4 to 20 words drawn from a Zipf
// vocabulary of 50,000 words (s = 1.1), like notes or chat turns: a few
// words in most texts, most words in few.
func shortTexts(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(rng, 1.1, 1, 49999)
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := range 4 + rng.IntN(17) {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", z.Uint64())
		}
		out[i] = b.String()
	}
	return out
}

var (
	benchOnce  sync.Once
	benchIndex *Index
	benchTexts []string
)

func benchFixture() (*Index, []string) {
	benchOnce.Do(func() {
		benchTexts = shortTexts(*benchDocs, 1)
		benchIndex = New()
		for i, s := range benchTexts {
			benchIndex.Add(vector.ID(i+1), s)
		}
	})
	return benchIndex, benchTexts
}

// BenchmarkSearch times queries of 1 to 3 words taken from the texts
// themselves (so they match), k = 10, over -keyword.n texts, and reports
// the median and 95th percentile of one query's time.
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 5000x ./internal/keyword
func BenchmarkSearch(b *testing.B) {
	x, texts := benchFixture()
	rng := rand.New(rand.NewPCG(9, 9))
	qs := make([][]string, 1000)
	for i := range qs {
		words := strings.Fields(texts[rng.IntN(len(texts))])
		q := strings.Join(words[:1+rng.IntN(min(3, len(words)))], " ")
		qs[i], _ = ParseQuery(q)
	}
	b.Run(fmt.Sprintf("n=%d", x.Len()), func(b *testing.B) {
		b.ReportAllocs()
		var times []time.Duration
		i := 0
		for b.Loop() {
			t := time.Now()
			x.Search(qs[i%len(qs)], 10, nil, nil)
			times = append(times, time.Since(t))
			i++
		}
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(times[len(times)*95/100].Nanoseconds()), "p95-ns")
	})
}

// BenchmarkAdd times indexing one short text.
//
//	go test -run '^$' -bench 'BenchmarkAdd$' ./internal/keyword
func BenchmarkAdd(b *testing.B) {
	texts := shortTexts(10000, 2)
	x := New()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x.Add(vector.ID(i+1), texts[i%len(texts)])
		i++
	}
}
