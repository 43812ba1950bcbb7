package recall

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/vector"
)

// gtSpotChecks is the number of queries whose cached ground truth is
// recomputed and compared before a cache file is trusted: a file left by
// other data of the same name (another generator version, another seed
// under a renamed file) is caught at the cost of a few exact scans.
const gtSpotChecks = 3

// CachedGroundTruth returns the exact top k of every query of ds, reading
// it from path (an .ivecs file) when that holds a usable answer and
// otherwise computing the top max(k, [GroundTruthK]) with [GroundTruth],
// writing it to path atomically for the next run, and returning its first k
// columns. reused reports whether the file was used.
//
// A file is used only if it has one row per query, rows at least
// min(k, len(ds.Base)) deep, every position inside the base, and the rows
// of a few queries agree with a fresh computation; anything else (a
// missing, truncated, stale or foreign file) is recomputed and
// overwritten. progress, if non-nil, is called as the computation goes with
// the work done and the total (in tiles of base vectors).
func CachedGroundTruth(ctx context.Context, ds *Dataset, k int, path string, progress func(done, total int)) (gt [][]int32, reused bool, err error) {
	if k <= 0 {
		return nil, false, fmt.Errorf("recall: ground truth: %w", vector.ErrInvalidK)
	}
	if rows, err := LoadIvecs(path); err == nil {
		if gt, ok := usableTruth(ctx, ds, rows, k); ok {
			return gt, true, nil
		}
	}
	full, err := groundTruth(ctx, ds, max(k, GroundTruthK), progress)
	if err != nil {
		return nil, false, err
	}
	if err := SaveIvecs(path, full); err != nil {
		return nil, false, fmt.Errorf("recall: cache ground truth: %w", err)
	}
	return columns(full, k), false, nil
}

// usableTruth reports whether rows is ground truth for ds at depth k, and
// returns its first k columns.
func usableTruth(ctx context.Context, ds *Dataset, rows [][]int32, k int) ([][]int32, bool) {
	if len(rows) != len(ds.Queries) {
		return nil, false
	}
	want := min(k, len(ds.Base))
	for _, row := range rows {
		if len(row) < want {
			return nil, false
		}
		for _, p := range row {
			if p < 0 || int(p) >= len(ds.Base) {
				return nil, false
			}
		}
	}
	if len(rows) == 0 {
		return rows, true
	}
	// Spot-check the first, middle and last queries.
	check := []int{0, len(rows) / 2, len(rows) - 1}[:min(gtSpotChecks, len(rows))]
	sub := &Dataset{Dim: ds.Dim, Metric: ds.Metric, Base: ds.Base}
	for _, i := range check {
		sub.Queries = append(sub.Queries, ds.Queries[i])
	}
	fresh, err := GroundTruth(ctx, sub, want)
	if err != nil {
		return nil, false
	}
	for j, i := range check {
		if !slices.Equal(fresh[j], rows[i][:want]) {
			return nil, false
		}
	}
	return columns(rows, k), true
}

// columns returns the first k entries of every row (all of a shorter row).
func columns(rows [][]int32, k int) [][]int32 {
	out := make([][]int32, len(rows))
	for i, r := range rows {
		out[i] = r[:min(k, len(r)):min(k, len(r))]
	}
	return out
}
