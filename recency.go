package cairn

// This file holds recency and importance in ranking: a vector query that
// scores each item by relevance × recency × importance, exactly over the
// ranking the index gives.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cairndb/cairn/vector"
)

// Recency asks a vector query to rank items by how relevant, how recent
// and how important they are together, the retrieval score of generative
// agents (Park et al., 2023) as a product:
//
//	score = relevance × 0.5^(age / HalfLife) × importance
//
// where relevance is the item's similarity brought into [0, 1] — (1 +
// cos) / 2 for Cosine, 1 / (1 + ‖q − v‖) for L2, the inner product
// clipped to [0, 1] for Dot (meant for unit vectors) —, age is the time
// since the item's UpdatedAt (0 for a time in the future), and importance
// is the number the item's metadata holds under Importance, clipped to
// [0, 1] (1 where it is missing or not a number, or if Importance is
// empty). [Result.Score] is that score, and the results come best first.
//
// Every factor but relevance is at most 1, so an item's score is at most
// its relevance: the query takes the index's nearest items in a window,
// and widens it (four times, then again) until the k-th best score is at
// least the relevance of the last item in the window, or the window holds
// every item the filter matches. No item outside the window can then
// score higher, so the top k is exact over the index's ranking (exact
// with Flat; as good as the graph's recall at the window's size with
// HNSW). Old or unimportant memories make the window wider: a query whose
// best items all score low searches most of the collection. With MMR, the
// score stands in for the similarity to the query; a reranker is given
// the best by score. Keyword and hybrid queries refuse it.
type Recency struct {
	// HalfLife is the age at which recency halves. Zero means recency
	// plays no part (only importance does); it must not be negative.
	HalfLife time.Duration
	// Importance is the metadata key of each item's importance, a
	// number from 0 to 1; empty for none.
	Importance string
}

// recencyWindow is the first window of a recency query: at least this
// many candidates, and four times k.
const recencyWindow = 40

// checkRecency checks r for a query in mode.
func checkRecency(r *Recency, mode QueryMode, bad func(string, ...any) error) error {
	if mode != VectorMode {
		return bad("Recency in %v mode: it ranks the vector list only", mode)
	}
	if r.HalfLife < 0 {
		return bad("Recency HalfLife %v is negative", r.HalfLife)
	}
	return nil
}

// relevance is a similarity brought into [0, 1], as Recency defines it.
func relevance(m vector.Metric, sim float64) float64 {
	if m == vector.Cosine {
		sim = (1 + sim) / 2
	}
	return min(max(sim, 0), 1)
}

// recencyScore returns the score of record rec at relevance rel, at now
// (Unix nanoseconds).
func recencyScore(r *Recency, rec *record, rel float64, now int64) float64 {
	s := rel
	if r.HalfLife > 0 && rec.updated != noTime && rec.updated < now {
		s *= math.Exp2(-float64(now-rec.updated) / float64(r.HalfLife))
	}
	if r.Importance != "" {
		if v, ok := rec.md.get(r.Importance); ok && v.kind == kindNumber {
			s *= min(max(v.num, 0), 1)
		}
	}
	return s
}

// recentHits returns the candidates of a vector query with Recency, the
// pool best by its score, best first (ties by distance): it widens the
// window of the index's nearest items until no item outside can score
// higher (see Recency). mu is held.
func (c *Collection) recentHits(ctx context.Context, p *plan, q []float32) ([]candidate, error) {
	r := p.opts.Recency
	now := p.view.Now()
	n := c.cat.len()
	for w := max(recencyWindow, 4*p.pool); ; w *= 4 {
		w = min(w, n)
		hits, err := c.vectorHits(ctx, p, q, w)
		if err != nil {
			return nil, fmt.Errorf("cairn: query: %w", err)
		}
		cands := make([]candidate, 0, len(hits))
		last := math.Inf(1) // the least relevance in the window
		for i, h := range hits {
			sim := similarity(c.cfg.Metric, h.Distance)
			if p.opts.MinSimilarity != nil && sim < *p.opts.MinSimilarity {
				break // similarity falls as distance grows
			}
			cd := c.candidate(h.ID)
			rel := relevance(c.cfg.Metric, sim)
			cd.res.Distance, cd.res.Similarity, cd.res.VectorRank = float64(h.Distance), sim, i+1
			cd.res.Score = recencyScore(r, cd.rec, rel, now)
			cands = append(cands, cd)
			last = rel
		}
		// Best score first; the sort is stable, so ties keep the
		// index's order.
		slices.SortStableFunc(cands, func(a, b candidate) int { return -cmpFloat(a.res.Score, b.res.Score) })
		cut := len(cands) < len(hits) // MinSimilarity stopped the list: nothing beyond can pass it
		if cut || len(hits) < w || w == n || len(cands) >= p.pool && cands[p.pool-1].res.Score >= last {
			return cands[:min(len(cands), p.pool)], nil
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
