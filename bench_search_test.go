package cairn_test

// This file holds the benchmarks of keyword and hybrid search, and of
// what the keyword index costs a write.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/recall"
)

var benchTexts = flag.Int("cairn.texts", 100000, "number of short texts for BenchmarkKeywordQuery")

// shortTexts returns n texts of 4 to 20 words drawn from a Zipf
// vocabulary of 50,000 words (s = 1.1), like notes or chat turns.
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

// keywordQueries returns n queries of 1 to 3 words taken from texts, so
// that each matches something.
func keywordQueries(texts []string, n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]string, n)
	for i := range out {
		words := strings.Fields(texts[rng.IntN(len(texts))])
		rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
		out[i] = strings.Join(words[:1+rng.IntN(min(3, len(words)))], " ")
	}
	return out
}

// openBench opens a memory DB or a file in a temporary directory.
func openBench(b *testing.B, persistent bool) *cairn.DB {
	b.Helper()
	if !persistent {
		return cairn.OpenMemory(nil)
	}
	db, err := cairn.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// addAll adds items in batches of 5,000.
func addAll(b *testing.B, c *cairn.Collection, items []cairn.Item) {
	b.Helper()
	for i := 0; i < len(items); i += 5000 {
		if err := c.Add(context.Background(), items[i:min(i+5000, len(items))]...); err != nil {
			b.Fatal(err)
		}
	}
}

// percentiles reports the median and 95th percentile of times under the
// given prefix.
func percentiles(b *testing.B, prefix string, times []time.Duration) {
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), prefix+"p50-ns")
	b.ReportMetric(float64(times[len(times)*95/100].Nanoseconds()), prefix+"p95-ns")
}

// BenchmarkKeywordQuery times keyword queries (1 to 3 words, k = 10) over
// -cairn.texts items of short text, in memory and in a file, and reports
// one query's median and 95th percentile. The items' embeddings (8
// dimensions) play no part.
//
//	go test -run '^$' -bench BenchmarkKeywordQuery -benchtime 5000x .
func BenchmarkKeywordQuery(b *testing.B) {
	n := *benchTexts
	texts := shortTexts(n, 1)
	qs := keywordQueries(texts, 1000, 1)
	rng := rand.New(rand.NewPCG(1, 1))
	items := make([]cairn.Item, n)
	for i, s := range texts {
		items[i] = cairn.Item{ID: fmt.Sprint("t", i), Text: s, Embedding: randVec(rng, 8)}
	}
	ctx := context.Background()
	for _, persistent := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "sqlite"}[persistent]
		b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
			db := openBench(b, persistent)
			defer db.Close()
			c, _ := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 8, Index: cairn.Flat})
			addAll(b, c, items)
			o := &cairn.QueryOptions{Mode: cairn.KeywordMode}
			b.ReportAllocs()
			var times []time.Duration
			i := 0
			for b.Loop() {
				t := time.Now()
				if _, err := c.QueryText(ctx, qs[i%len(qs)], 10, o); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t))
				i++
			}
			percentiles(b, "", times)
		})
	}
}

