package cairn_test

// This file holds the benchmark of expiry: many expired items removed
// while queries run.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn"
)

var (
	// The defaults are the bar's: a million expired items.
	sweepExpire = flag.Int("cairn.sweep.expire", 1000000, "items that expire, for BenchmarkExpirySweep")
	sweepKeep   = flag.Int("cairn.sweep.keep", 100000, "items that do not, for BenchmarkExpirySweep")
	sweepDim    = flag.Int("cairn.sweep.dim", 32, "dimension for BenchmarkExpirySweep")
	sweepIndex  = flag.String("cairn.sweep.index", "flat", "indexes for BenchmarkExpirySweep: flat, hnsw or both (flat,hnsw)")
	sweepText   = flag.Bool("cairn.sweep.text", false, "give BenchmarkExpirySweep's items a short text (the keyword index then takes part)")
	sweepAhead  = flag.Bool("cairn.sweep.ahead", false, "in BenchmarkExpirySweep, let the collection look ahead as its sweeper does, building the graph without the expiring items before they expire")
	sweepStores = flag.String("cairn.sweep.stores", "memory,sqlite", "stores for BenchmarkExpirySweep: memory, sqlite or both")
)

// BenchmarkExpirySweep fills a collection with -cairn.sweep.keep items
// that never expire and -cairn.sweep.expire that expire together (random
// -cairn.sweep.dim vectors, in a -cairn.sweep.index index), runs a loop
// of vector queries (k = 10) on one goroutine, and reports one query's
// 95th percentile (and median) before the items expire (quiet-), while
// RemoveExpired removes them all in batches through the write path
// (sweep-), and after (after-); sweep/quiet-p95 is the bar (≤ 1.5). It
// also reports how long the sweep took and checks that no query returned
// an item expired at its start. The store's clock is a fake one moved
// past the expiry at once; the background sweeper is off, so the sweep is
// the one measured. One op is the whole run (use -benchtime 1x); a file
// store is in a temporary directory.
//
//	go test -run '^$' -bench BenchmarkExpirySweep -benchtime 1x -timeout 30m .
//	go test -run '^$' -bench BenchmarkExpirySweep -benchtime 1x -cairn.sweep.index hnsw -cairn.sweep.expire 90000 -cairn.sweep.keep 10000 -timeout 60m .
//
// The default (an exact index) fits in minutes at a million items. An
// HNSW graph of which at least half expires is built anew from the rest
// beside the old one (rebuild.go), and until the swap every query walks
// the old graph through the expired items, hidden by the versions' shown set:
// that walk, not the sweep's own work, is what the expired- percentiles
// (queries after the expiry and before the sweep) show. The background
// sweeper looks ahead and builds that graph seconds before the expiry;
// -cairn.sweep.ahead does the same (reporting the queries during that
// build as ahead-), so that the sweep installs it at once. A smaller
// share is unlinked node by node, about 16 node repairs an item, beside
// the queries.
func BenchmarkExpirySweep(b *testing.B) {
	for _, name := range splitComma(*sweepIndex) {
		kind := cairn.HNSW
		if name == "flat" {
			kind = cairn.Flat
		}
		for _, store := range []string{"memory", "sqlite"} {
			if !slices.Contains(splitComma(*sweepStores), store) {
				continue
			}
			b.Run(fmt.Sprintf("%s/index=%v/keep=%d/expire=%d/dim=%d/text=%v", store, kind, *sweepKeep, *sweepExpire, *sweepDim, *sweepText), func(b *testing.B) {
				for range b.N {
					runExpirySweep(b, store == "sqlite", kind)
				}
			})
		}
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func runExpirySweep(b *testing.B, persistent bool, kind cairn.IndexKind) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	var db *cairn.DB
	if persistent {
		var err error
		if db, err = cairn.Open(ctx, filepath.Join(b.TempDir(), "sweep.db"), nil); err != nil {
			b.Fatal(err)
		}
	} else {
		db = cairn.OpenMemory(nil)
	}
	defer db.Close()
	db.SetClockForTest(clk.Now)
	db.NoSweeperForTest()
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: *sweepDim, Index: kind})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	total := *sweepKeep + *sweepExpire
	var texts []string
	if *sweepText {
		texts = shortTexts(10000, 7)
	}
	expires := clk.Now().Add(time.Hour)
	start := time.Now()
	const batch = 5000
	for i := 0; i < total; i += batch {
		items := make([]cairn.Item, min(batch, total-i))
		for j := range items {
			n := i + j
			items[j] = cairn.Item{ID: fmt.Sprint(n), Embedding: randVec(rng, *sweepDim)}
			if rng.IntN(total) < *sweepExpire { // expiring items spread among the others
				items[j].ExpiresAt = expires
			}
			if texts != nil {
				items[j].Text = texts[n%len(texts)]
			}
		}
		if err := c.Add(ctx, items...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("filled %d items in %v", total, time.Since(start).Round(time.Millisecond))
	queries := make([][]float32, 1000)
	for i := range queries {
		queries[i] = randVec(rng, *sweepDim)
	}
	qi := 0
	query := func() time.Duration {
		now := clk.Now()
		t := time.Now()
		rs, err := c.Query(ctx, queries[qi%len(queries)], 10, nil)
		took := time.Since(t)
		qi++
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if !r.ExpiresAt.IsZero() && !r.ExpiresAt.After(now) {
				b.Fatalf("a query at %v returned %q, expired at %v", now, r.ID, r.ExpiresAt)
			}
		}
		return took
	}
	quietFor := func(n int) []time.Duration {
		ts := make([]time.Duration, n)
		for i := range ts {
			ts[i] = query()
		}
		return ts
	}
	b.ResetTimer()
	quiet := quietFor(2000)
	type outcome struct {
		n    int
		err  error
		took time.Duration
	}
	// During the look ahead, if asked: the graph of the items that stay
	// is built beside the queries, a few seconds before the expiry.
	var ahead []time.Duration
	var aheadTook time.Duration
	if *sweepAhead {
		clk.Advance(time.Hour - 5*time.Second)
		done := make(chan time.Duration, 1)
		go func() {
			t := time.Now()
			c.BuildAheadForTest(ctx)
			done <- time.Since(t)
		}()
	look:
		for {
			select {
			case aheadTook = <-done:
				break look
			default:
				ahead = append(ahead, query())
			}
		}
		clk.Advance(5 * time.Second)
	} else {
		clk.Advance(time.Hour) // every expiring item has expired
	}
	// Expired, not yet removed: readers leave them out by a filter, which
	// a graph walk must go on through. (With the look ahead the sweeper
	// wakes at the expiry, and there is no such moment to speak of.)
	var expired []time.Duration
	if !*sweepAhead {
		expired = quietFor(500)
	}
	done := make(chan outcome, 1)
	go func() {
		t := time.Now()
		n, err := c.RemoveExpired(ctx)
		done <- outcome{n, err, time.Since(t)}
	}()
	var during []time.Duration
	var out outcome
loop:
	for {
		select {
		case out = <-done:
			break loop
		default:
			during = append(during, query())
		}
	}
	if out.err != nil {
		b.Fatal(out.err)
	}
	after := quietFor(2000)
	b.StopTimer()
	if cnt, err := c.Count(ctx); err != nil || cnt != total-out.n {
		b.Fatalf("Count %d (%v) after removing %d of %d", cnt, err, out.n, total)
	}
	if len(during) < 20 {
		b.Logf("only %d queries ran during the sweep: its percentiles are rough", len(during))
	}
	percentiles(b, "quiet-", quiet)
	percentiles(b, "after-", after)
	if len(expired) > 0 {
		percentiles(b, "expired-", expired)
	}
	if len(ahead) > 0 {
		percentiles(b, "ahead-", ahead)
		slices.Sort(quiet)
		b.ReportMetric(float64(ahead[len(ahead)*95/100])/float64(quiet[len(quiet)*95/100]), "ahead/quiet-p95")
		b.ReportMetric(aheadTook.Seconds(), "ahead-s")
	}
	if len(during) > 0 {
		percentiles(b, "sweep-", during)
		slices.Sort(quiet)
		b.ReportMetric(float64(during[len(during)*95/100])/float64(quiet[len(quiet)*95/100]), "sweep/quiet-p95")
	}
	b.ReportMetric(out.took.Seconds(), "sweep-s")
	b.ReportMetric(float64(out.n), "removed")
	b.ReportMetric(float64(len(during)), "sweep-queries")
}
