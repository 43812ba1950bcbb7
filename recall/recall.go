package recall

import "github.com/cairndb/cairn/vector"

// At returns recall@k of one answer: the fraction of the true k nearest
// neighbours (the first k of truth, positions in the base) that appear among
// the first k results of got, whose ids are positions in the base. It is
// 0 for k <= 0. When truth holds fewer than k positions (a base smaller than
// k), the denominator is len(truth), so a perfect answer scores 1.
func At(got []vector.Result, truth []int32, k int) float64 {
	if k <= 0 {
		return 0
	}
	want := truth[:min(k, len(truth))]
	if len(want) == 0 {
		return 0
	}
	// A true neighbour is counted once even if an index returns it twice.
	var small [128]bool
	used := small[:0]
	if len(want) <= len(small) {
		used = small[:len(want)]
	} else {
		used = make([]bool, len(want))
	}
	hit := 0
	for _, r := range got[:min(k, len(got))] {
		for j, p := range want {
			if !used[j] && p >= 0 && vector.ID(p) == r.ID {
				used[j] = true
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(len(want))
}