// BenchmarkHybridQuery compares a hybrid query with a vector-only one on
// -cairn.n clustered vectors of -cairn.dim, each item with a short text,
// in an HNSW collection, with the same k = 10 and filter (none, or one
// keeping 10% of the items): the two alternate query by query, and it
// reports each one's median and 95th percentile and the ratio of the
// medians (the bar: hybrid/vector ≤ 1.5).
//
//	go test -run '^$' -bench BenchmarkHybridQuery -benchtime 2000x .
func BenchmarkHybridQuery(b *testing.B) {
	ctx := context.Background()
	ds := recall.Clustered(*benchN, 200, *benchDim, 1)
	texts := shortTexts(len(ds.Base), 2)
	words := keywordQueries(texts, len(ds.Queries), 2)
	items := make([]cairn.Item, len(ds.Base))
	for i, v := range ds.Base {
		items[i] = cairn.Item{ID: fmt.Sprint("doc-", i), Embedding: v, Text: texts[i], Metadata: map[string]any{"bucket": i % 10}}
	}
	for _, kind := range []cairn.IndexKind{cairn.HNSW, cairn.Flat} {
		b.Run(fmt.Sprintf("index=%v/n=%d/dim=%d", kind, len(ds.Base), ds.Dim), func(b *testing.B) {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c, _ := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: ds.Dim, Metric: ds.Metric, Index: kind})
			addAll(b, c, items)
			for _, q := range ds.Queries { // warm up
				c.Query(ctx, q, 10, nil)
			}
			for _, filtered := range []bool{false, true} {
				var f *cairn.Filter
				if filtered {
					f = cairn.Eq("bucket", 3)
				}
				b.Run(fmt.Sprintf("filtered=%v", filtered), func(b *testing.B) {
					var th, tv []time.Duration
					i := 0
					for b.Loop() {
						q, w := ds.Queries[i%len(ds.Queries)], words[i%len(words)]
						hybrid := func() {
							t := time.Now()
							if _, err := c.Query(ctx, q, 10, &cairn.QueryOptions{Filter: f, Mode: cairn.HybridMode, Keywords: w}); err != nil {
								b.Fatal(err)
							}
							th = append(th, time.Since(t))
						}
						vec := func() {
							t := time.Now()
							if _, err := c.Query(ctx, q, 10, &cairn.QueryOptions{Filter: f}); err != nil {
								b.Fatal(err)
							}
							tv = append(tv, time.Since(t))
						}
						if i%2 == 0 {
							hybrid()
							vec()
						} else {
							vec()
							hybrid()
						}
						i++
					}
					percentiles(b, "hybrid-", th)
					percentiles(b, "vector-", tv)
					b.ReportMetric(float64(th[len(th)/2])/float64(tv[len(tv)/2]), "hybrid/vector-p50")
				})
			}
		})
	}
}

// BenchmarkAddText compares a batch Add of items with a short text (4 to
// 20 words, which the keyword index takes in) with the same batch without
// text, in memory and in a file (exact collections, -cairn.dim): the two
// alternate batch by batch, and it reports the ratio of their total times
// (the bar: with/without ≤ 1.3), and of the process's CPU time over each
// (text/notext-cpu: user and system, every goroutine and the collector's
// share; less disturbed than wall time by other processes on a busy
// machine). Each op adds one batch of 1,000 to each.
//
//	go test -run '^$' -bench BenchmarkAddText -benchtime 20x .
func BenchmarkAddText(b *testing.B) {
	const batch = 1000
	ctx := context.Background()
	ds := recall.Uniform(batch, 0, *benchDim, 3)
	texts := shortTexts(batch, 3)
	items := func(round int, text bool) []cairn.Item {
		out := make([]cairn.Item, batch)
		for i, v := range ds.Base {
			out[i] = cairn.Item{ID: fmt.Sprintf("r%d-%d", round, i), Embedding: v, Metadata: map[string]any{"bucket": i % 10}}
			if text {
				out[i].Text = texts[i]
			}
		}
		return out
	}
	for _, persistent := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "sqlite"}[persistent]
		b.Run(fmt.Sprintf("%s/batch=%d/dim=%d", name, batch, *benchDim), func(b *testing.B) {
			var cols [2]*cairn.Collection // without, with text
			for i := range cols {
				db := openBench(b, persistent)
				defer db.Close()
				cols[i], _ = db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: *benchDim, Index: cairn.Flat})
			}
			var took, cpu [2]time.Duration
			round := 0
			for b.Loop() {
				for j := range 2 {
					which := (round + j) % 2 // alternate which goes first
					its := items(round, which == 1)
					t, c := time.Now(), processCPU()
					if err := cols[which].Add(ctx, its...); err != nil {
						b.Fatal(err)
					}
					took[which] += time.Since(t)
					cpu[which] += processCPU() - c
				}
				round++
			}
			b.ReportMetric(float64(took[1])/float64(took[0]), "text/notext")
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "text/notext-cpu")
		})
	}
}
