// This file holds CheckTruth: a sample of a ground truth given with the
// data (an ann-benchmarks file's neighbors) compared with the exact float64
// ground truth.

package recall

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// TruthCheck is the outcome of [CheckTruth].
//
// It is a plain value.
type TruthCheck struct {
	// Queries is the number of queries compared, K the depth.
	Queries, K int
	// Differing is the number of those queries whose given top K is not
	// the exact top K as a set.
	Differing int
	// Overlap is the mean fraction of the exact top K found in the given
	// top K (1 when they agree everywhere).
	Overlap float64
	// First is the first differing query (-1 if none).
	First int
}

// CheckTruth compares the top k of truth (one row per query of ds) with
// the exact float64 top k, on sample queries spread evenly over ds.Queries
// (all of them if sample <= 0 or exceeds their number). A row shorter than
// k gives an error wrapping [vector.ErrCorrupt].
func CheckTruth(ctx context.Context, ds *Dataset, truth [][]int32, k, sample int) (TruthCheck, error) {
	if len(truth) != len(ds.Queries) {
		return TruthCheck{}, fmt.Errorf("recall: %d truth rows for %d queries: %w", len(truth), len(ds.Queries), vector.ErrCorrupt)
	}
	k = min(k, len(ds.Base))
	nq := len(ds.Queries)
	if sample <= 0 || sample > nq {
		sample = nq
	}
	picked := make([]int, sample)
	qs := make([]vector.Vector, sample)
	for i := range picked {
		picked[i] = i * nq / sample
		qs[i] = ds.Queries[picked[i]]
		if len(truth[picked[i]]) < k {
			return TruthCheck{}, fmt.Errorf("recall: truth row %d holds %d ids, fewer than k=%d: %w", picked[i], len(truth[picked[i]]), k, vector.ErrCorrupt)
		}
	}
	sub := &Dataset{Name: ds.Name, Dim: ds.Dim, Metric: ds.Metric, Base: ds.Base, Queries: qs}
	exact, err := GroundTruth(ctx, sub, k)
	if err != nil {
		return TruthCheck{}, err
	}
	c := TruthCheck{Queries: sample, K: k, First: -1}
	var sum float64
	for i, q := range picked {
		got := map[int32]bool{}
		for _, id := range truth[q][:k] {
			got[id] = true
		}
		hit := 0
		for _, id := range exact[i] {
			if got[id] {
				hit++
			}
		}
		sum += float64(hit) / float64(k)
		if hit < k {
			c.Differing++
			if c.First < 0 {
				c.First = q
			}
		}
	}
	c.Overlap = sum / float64(sample)
	return c, nil
}
