package cairn

// This file holds time and expiry: the times every item keeps, the
// expiry index of the catalog, what readers skip, and the sweeper that
// removes expired items through the write path.

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cairndb/cairn/vector"
)

// Times are kept as Unix nanoseconds: the range an int64 holds, years
// 1678 to 2262, less its least value, noTime, which stands for none (the
// zero time.Time, an ExpiresAt of never, a time a file written before
// times were kept lacks). 0 is the Unix epoch, a time like any other.
const noTime = math.MinInt64

var (
	minTime = time.Unix(0, noTime+1)
	maxTime = time.Unix(0, math.MaxInt64)
)

// nanos returns t as Unix nanoseconds, noTime for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return t.UnixNano()
}

// timeOf returns the time of Unix nanoseconds ns, in UTC; the zero time
// for noTime.
func timeOf(ns int64) time.Time {
	if ns == noTime {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// checkTime reports a time that nanos cannot hold.
func checkTime(name string, t time.Time) error {
	if !t.IsZero() && (t.Before(minTime) || t.After(maxTime)) {
		return fmt.Errorf("%w: %s %v is outside the years 1678 to 2262", vector.ErrInvalidOptions, name, t)
	}
	return nil
}

// itemTimes checks the times given with it, written at now (Unix
// nanoseconds) into a collection with time-to-live ttl, and returns the
// version's times: CreatedAt and UpdatedAt default to now (an Upsert
// later keeps the replaced item's CreatedAt), ExpiresAt to now + ttl if
// ttl is set.
func itemTimes(it *Item, now int64, ttl time.Duration) (created, updated, expires int64, err error) {
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"CreatedAt", it.CreatedAt}, {"UpdatedAt", it.UpdatedAt}, {"ExpiresAt", it.ExpiresAt}} {
		if err := checkTime(t.name, t.t); err != nil {
			return 0, 0, 0, err
		}
	}
	created, updated, expires = nanos(it.CreatedAt), nanos(it.UpdatedAt), nanos(it.ExpiresAt)
	if created == noTime {
		created = now
	}
	if updated == noTime {
		updated = now
	}
	if updated < created {
		return 0, 0, 0, fmt.Errorf("%w: UpdatedAt %v is before CreatedAt %v", vector.ErrInvalidOptions, timeOf(updated), timeOf(created))
	}
	switch {
	case expires != noTime && expires <= now:
		return 0, 0, 0, fmt.Errorf("%w: ExpiresAt %v is not in the future (now %v)", vector.ErrInvalidOptions, timeOf(expires), timeOf(now))
	case expires == noTime && ttl > 0:
		expires = now + int64(ttl)
		if expires < now { // overflow: never, in practice
			expires = math.MaxInt64
		}
	}
	return created, updated, expires, nil
}

// expiredAt reports whether r has expired at now: its ExpiresAt has come.
func (r *record) expiredAt(now int64) bool { return r.expires != noTime && r.expires <= now }

// expiryEntry is one version with an ExpiresAt, in the expiry index.
type expiryEntry struct {
	at int64
	id vector.ID
}

// expiryHeap orders the versions with an ExpiresAt by it, soonest first.
// A version leaves it only when the sweeper pops it: a version replaced
// or deleted before it expires stays as a stale entry (its id is in no
// record any more, ids are never reused) until its time comes.
type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// expiry is the catalog's expiry index.
//
// A sweep first marks the expired versions: it takes them from the heap
// into marked and clears their bits in the catalog's visible set, so that
// readers skip them by a bit test; then it deletes them, a batch at a
// time (sweeping counts those of batches in flight). Readers check each
// version's ExpiresAt only while the heap holds expired versions not
// marked yet (due).
type expiry struct {
	heap expiryHeap
	// live counts the published versions that have an ExpiresAt.
	live int
	// marked are expired versions taken from the heap, hidden from
	// readers by the visible set, waiting for a batch to delete them.
	marked []expiryEntry
	// sweeping counts the marked versions of the batches in flight.
	sweeping int
}

// add enters a published version that has an ExpiresAt.
func (e *expiry) add(r *record) {
	heap.Push(&e.heap, expiryEntry{r.expires, r.id})
	e.live++
}

