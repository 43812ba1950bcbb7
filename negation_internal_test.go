// This file holds the tests of negated equalities (Ne, Not(Eq), Not(In)),
// which the planner answers as the complement of posting lists: each query
// must return what the same condition returns through a scan.

package cairn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// negPair is a negated equality and a filter matching the same items that
// the planner answers by a scan (Or is never looked up in posting lists).
type negPair struct{ neg, scan *Filter }

func negPairs() []negPair {
	scanOf := func(f *Filter) *Filter { return Not(Or(f)) }
	return []negPair{
		{Ne("bucket", 3), scanOf(Eq("bucket", 3))},
		{Not(Eq("tag", "b")), scanOf(Eq("tag", "b"))},
		{Not(In("bucket", 1, 3, 9, 3)), scanOf(In("bucket", 1, 3, 9))},
		{Not(And(Eq("tag", "a"))), scanOf(Eq("tag", "a"))},
		{Ne("bucket", 42), scanOf(Eq("bucket", 42))}, // no item has it: all match
		{Not(In("bucket")), scanOf(In("bucket"))},    // In of nothing: all match
		{Ne("missing", "x"), scanOf(Eq("missing", "x"))},
	}
}

var negWords = []string{"alpha", "beta", "gamma", "delta"}

// negItems returns n items of dimension 8: a bucket 0..4 for most (every
// seventh has none), a tag "a".."c", a text of two of negWords, and for
// every eleventh an ExpiresAt an hour after now.
func negItems(n int, now time.Time, r *rand.Rand) []Item {
	items := make([]Item, n)
	for i := range items {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		md := map[string]any{"tag": string(rune('a' + i%3))}
		if i%7 != 0 {
			md["bucket"] = i % 5
		}
		items[i] = Item{ID: fmt.Sprintf("doc-%d", i), Embedding: v, Metadata: md,
			Text: negWords[i%4] + " " + negWords[(i/4)%4] + " note"}
		if i%11 == 0 {
			items[i].ExpiresAt = now.Add(time.Hour)
		}
	}
	return items
}

// checkNegation fails t unless every pair of negPairs gives c the same
// answers: queries in each mode for k below and above the match count,
// and Find. It also checks that the planner answers the negations as a
// complement and the others by a scan, so that both paths are compared.
func checkNegation(t *testing.T, c *Collection, r *rand.Rand, stage string) {
	t.Helper()
	ctx := context.Background()
	for _, pr := range negPairs() {
		mn, err := pr.neg.compile()
		if err != nil {
			t.Fatal(err)
		}
		ms, err := pr.scan.compile()
		if err != nil {
			t.Fatal(err)
		}
		c.mu.RLock()
		negPlan, scanPlan := c.cat.matchSet(pr.neg, mn), c.cat.matchSet(pr.scan, ms)
		if negPlan.except == nil || scanPlan.except != nil || negPlan.len() != scanPlan.len() {
			c.mu.RUnlock()
			t.Fatalf("%s: %v planned as a complement %v of %d, %v as one %v of %d; want a complement and a scan of as many",
				stage, pr.neg, negPlan.except != nil, negPlan.len(), pr.scan, scanPlan.except != nil, scanPlan.len())
		}
		got, want := negPlan.slice(), slices.Clone(scanPlan.slice())
		c.mu.RUnlock()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %v matches %d ids, %v %d", stage, pr.neg, len(got), pr.scan, len(want))
		}

		q := make([]float32, 8)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		for _, mode := range []QueryMode{VectorMode, KeywordMode, HybridMode} {
			for _, k := range []int{3, 40, 1000} {
				emb := q
				if mode == KeywordMode {
					emb = nil
				}
				query := func(f *Filter) []Result {
					o := &QueryOptions{Filter: f, Mode: mode}
					if mode != VectorMode {
						o.Keywords = "beta gamma"
					}
					res, err := c.Query(ctx, emb, k, o)
					if err != nil {
						t.Fatalf("%s: %v query of %v: %v", stage, mode, f, err)
					}
					return res
				}
				a, b := query(pr.neg), query(pr.scan)
				if len(a) == 0 && k < len(want) {
					t.Fatalf("%s: %v query of %v, k = %d: no results", stage, mode, pr.neg, k)
				}
				if !sameResults(a, b) {
					t.Fatalf("%s: %v query, k = %d: %v gives\n%v\n%v gives\n%v", stage, mode, k, pr.neg, resultIDs(a), pr.scan, resultIDs(b))
				}
			}
		}
		a, err := c.Find(ctx, pr.neg, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Find(ctx, pr.scan, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("%s: Find(%v) = %d items, Find(%v) = %d", stage, pr.neg, len(a), pr.scan, len(b))
		}
		for i := range a {
			if a[i].ID != b[i].ID {
				t.Fatalf("%s: Find(%v)[%d] = %s, Find(%v) %s", stage, pr.neg, i, a[i].ID, pr.scan, b[i].ID)
			}
		}
	}
}

func sameResults(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Score != b[i].Score || a[i].VectorRank != b[i].VectorRank || a[i].KeywordRank != b[i].KeywordRank {
			return false
		}
	}
	return true
}

