package vector

import "slices"

// TopK collects the k best [Result]s offered to it, under the ordering of
// [Result.Less]. It is a bounded max-heap: the worst kept result sits at the
// root, so Push is O(1) for a result that does not make the cut and
// O(log k) otherwise. A TopK is not safe for concurrent use; give each
// goroutine its own and [TopK.Merge] them at the end.
type TopK struct {
	k int
	h []Result
}

// NewTopK returns an empty collector for the k best results. k must be
// positive.
func NewTopK(k int) *TopK {
	return &TopK{k: k, h: make([]Result, 0, min(k, 1<<16))}
}

// Reset empties t and sets its bound to k, keeping its memory.
func (t *TopK) Reset(k int) {
	t.k = k
	t.h = t.h[:0]
}

// K returns the bound: the most results t keeps.
func (t *TopK) K() int { return t.k }

// Len returns the number of results held, at most k.
func (t *TopK) Len() int { return len(t.h) }

// Full reports whether t holds k results.
func (t *TopK) Full() bool { return len(t.h) >= t.k }

// Worst returns the distance of the worst result held; a new result must
// beat it to enter a full collector. It panics if t is empty.
func (t *TopK) Worst() float32 { return t.h[0].Distance }

// Push offers a result and reports whether it was kept.
func (t *TopK) Push(id ID, dist float32) bool {
	r := Result{ID: id, Distance: dist}
	if len(t.h) < t.k {
		t.h = append(t.h, r)
		t.up(len(t.h) - 1)
		return true
	}
	if !r.Less(t.h[0]) {
		return false
	}
	t.h[0] = r
	t.down(0)
	return true
}

// Merge offers every result held by o to t.
func (t *TopK) Merge(o *TopK) {
	for _, r := range o.h {
		t.Push(r.ID, r.Distance)
	}
}

// Results returns the results held, best first, in a new slice, and leaves
// t empty.
func (t *TopK) Results() []Result {
	out := make([]Result, len(t.h))
	copy(out, t.h)
	t.h = t.h[:0]
	if len(out) <= insertionMax {
		// An insertion sort: at k = 10 slices.SortFunc through its
		// comparison closure was 4% of a graph query's instructions.
		for i := 1; i < len(out); i++ {
			r := out[i]
			j := i
			for ; j > 0 && r.Less(out[j-1]); j-- {
				out[j] = out[j-1]
			}
			out[j] = r
		}
		return out
	}
	slices.SortFunc(out, func(a, b Result) int {
		if a.Less(b) {
			return -1
		}
		if b.Less(a) {
			return 1
		}
		return 0
	})
	return out
}

// insertionMax is the most results Results sorts by insertion.
const insertionMax = 32

// up and down are container/heap's sift operations, specialised to a
// max-heap of Result without boxing into interface values.
func (t *TopK) up(j int) {
	h := t.h
	for j > 0 {
		i := (j - 1) / 2
		if !h[i].Less(h[j]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func (t *TopK) down(i int) {
	h := t.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h[l].Less(h[r]) {
			j = r
		}
		if !h[i].Less(h[j]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