// due reports whether a published version may have expired at now
// without being marked, so that readers must check each version's
// ExpiresAt.
func (e *expiry) due(now int64) bool {
	return e.live > 0 && len(e.heap) > 0 && e.heap[0].at <= now
}

// hiding reports whether marked versions are still published: readers
// must then leave out the versions the visible set does not hold.
func (e *expiry) hiding() bool { return len(e.marked) > 0 || e.sweeping > 0 }

// expiredMay reports whether a published version may be expired at now,
// marked or not: readers that look at records check each.
func (e *expiry) expiredMay(now int64) bool { return e.due(now) || e.hiding() }

// markDue moves up to n versions expired at now from the heap to marked,
// hiding them from readers, and reports whether the heap holds more.
// Stale entries (versions replaced or deleted since) are dropped. mu is
// held.
func (cat *catalog) markDue(now int64, n int) (more bool) {
	e := &cat.exp
	for ; n > 0 && len(e.heap) > 0 && e.heap[0].at <= now; n-- {
		x := heap.Pop(&e.heap).(expiryEntry)
		if r := cat.recs.get(x.id); r != nil && r.published() && r.expires == x.at {
			e.marked = append(e.marked, x)
			cat.vis.clear(x.id)
		}
	}
	return len(e.heap) > 0 && e.heap[0].at <= now
}

