package versions

import (
	"container/heap"

	"github.com/cairndb/cairn/vector"
)

// Entry is one version with an ExpiresAt, in the expiry index.
type Entry struct {
	At int64 // the version's ExpiresAt, Unix nanoseconds
	ID vector.ID
}

// expiryHeap orders the versions with an ExpiresAt by it, soonest first.
// A version leaves it only when a sweep marks it: a version retired
// before it expires stays as a stale entry (its id is published no more,
// and ids are never reused) until its time comes.
type expiryHeap []Entry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].At < h[j].At }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(Entry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// expiry is the expiry index.
//
// A sweep first marks the expired versions: it takes them from the heap
// into marked and clears their bits in shown, so that readers skip them
// by a bit test; then it deletes them, a batch at a time (sweeping counts
// those of batches in flight). Readers check each version's ExpiresAt
// only while the heap holds expired versions not marked yet (due).
type expiry struct {
	heap expiryHeap
	live int // the published versions that have an ExpiresAt
	// marked are expired versions taken from the heap, hidden from
	// readers, waiting for a batch to delete them.
	marked   []Entry
	sweeping int // the marked versions of the batches in flight
}

func (e *expiry) add(id vector.ID, at int64) {
	heap.Push(&e.heap, Entry{at, id})
	e.live++
}

// dropStale takes the stale entries out of the heap once they are most
// of it, so that the heap follows the published versions rather than
// every version written within the furthest ExpiresAt: an item
// upserted daily in a collection with a 30-day TTL would otherwise
// keep 30 entries. Each rebuild is paid for by as many retirements as
// the entries it keeps.
func (vs *State) dropStale() {
	e := &vs.exp
	if len(e.heap) <= 2*e.live+64 {
		return
	}
	kept := e.heap[:0]
	for _, x := range e.heap {
		if vs.Current(x) {
			kept = append(kept, x)
		}
	}
	clear(e.heap[len(kept):])
	e.heap = kept
	heap.Init(&e.heap)
}

// due reports whether a published version may have expired at now
// without being marked.
func (e *expiry) due(now int64) bool {
	return e.live > 0 && len(e.heap) > 0 && e.heap[0].At <= now
}

// hiding reports whether marked versions are still published.
func (e *expiry) hiding() bool { return len(e.marked) > 0 || e.sweeping > 0 }

// Current reports whether e is still a published version's expiry: no
// write has replaced or deleted it since e was taken.
func (vs *State) Current(e Entry) bool {
	at, published := vs.lookup(e.ID)
	return published && at == e.At
}

// MarkDue moves up to n versions expired at now from the heap to the
// marked, hiding them from readers, calls hidden (if not nil) with each,
// and reports whether the heap holds more. Stale entries are dropped.
func (vs *State) MarkDue(now int64, n int, hidden func(vector.ID)) (more bool) {
	e := &vs.exp
	for ; n > 0 && len(e.heap) > 0 && e.heap[0].At <= now; n-- {
		x := heap.Pop(&e.heap).(Entry)
		if vs.Current(x) {
			e.marked = append(e.marked, x)
			vs.shown.clear(x.ID)
			if hidden != nil {
				hidden(x.ID)
			}
		}
	}
	return len(e.heap) > 0 && e.heap[0].At <= now
}

// Marked returns the number of marked versions no batch has taken.
func (vs *State) Marked() int { return len(vs.exp.marked) }

// TakeMarked takes up to n marked versions for a batch to delete, and
// reports whether more are marked. They count as sweeping until
// [State.Swept] or [State.Unswept].
func (vs *State) TakeMarked(n int) (taken []Entry, more bool) {
	e := &vs.exp
	n = min(n, len(e.marked))
	taken = append([]Entry(nil), e.marked[len(e.marked)-n:]...)
	e.marked = e.marked[:len(e.marked)-n]
	e.sweeping += len(taken)
	return taken, len(e.marked) > 0
}

// Swept ends a batch of n taken versions, deleted.
func (vs *State) Swept(n int) { vs.exp.sweeping -= n }

// Unswept ends a batch that failed: those of taken still current are
// marked again, for the next sweep.
func (vs *State) Unswept(taken []Entry) {
	vs.exp.sweeping -= len(taken)
	for _, x := range taken {
		if vs.Current(x) {
			vs.exp.marked = append(vs.exp.marked, x)
		}
	}
}

// ExpiringBy reports whether at least need published versions have an
// ExpiresAt of at most t, walking only the part of the heap at or before
// t, and no further than the need-th. Read-only.
func (vs *State) ExpiringBy(t int64, need int) bool {
	h, n := vs.exp.heap, 0
	stack := []int{0}
	for len(stack) > 0 && n < need {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h) || h[i].At > t {
			continue
		}
		if vs.Current(h[i]) {
			n++
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	return n >= need
}

// AppendDue appends to ids the published versions that have expired at
// the view's instant without a sweep having marked them (none unless
// [View.Expiring]), and returns the extended slice. It walks only the
// part of the expiry index at or before the instant.
func (v View) AppendDue(ids []vector.ID) []vector.ID {
	if !v.due {
		return ids
	}
	h := v.vs.exp.heap
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h) || h[i].At > v.now {
			continue
		}
		if v.vs.Current(h[i]) {
			ids = append(ids, h[i].ID)
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	return ids
}

// NextExpiry returns the soonest ExpiresAt in the index, and false if
// none. Read-only.
func (vs *State) NextExpiry() (int64, bool) {
	e := &vs.exp
	if e.live == 0 || len(e.heap) == 0 {
		return 0, false
	}
	return e.heap[0].At, true
}
