package cairn

// This file holds time and expiry: the times every item keeps, and the
// sweeper that removes expired items through the write path (the expiry
// index, and what readers skip, are package versions').

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/cairndb/cairn/internal/versions"
	"github.com/cairndb/cairn/vector"
)

// Times are kept as Unix nanoseconds: the range an int64 holds, years
// 1678 to 2262, less its least value, noTime, which stands for none (the
// zero time.Time, an ExpiresAt of never, a time a file written before
// times were kept lacks). 0 is the Unix epoch, a time like any other.
const noTime = versions.None

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
//
// In a collection that keeps history, it then lets go of the versions
// the [HistoryPolicy] no longer keeps.
func (c *Collection) RemoveExpired(ctx context.Context) (int, error) {
	if err := c.writeErr(); err != nil {
		return 0, err
	}
	now := c.now()
	n, err := c.removeExpired(ctx, now)
	if err == nil {
		_, err = c.trimHistory(ctx, now)
		if err != nil {
			err = fmt.Errorf("cairn: remove expired: history: %w", err)
		}
	}
	return n, err
}

func (c *Collection) removeExpired(ctx context.Context, now int64) (int, error) {
	if err := c.markExpired(ctx, now); err != nil {
		return 0, err
	}
	// When most of a graph has expired, build the rest anew rather than
	// unlink the expired nodes one by one; if that fails, unlink them.
	_, _ = c.rebuildForSweep(ctx)
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

// markExpired marks every version expired at now (catalog.markExpired),
// a few thousand under each hold of the lock, so that readers see them no
// more by a bit test.
func (c *Collection) markExpired(ctx context.Context, now int64) error {
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cairn: remove expired: %w", err)
		}
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			return c.err
		}
		more = c.cat.markExpired(now, markStep)
		c.mu.Unlock()
	}
	return nil
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
	var (
		vs    *versions.State  // the state the batch was taken from, even if the collection closes
		taken []versions.Entry // taken from the marked, counted as sweeping
		found []*record
	)
	w := newWrite("remove expired", nil, now)
	find := func() []*record { // under mu, perhaps more than once
		start := time.Now()
		defer func() { held += time.Since(start) }()
		if taken == nil {
			vs = c.cat.ver
			taken, more = vs.TakeMarked(batch)
			found = make([]*record, len(taken))
		}
		for i, x := range taken {
			// Still published: a write since may have replaced or
			// deleted it.
			if vs.Current(x) {
				found[i] = c.cat.recs.get(x.ID)
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
	w.published = func() { vs.Swept(len(taken)) } // under mu
	w.timed = true
	c.wmu.RLock()
	err = c.run(ctx, w, func() error { return c.reserve(ctx, w, find, claim) })
	c.wmu.RUnlock()
	if err != nil {
		c.mu.Lock()
		if taken != nil {
			vs.Unswept(taken) // still marked: for the next sweep
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
// then, it builds the graph of the rest first. In a read-only store it
// only marks the expired items, in memory (the file is not written).
func (c *Collection) sweeper(ctx context.Context, wake <-chan struct{}) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	first := c.firstSwept
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-timer.C:
		}
		var n int
		var err error
		if c.db.readOnly {
			err = c.markExpired(ctx, c.now())
		} else {
			n, err = c.RemoveExpired(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if h := c.db.sweptHook; h != nil {
			h(c.name, n, err)
		}
		if first != nil {
			close(first)
			first = nil
		}
		wait := maxSweepWait
		c.mu.RLock()
		at, ok := c.cat.ver.NextExpiry()
		c.mu.RUnlock()
		if ok {
			if !c.db.readOnly {
				// Most of a graph about to expire together: build the
				// rest now, for the sweep at at to install.
				c.buildAhead(ctx, at)
			}
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
	c.firstSwept = make(chan struct{})
	if !c.db.noSweeper {
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
