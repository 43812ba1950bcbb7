// Package rank holds the pure functions a query uses to combine and
// reorder ranked lists: reciprocal rank fusion, maximal marginal
// relevance, and the check of a caller's reranking.
//
// This file holds reciprocal rank fusion.
package rank

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/cairndb/cairn/vector"
)

// DefaultRRFK is the k of reciprocal rank fusion when none is given: the
// value of Cormack, Clarke and Büttcher (SIGIR 2009), which most systems
// keep.
const DefaultRRFK = 60

// Fused is one item of a fused list: its id, its fused score and its rank
// in each input list (1 for the first; 0 where it is absent).
type Fused struct {
	ID    vector.ID
	Score float64
	Ranks []int
}

// Fuse combines ranked lists of ids (best first, no id twice in a list)
// by reciprocal rank fusion: an id's score is the sum over the lists that
// hold it of weights[i] / (k + rank), rank counting from 1. A nil weights
// means 1 for every list. The result is best first; ties go to the id that
// ranks better in the earliest list that tells them apart, then to the
// smaller id.
//
// It returns an error wrapping [vector.ErrInvalidOptions] for k < 0 or not
// finite, a weights of the wrong length, or a weight that is negative or
// not finite; an id repeated within one list is an error too.
func Fuse(lists [][]vector.ID, weights []float64, k float64) ([]Fused, error) {
	if k < 0 || math.IsNaN(k) || math.IsInf(k, 0) {
		return nil, fmt.Errorf("rank: fuse: %w: k = %v, want a finite k ≥ 0", vector.ErrInvalidOptions, k)
	}
	if weights != nil && len(weights) != len(lists) {
		return nil, fmt.Errorf("rank: fuse: %w: %d weights for %d lists", vector.ErrInvalidOptions, len(weights), len(lists))
	}
	for i, w := range weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("rank: fuse: %w: weight %d = %v, want a finite weight ≥ 0", vector.ErrInvalidOptions, i, w)
		}
	}
	at := map[vector.ID]int{} // index in out
	var out []Fused
	for li, list := range lists {
		w := 1.0
		if weights != nil {
			w = weights[li]
		}
		for r, id := range list {
			j, ok := at[id]
			if !ok {
				j = len(out)
				at[id] = j
				out = append(out, Fused{ID: id, Ranks: make([]int, len(lists))})
			}
			f := &out[j]
			if f.Ranks[li] != 0 {
				return nil, fmt.Errorf("rank: fuse: %w: id %d twice in list %d", vector.ErrInvalidOptions, id, li)
			}
			f.Ranks[li] = r + 1
			f.Score += w / (k + float64(r+1))
		}
	}
	slices.SortFunc(out, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		for i := range a.Ranks {
			if c := cmp.Compare(rankOrder(a.Ranks[i]), rankOrder(b.Ranks[i])); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// rankOrder orders ranks with absent (0) after every real rank.
func rankOrder(r int) int {
	if r == 0 {
		return math.MaxInt
	}
	return r
}
