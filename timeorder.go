package cairn

// This file holds the catalog's order of the published records by
// UpdatedAt, which a recency query walks from the newest (recency.go).

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// timeOrder lists published records by UpdatedAt, oldest first (a record
// without one as if it were the newest, as recency counts it). Writers
// append under the collection's lock, held exclusively: most writes are
// stamped now, which keeps the list in order. A query, holding the lock
// shared, takes ordered, which sorts the list again when writes left it
// out of order or mostly retired. The lists queries walk are never
// changed in place: a sort builds a new one.
type timeOrder struct {
	mu      sync.Mutex // serialises the queries that sort
	recs    []*record
	sorted  int // recs[:sorted] is in order
	retired int // records of recs retired since the last sort
}

// timeKey is the key records are ordered by.
func timeKey(r *record) int64 {
	if r.updated == noTime {
		return math.MaxInt64
	}
	return r.updated
}

func cmpTime(a, b *record) int {
	return cmp.Or(cmp.Compare(timeKey(a), timeKey(b)), cmp.Compare(a.id, b.id))
}

// add appends a record being published; the collection's lock is held
// exclusively.
func (t *timeOrder) add(r *record) {
	if t.sorted == len(t.recs) && (t.sorted == 0 || cmpTime(t.recs[t.sorted-1], r) <= 0) {
		t.sorted++
	}
	t.recs = append(t.recs, r)
}

// retire counts a record retired; the collection's lock is held
// exclusively.
func (t *timeOrder) retire() { t.retired++ }

// ordered returns the records in order, oldest first; retired ones may
// be among them (a caller skips those not published). The collection's
// lock is held, shared or exclusively.
func (t *timeOrder) ordered() []*record {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sorted == len(t.recs) && t.retired <= len(t.recs)/2 {
		return t.recs
	}
	out := make([]*record, 0, len(t.recs)-t.retired)
	for _, r := range t.recs {
		if r.published() {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, cmpTime)
	t.recs, t.sorted, t.retired = out, len(out), 0
	return out
}
