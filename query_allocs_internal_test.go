//go:build !race

// This file holds the test that a query's allocations stay few: a count,
// not a timing. The race detector allocates on its own, so it is left out
// of -race builds.

package cairn

import (
	"context"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// queryAllocBound is the most allocations a k-result vector query of an
// HNSW collection with a recall target may make: the index's result slice,
// the results, and for a filter its allow-list (a bitmap or a set); plus
// two for each result's metadata map (the map and its slots; the values
// are boxed when stored, not per query). A query costs about as much as
// its index's search; these are what it adds.
func queryAllocBound(oc overheadCase, k int) float64 {
	n := 2.0 // the index's results, the results
	switch oc.filter {
	case "eq":
		n += 3 // the compiled filter, the allow-list, the index's own heap for an exact pass over a small one
	case "ne":
		n++ // the compiled filter: the complement of a posting list is matched, and allowed, in reused memory
	}
	if oc.payload {
		n += 2 * float64(k)
	}
	return n
}

// TestQueryAllocations fails if a k = 10 query of an HNSW collection with
// a recall target, in memory or in a file, with or without metadata and
// filters, allocates more than queryAllocBound. Last counted at 44 with
// metadata (a plan, candidates copied into results, every value boxed
// again), now at the bound.
func TestQueryAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eight graphs of 2,000 vectors")
	}
	ctx := context.Background()
	ds := overheadDataset()
	for _, oc := range overheadCases() {
		t.Run(oc.String(), func(t *testing.T) {
			db := overheadDB(ctx, t, oc.store)
			defer db.Close()
			c := overheadCollection(ctx, t, db, ds, oc)
			o := &QueryOptions{Filter: oc.queryFilter()}
			q := ds.Queries[0]
			res, err := c.Query(ctx, q, 10, o)
			if err != nil || len(res) != 10 {
				t.Fatalf("query: %d results, %v", len(res), err)
			}
			// The fewest of three counts: a background calibration of the
			// graph, which the queries may start, allocates too.
			got := -1.0
			for range 3 {
				n := testing.AllocsPerRun(50, func() {
					if _, err := c.Query(ctx, q, 10, o); err != nil {
						t.Fatal(err)
					}
				})
				if got < 0 || n < got {
					got = n
				}
			}
			if bound := queryAllocBound(oc, 10); got > bound {
				t.Errorf("a query allocates %.1f times, want at most %.0f", got, bound)
			} else {
				t.Logf("a query allocates %.1f times (bound %.0f)", got, bound)
			}
		})
	}
}

// TestRecencyQueryAllocations fails if a vector query with Recency, whose
// walk scores items by their codes and vectors, allocates more than one
// time more than the same query without it (its candidates): the walk's
// batch, its pool and its prepared query live in the query's scratch
// memory.
func TestRecencyQueryAllocations(t *testing.T) {
	withCodes(t, true)
	ctx := context.Background()
	clk := NewFakeClock()
	c := recencyFixture(t, HNSW, vector.Cosine, 3000, 32, clk)
	q := make([]float32, 32)
	q[0], q[1] = 1, 0.5
	r := &QueryOptions{Recency: &Recency{HalfLife: 24 * time.Hour, Importance: "importance"}}
	count := func(o *QueryOptions) float64 {
		got := -1.0
		for range 3 { // the fewest of three: see TestQueryAllocations
			n := testing.AllocsPerRun(50, func() {
				if res, err := c.Query(ctx, q, 10, o); err != nil || len(res) != 10 {
					t.Fatalf("query: %d results, %v", len(res), err)
				}
			})
			if got < 0 || n < got {
				got = n
			}
		}
		return got
	}
	plain, recency := count(nil), count(r)
	if recency > plain+1 {
		t.Errorf("a recency query allocates %.1f times, a plain one %.1f: want at most one more", recency, plain)
	} else {
		t.Logf("a recency query allocates %.1f times, a plain one %.1f", recency, plain)
	}
}