// expiringBy reports whether at least need published versions have an
// ExpiresAt of at most t, walking only the part of the heap at or before
// t, and no further than the need-th. mu is held.
func (cat *catalog) expiringBy(t int64, need int) bool {
	h, n := cat.exp.heap, 0
	stack := []int{0}
	for len(stack) > 0 && n < need {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h) || h[i].at > t {
			continue
		}
		if r := cat.recs.get(h[i].id); r != nil && r.published() && r.expires == h[i].at {
			n++
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	return n >= need
}

// next returns the soonest ExpiresAt in the index, and false if none.
func (e *expiry) next() (int64, bool) {
	if e.live == 0 || len(e.heap) == 0 {
		return 0, false
	}
	return e.heap[0].at, true
}

// visibleSet holds the ids readers see without looking at their records:
// the published versions, less the marked ones. Ids are issued in
// sequence, so they are a bitmap from 0, grown as they come; an id far
// beyond the others (which only a file written elsewhere can hold) goes
// in a map instead, so the bitmap stays within 64 words per published
// version. It is a vector.Filter, and changes only under the collection's
// exclusive lock.
type visibleSet struct {
	words []uint64
	far   map[vector.ID]struct{}
}

// set adds id; n is the number of published versions.
func (v *visibleSet) set(id vector.ID, n int) {
	w := id / 64
	if w >= vector.ID(len(v.words)) {
		if w >= vector.ID(max(1<<14, 64*(n+1))) {
			if v.far == nil {
				v.far = make(map[vector.ID]struct{})
			}
			v.far[id] = struct{}{}
			return
		}
		v.words = append(v.words, make([]uint64, int(w)+1-len(v.words))...)
		for f := range v.far { // now within the bitmap
			if f/64 < vector.ID(len(v.words)) {
				delete(v.far, f)
				v.words[f/64] |= 1 << (f % 64)
			}
		}
	}
	v.words[w] |= 1 << (id % 64)
}

func (v *visibleSet) clear(id vector.ID) {
	if w := id / 64; w < vector.ID(len(v.words)) {
		v.words[w] &^= 1 << (id % 64)
	} else {
		delete(v.far, id)
	}
}

// Allow reports whether id is in the set.
func (v *visibleSet) Allow(id vector.ID) bool {
	if w := id / 64; w < vector.ID(len(v.words)) {
		return v.words[w]&(1<<(id%64)) != 0
	}
	_, ok := v.far[id]
	return ok
}

// visibleAt reports whether readers at now see the version id: it is
// published and, if expiry is due, not expired. mu is held.
func (cat *catalog) visibleAt(id vector.ID, now int64) bool {
	r := cat.recs.get(id)
	return r != nil && r.published() && !r.expiredAt(now)
}

// dropExpired removes from ids, published versions, in place, those
// expired at now or marked.
func (cat *catalog) dropExpired(ids []vector.ID, now int64) []vector.ID {
	out := ids[:0]
	for _, id := range ids {
		if cat.vis.Allow(id) && !cat.recs.get(id).expiredAt(now) {
			out = append(out, id)
		}
	}
	return out
}

// matchAt returns the ids of the published versions visible at now that
// f matches (m is f compiled), or of all of them if m is nil, in a new
// slice.
func (cat *catalog) matchAt(f *Filter, m matcher, now int64) []vector.ID {
	due := cat.exp.expiredMay(now)
	if m != nil {
		ids := cat.match(f, m)
		if due {
			ids = cat.dropExpired(ids, now)
		}
		return ids
	}
	ids := make([]vector.ID, 0, len(cat.live))
	for _, r := range cat.live {
		if !due || cat.vis.Allow(r.id) && !r.expiredAt(now) {
			ids = append(ids, r.id)
		}
	}
	return ids
}

// countAt returns the number of published versions not expired at now.
func (cat *catalog) countAt(now int64) int {
	if !cat.exp.expiredMay(now) {
		return len(cat.live)
	}
	n := 0
	for _, r := range cat.live {
		if cat.vis.Allow(r.id) && !r.expiredAt(now) {
			n++
		}
	}
	return n
}

// now returns the store's clock as Unix nanoseconds.
func (c *Collection) now() int64 { return c.db.clock().UnixNano() }

// sweepBatch is the number of expired items one delete of a sweep
// removes from a file: each batch is one write (one transaction), and
// its reserve and publish steps hold the collection's lock for about a
// microsecond per item. In memory, where a batch takes little more than
// those steps, a batch is a quarter of that, so that no query waits long
// behind one.
const (
	sweepBatch       = 1024
	sweepBatchMemory = 256
)

// sweepDuty is the most of its time a sweep holds the collection's lock:
// after each batch it waits (1/sweepDuty − 1) times as long as the batch
// held the lock, so that queries meet the lock held in at most one case
// in forty.
const sweepDuty = 0.025

// markStep is the most expired versions a sweep marks under one hold of
// the collection's lock (a heap pop and a bit each).
const markStep = 2048

// RemoveExpired removes every item whose ExpiresAt has come, in batches
// of a few hundred, each through the write path as a delete (so the
// keyword index, the search graph and the file stay in step), and
// returns how many it removed. Expired items are never returned by any
// read even before they are removed; a background sweeper calls
// RemoveExpired when the next item expires and at open, so calling it
// is needed only to reclaim their space at a moment of one's choosing.
// A sweep that finds nothing expired writes nothing.
// Readers and other writers go on between batches; writes in flight on
// an expired item are waited for. When at least half of an HNSW graph
// has expired, the sweep first builds a new graph of the rest beside it,
// which queries switch to at once (writes go on meanwhile, and those that
// landed are taken into it under a short hold of the write lock), then
// deletes the expired items, which the new graph does not hold. It returns ctx's error, or the
// collection's once closed, with the batches before it done.
func (c *Collection) RemoveExpired(ctx context.Context) (int, error) {
	if err := c.writeErr(); err != nil {
		return 0, err
	}
	now := c.now()
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("cairn: remove expired: %w", err)
		}
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			return 0, c.err
		}
		more = c.cat.markDue(now, markStep)
		c.mu.Unlock()
	}
	// When most of a graph has expired, build the rest anew rather than
	// unlink the expired nodes one by one; if that fails, unlink them.
	_, _ = c.regraph(ctx)
	total := 0
	for {
		n, more, held, err := c.sweepOnce(ctx, now)
		total += n
		if err != nil || !more {
			return total, err
		}
		pause := time.NewTimer(time.Duration(float64(held) * (1/sweepDuty - 1)))
		select {
		case <-ctx.Done():
			pause.Stop()
			return total, fmt.Errorf("cairn: remove expired: %w", ctx.Err())
		case <-pause.C:
		}
	}
}