func resultIDs(rs []Result) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// TestNegationMatchesScan compares negated equalities with their scanned
// equivalents over memory and SQLite collections, exact and graph, after
// deletes and upserts (which move items between posting lists), while
// items have expired unmarked, once some are marked, and once they are
// removed.
func TestNegationMatchesScan(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"memory", "sqlite"} {
		for _, kind := range []IndexKind{Flat, HNSW} {
			t.Run(store+"/"+kind.String(), func(t *testing.T) {
				clk := NewFakeClock()
				db := OpenMemory(nil)
				if store == "sqlite" {
					var err error
					if db, err = Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil); err != nil {
						t.Fatal(err)
					}
				}
				defer db.Close()
				db.clock, db.noSweeper = clk.Now, true
				c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 8, Index: kind})
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(7, 13))
				items := negItems(400, clk.Now(), r)
				if err := c.Add(ctx, items...); err != nil {
					t.Fatal(err)
				}
				checkNegation(t, c, r, "fresh")

				var gone []string
				for i := 5; i < 400; i += 19 {
					gone = append(gone, items[i].ID)
				}
				if err := c.Delete(ctx, gone...); err != nil {
					t.Fatal(err)
				}
				var moved []Item
				for i := 8; i < 400; i += 17 {
					it := items[i]
					it.Metadata = map[string]any{"tag": "b", "bucket": 3}
					if i%2 == 0 {
						it.Metadata = map[string]any{"tag": "c"}
					}
					moved = append(moved, it)
				}
				if err := c.Upsert(ctx, moved...); err != nil {
					t.Fatal(err)
				}
				checkNegation(t, c, r, "after deletes and upserts")

				clk.Advance(2 * time.Hour)
				checkNegation(t, c, r, "expired, unmarked")
				c.mu.Lock()
				c.cat.markExpired(c.now(), 10)
				hiding := c.cat.ver.Marked() > 0 && c.view(c.now()).Expiring()
				c.mu.Unlock()
				if !hiding {
					t.Fatal("marking some expired items left none marked, or none unmarked")
				}
				checkNegation(t, c, r, "expired, some marked")
				// Back before the items expired: the marked ones stay
				// hidden, the others are visible again.
				clk.Advance(-90 * time.Minute)
				checkNegation(t, c, r, "marked, clock moved back")
				clk.Advance(90 * time.Minute)
				if _, err := c.RemoveExpired(ctx); err != nil {
					t.Fatal(err)
				}
				checkNegation(t, c, r, "expired removed")
			})
		}
	}
}

// TestNegationDuringWrite compares negated equalities with their scanned
// equivalents while an upsert is stopped inside the store: its new
// versions are in the store (which exact search scans) but not published,
// and the replaced ones still are.
func TestNegationDuringWrite(t *testing.T) {
	for _, kind := range []IndexKind{Flat, HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			db, c, gb := emptyGated(t, CollectionConfig{Dim: 8, Index: kind})
			r := rand.New(rand.NewPCG(3, 5))
			// More matches than flat scores one by one (256): it scans
			// the store, new versions and all, with the allow-list.
			items := negItems(600, db.clock(), r)
			for i := range items {
				items[i].ExpiresAt = time.Time{}
			}
			if err := c.Add(ctx, items...); err != nil {
				t.Fatal(err)
			}
			entered, release := make(chan struct{}), make(chan struct{})
			gb.after = func(op string, n int) {
				if op == "upsert" {
					entered <- struct{}{}
					<-release
				}
			}
			var moved []Item
			for i := 0; i < 600; i += 3 {
				it := items[i]
				it.Embedding = slices.Clone(it.Embedding)
				it.Embedding[0] += 0.5
				it.Metadata = map[string]any{"tag": "b", "bucket": 3}
				moved = append(moved, it)
			}
			done := make(chan error, 1)
			go func() { done <- c.Upsert(ctx, moved...) }()
			<-entered
			released := false
			t.Cleanup(func() { // if the test fails while the upsert waits
				if !released {
					close(release)
					<-done
				}
			})
			c.mu.RLock()
			unpublished := c.cat.ver.Hidden()
			c.mu.RUnlock()
			if unpublished == 0 {
				t.Fatal("no version unpublished during the upsert")
			}
			checkNegation(t, c, r, "during an upsert")
			close(release)
			released = true
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkNegation(t, c, r, "after the upsert")
		})
	}
}

// TestNegationAllowList checks the filter a walking index gets for a
// complement: it allows exactly the published ids outside the lists.
func TestNegationAllowList(t *testing.T) {
	cat := newCatalog()
	for i := 1; i <= 100; i++ {
		md, err := normalizeMetadata(map[string]any{"b": i % 4})
		if err != nil {
			t.Fatal(err)
		}
		cat.add(&record{id: vector.ID(i), key: fmt.Sprint(i), md: md})
	}
	f := Not(In("b", 1, 2))
	m, err := f.compile()
	if err != nil {
		t.Fatal(err)
	}
	got := cat.matchSet(f, m)
	if got.except == nil || got.len() != 50 {
		t.Fatalf("Not(In) planned as complement %v of %d ids, want one of 50", got.except != nil, got.len())
	}
	a := &allBut{except: got.except}
	for id := vector.ID(1); id <= 100; id++ {
		if want := id%4 == 0 || id%4 == 3; a.Allow(id) != want {
			t.Fatalf("Allow(%d) = %v, want %v", id, !want, want)
		}
	}
}
