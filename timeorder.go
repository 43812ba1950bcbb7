package cairn

// This file holds the catalog's order of the published records by
// UpdatedAt, which a recency query walks from the newest (recency.go).

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
)

// timeOrder lists published records by UpdatedAt, oldest first (a record
// without one as if it were the newest, as recency counts it), with each
// record's time key beside it, so that a walk reads the keys in sequence
// and touches only the records it scores. Writers append under the
// collection's lock, held exclusively: most writes are stamped now, which
// keeps the list in order. A query, holding the lock shared, takes
// ordered, which sorts the list again when writes left it out of order or
// mostly retired, and fills the importances and codes walks read. The
// lists queries walk are never changed in place: a sort builds new ones,
// and appends write past the end a query holds.
type timeOrder struct {
	mu      sync.Mutex // serialises the queries that sort or fill importances and codes
	list    timeList
	sorted  int // list[:sorted] is in order
	retired int // records of the list retired since the last sort
	// imps holds, for a few metadata keys, the importance of each record
	// of the list under that key (Recency.importance), for the records
	// of list that queries have asked for; a sort drops them.
	imps map[string][]float64
	// codes holds int8 codes of the newest records (recentcodes.go), as
	// deep as walks go; a sort starts them again.
	codes recentCodes
	// walked is the most items a walk went through, newest first.
	walked atomic.Int64
}

// timeList is the records in time order and their keys (timeKey).
type timeList struct {
	keys []int64
	recs []*record
}

// maxImportanceKeys bounds how many metadata keys a timeOrder keeps
// importances for; a query on one more starts them again.
const maxImportanceKeys = 4

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
	n := len(t.list.recs)
	if t.sorted == n && (n == 0 || cmpTime(t.list.recs[n-1], r) <= 0) {
		t.sorted++
	}
	r.tpos.Store(int64(n))
	t.list.recs = append(t.list.recs, r)
	t.list.keys = append(t.list.keys, timeKey(r))
}

// retire counts a record retired, and once most of the list is retired
// orders the published records again into new lists, as a query would:
// without recency queries the list would otherwise keep every version
// ever published, and each retired record's text and metadata with it.
// The collection's lock is held exclusively.
func (t *timeOrder) retire() {
	t.retired++
	if t.retired > len(t.list.recs)/2 {
		t.mu.Lock()
		t.sort()
		t.mu.Unlock()
	}
}

// ordered returns the records in order, oldest first, the importance of
// each under r's key (nil for none), and codes of the newest as deep as
// walks go (st holds their vectors); retired records may be among them
// (a caller skips those not published). The collection's lock is held,
// shared or exclusively.
func (t *timeOrder) ordered(ctx context.Context, r *Recency, st vector.Store) (timeList, []float64, recentCodes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.list.recs); t.sorted < n || t.retired > n/2 {
		t.sort()
	}
	t.codes.fill(ctx, t.list, int(t.walked.Load()), st)
	return t.list, t.importances(r), t.codes
}

// noteWalk records that a walk went through n items, newest first.
func (t *timeOrder) noteWalk(n int) {
	for {
		w := t.walked.Load()
		if int64(n) <= w || t.walked.CompareAndSwap(w, int64(n)) {
			return
		}
	}
}

// importances returns the importance of each record of the list under
// r's key, nil for none; t.mu is held.
func (t *timeOrder) importances(r *Recency) []float64 {
	if r.Importance == "" {
		return nil
	}
	imps, ok := t.imps[r.Importance]
	if !ok && len(t.imps) >= maxImportanceKeys {
		clear(t.imps)
	}
	if t.imps == nil {
		t.imps = make(map[string][]float64)
	}
	for _, rec := range t.list.recs[len(imps):] {
		imps = append(imps, r.importance(rec))
	}
	t.imps[r.Importance] = imps
	return imps
}

// sort orders the published records again, into new lists.
func (t *timeOrder) sort() {
	recs := make([]*record, 0, len(t.list.recs)-t.retired)
	for _, r := range t.list.recs {
		if r.published() {
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, cmpTime)
	keys := make([]int64, len(recs))
	for i, r := range recs {
		keys[i] = timeKey(r)
		r.tpos.Store(int64(i))
	}
	t.list, t.sorted, t.retired, t.imps = timeList{keys: keys, recs: recs}, len(recs), 0, nil
	if t.codes.qz != nil {
		t.codes = recentCodes{qz: t.codes.qz, stride: t.codes.stride, from: len(recs)}
	}
}