// sweepOnce deletes one batch of marked versions; more reports whether
// more are marked, held how long the batch held the collection's lock.
// It takes the lock three times, as any delete does: to take the batch
// and claim it, to publish its removal, and after the evict.
func (c *Collection) sweepOnce(ctx context.Context, now int64) (removed int, more bool, held time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return 0, false, 0, fmt.Errorf("cairn: remove expired: %w", err)
	}
	batch := sweepBatch
	if c.be.volatile() {
		batch = sweepBatchMemory
	}
	e := &c.cat.exp
	var (
		taken []expiryEntry // taken from marked, while sweeping counts them
		found []*record
	)
	w := newWrite("remove expired", nil)
	find := func() []*record { // under mu, perhaps more than once
		start := time.Now()
		defer func() { held += time.Since(start) }()
		if taken == nil {
			n := min(len(e.marked), batch)
			taken = slices.Clone(e.marked[len(e.marked)-n:])
			e.marked = e.marked[:len(e.marked)-n]
			more = len(e.marked) > 0
			e.sweeping += len(taken)
			found = make([]*record, len(taken))
		}
		for i, x := range taken {
			// Still published: a write since may have replaced or
			// deleted it.
			if r := c.cat.recs.get(x.id); r != nil && r.published() && r.expires == x.at {
				found[i] = r
			} else {
				found[i] = nil
			}
		}
		return found
	}
	claim := func(found []*record) error { // under mu
		start := time.Now()
		defer func() { held += time.Since(start) }()
		present := found[:0:0]
		for _, r := range found {
			if r != nil {
				present = append(present, r)
			}
		}
		c.claimDeletes(w, present)
		return nil
	}
	w.published = func() { e.sweeping -= len(taken) } // under mu
	w.timed = true
	c.wmu.RLock()
	err = c.run(ctx, w, func() error { return c.reserve(ctx, w.op, find, claim) })
	c.wmu.RUnlock()
	if err != nil {
		c.mu.Lock()
		if taken != nil {
			e.sweeping -= len(taken)
			if c.err == nil { // still marked: for the next sweep
				for _, x := range taken {
					if r := c.cat.recs.get(x.id); r != nil && r.published() && r.expires == x.at {
						e.marked = append(e.marked, x)
					}
				}
			}
		}
		c.mu.Unlock()
		return 0, false, held, err
	}
	return len(w.deletes), more, held + w.held, nil
}

// maxSweepWait bounds the sweeper's sleep, so that a clock that jumps
// (or a test's clock) is looked at again.
const maxSweepWait = time.Minute

// sweeper removes expired items in the background until ctx ends: it
// sleeps until the soonest ExpiresAt (or until a write wakes it with an
// earlier one), then calls RemoveExpired. Its first sweep is at once, for
// the items that expired while the collection was not loaded. Before it
// sleeps, it looks ahead (buildAhead): if most of an HNSW graph expires
// then, it builds the graph of the rest first.
func (c *Collection) sweeper(ctx context.Context, wake <-chan struct{}) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-timer.C:
		}
		n, err := c.RemoveExpired(ctx)
		if ctx.Err() != nil {
			return
		}
		if h := c.db.sweptHook; h != nil {
			h(c.name, n, err)
		}
		wait := maxSweepWait
		c.mu.RLock()
		at, ok := c.cat.exp.next()
		c.mu.RUnlock()
		if ok {
			// Most of a graph about to expire together: build the rest
			// now, for the sweep at at to install.
			c.buildAhead(ctx, at)
			wait = min(wait, max(time.Duration(at-c.now()), 0))
		}
		if err != nil {
			wait = max(wait, time.Second) // a failing store: try again later
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// startSweeper starts the collection's sweeper.
func (c *Collection) startSweeper() {
	ctx, cancel := context.WithCancel(context.Background())
	c.wake, c.stopSweep, c.bg = make(chan struct{}, 1), cancel, ctx
	if !c.db.noSweeper && !c.db.readOnly {
		go c.sweeper(ctx, c.wake)
	}
}

// wakeSweeper tells the sweeper to look again (a write published an
// ExpiresAt, perhaps sooner than it sleeps for).
func (c *Collection) wakeSweeper() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
