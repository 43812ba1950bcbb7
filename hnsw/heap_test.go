package hnsw

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHeaps checks the typed heaps against sorting: the min-heap pops in
// ascending order, and a max-heap bounded with replaceTop keeps the k
// smallest.
func TestHeaps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 2, 7, 100} {
		var mn minHeap
		var mx maxHeap
		const k = 10
		var all []float32
		for i := range n {
			d := float32(r.IntN(50))
			all = append(all, d)
			mn.push(cand{d, node(i)})
			if len(mx) < k {
				mx.push(cand{d, node(i)})
			} else if d < mx[0].dist {
				mx.replaceTop(cand{d, node(i)})
			}
		}
		slices.Sort(all)
		for i := range n {
			if got := mn.pop().dist; got != all[i] {
				t.Fatalf("n=%d: min-heap pop %d = %v, want %v", n, i, got, all[i])
			}
		}
		for i := min(n, k) - 1; i >= 0; i-- {
			if got := mx.pop().dist; got != all[i] {
				t.Fatalf("n=%d: max-heap pop = %v, want %v", n, got, all[i])
			}
		}
	}
}
