package cairn

// This file holds history: with CollectionConfig.KeepHistory, every write
// records, in its own transaction, what it changes each of its ids from
// (the version it replaces or deletes, or none). History reads an item's
// versions, AsOf a collection as it was, and Restore puts it back. The
// states are kept by the backend (pastStore), which trims them by the
// policy's age and count when the sweeper runs.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/vector"
)

// ErrNoHistory is returned (wrapped) by the history calls of a collection
// created without [CollectionConfig.KeepHistory].
var ErrNoHistory = errors.New("cairn: the collection keeps no history")

// ErrBeforeHistory is returned (wrapped) by [Collection.AsOf] and
// [Collection.Restore] for a time before the collection's history: before
// it began, or before versions its policy has since let go.
var ErrBeforeHistory = errors.New("cairn: the history does not reach that time")

// HistoryPolicy is how much history a collection keeps (see
// [CollectionConfig.KeepHistory]). The zero policy keeps every version
// for ever.
//
// It is a plain value: a collection keeps a copy of it.
type HistoryPolicy struct {
	// For is how long a version is kept once a write has replaced or
	// deleted it; 0 for no limit by age.
	For time.Duration
	// Versions is how many earlier versions of each id are kept (a
	// deletion, and the absence of an id before its first write, count
	// as versions); 0 for no limit by count.
	Versions int
}

// Version is one state of an id over a span of time: the item it held
// from From until Until, or none (Absent).
//
// It is a plain value, owned by the caller.
type Version struct {
	// Item is the item as it was, with its embedding as stored; only ID
	// is set when Absent.
	Item Item
	// Absent says the id held no item: before its first write, or after
	// a delete.
	Absent bool
	// From is when the version was written; zero when the history does
	// not say (it began, or was trimmed, later).
	From time.Time
	// Until is when a write replaced or deleted it; zero for the
	// collection's current version.
	Until time.Time
}

// prior is what a write changes one key from: the published version was
// (nil: the key had none), until the write's time.
type prior struct {
	key   string
	was   *record
	until int64
}

// pastState is one kept state of a key: the row it held (id 0: none)
// until until.
type pastState struct {
	until int64
	row   row
}

// pastStore keeps a collection's history.
type pastStore interface {
	// start records that the history begins at t, unless it has begun.
	start(ctx context.Context, t int64) error
	// since is the earliest time whose state the history holds whole,
	// or an error wrapping vector.ErrNotFound if it has not begun.
	since(ctx context.Context) (int64, error)
	// states returns the kept states of key, oldest first, with their
	// vectors in their stored form (as Get gives them).
	states(ctx context.Context, key string) ([]pastState, error)
	// statesAt calls fn with the state at t of each key a write has
	// changed since t, with its vector as written, for a write to take
	// again.
	statesAt(ctx context.Context, t int64, fn func(pastState) error) error
	// lastWrite is the time of the latest write the history recorded,
	// kept or trimmed since, or an error wrapping vector.ErrNotFound if
	// it has not begun.
	lastWrite(ctx context.Context) (int64, error)
	// trim removes the states that ended before before, and all but the
	// keep latest of each key (0: no limit), and returns how many.
	trim(ctx context.Context, before int64, keep int) (int, error)
}

// priors returns what w changes its keys from, until w.now. Step 2 has
// found them (w.replaces, w.deletes).
func (w *write) priors() []prior {
	ps := make([]prior, 0, len(w.rows)+len(w.deletes))
	for i := range w.rows {
		ps = append(ps, prior{key: w.rows[i].key, was: w.replaces[i], until: w.now})
	}
	for _, r := range w.deletes {
		ps = append(ps, prior{key: r.key, was: r, until: w.now})
	}
	return ps
}

// keepsHistory reports whether the collection keeps history.
func (c *Collection) keepsHistory() bool { return c.cfg.KeepHistory != nil }

// startHistory begins the history of a collection that keeps one, at
// its first load (or at its creation): a history that has not begun
// begins now. A read-only store, which cannot record that, begins it now
// in memory only; so does a store whose disk refuses to record it (full,
// failing), and its next load of the collection records it. The
// collection or tenant is in the file by then: failing its creation or
// load for this would leave it there all the same, as the drop that
// undoes a creation meets the same disk.
func (c *Collection) startHistory(ctx context.Context) error {
	if !c.keepsHistory() {
		return nil
	}
	past := c.be.past()
	_, err := past.since(ctx)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, vector.ErrNotFound):
		return err
	case c.db.readOnly:
		c.historyFrom.Store(c.now())
		return nil
	}
	now := c.now()
	if err := past.start(ctx, now); err != nil {
		if errors.Is(err, vector.ErrClosed) {
			return err
		}
		c.historyFrom.Store(now)
	}
	return nil
}

// stampAfterHistory makes the writes of a collection just loaded be
// timed after the latest write its history recorded (see stamp), as they
// are within a session, however the clock stands: a Restore's Undo, a
// nanosecond before it, must not reach back before a write that came
// before it. c is not yet in use.
func (c *Collection) stampAfterHistory(ctx context.Context) error {
	if !c.keepsHistory() {
		return nil
	}
	t, err := c.be.past().lastWrite(ctx)
	switch {
	case errors.Is(err, vector.ErrNotFound):
		return nil // not begun
	case err != nil:
		return err
	}
	c.stamped = max(c.stamped, t)
	return nil
}

// historyErr checks that the collection keeps a history reaching t,
// which must not be after now.
func (c *Collection) historyErr(ctx context.Context, op string, t, now int64) error {
	if err := c.closedErr(); err != nil {
		return err
	}
	if !c.keepsHistory() {
		return fmt.Errorf("cairn: %s: %w", op, ErrNoHistory)
	}
	if t > now {
		// A write is stamped after the one before it even when the clock
		// has not moved (stamp): the times the store gives out (a
		// version's From, Restored.Undo) may be ahead of the clock, and
		// are not in the future.
		c.mu.RLock()
		last := c.stamped
		c.mu.RUnlock()
		if t > last {
			return fmt.Errorf("cairn: %s: %w: %v is in the future (now %v)", op, vector.ErrInvalidOptions, timeOf(t), timeOf(now))
		}
	}
	since, err := c.be.past().since(ctx)
	if errors.Is(err, vector.ErrNotFound) && (c.db.readOnly || c.historyFrom.Load() != 0) {
		since, err = c.historyFrom.Load(), nil
	}
	if err != nil {
		return fmt.Errorf("cairn: %s: %w", op, c.orClosed(err))
	}
	if t < since {
		return fmt.Errorf("cairn: %s: %w: it begins at %v, after %v", op, ErrBeforeHistory, timeOf(since), timeOf(t))
	}
	return nil
}

// History returns the versions of the item id that the collection's
// history keeps, newest first: the current one (or, if id is deleted,
// its absence), then each that a write replaced or deleted, back to its
// absence before its first write, unless the policy has let go of the
// oldest. It returns an error wrapping [ErrNoHistory] if the collection
// keeps none, and [vector.ErrNotFound] if the history holds no version of
// id. An expired version is returned like any other (its ExpiresAt says
// so). A write in flight on id is waited for.
func (c *Collection) History(ctx context.Context, id string) ([]Version, error) {
	if err := c.closedErr(); err != nil {
		return nil, err // deleted or closed, as AsOf and Restore say
	}
	if !c.keepsHistory() {
		return nil, fmt.Errorf("cairn: history %q: %w", id, ErrNoHistory)
	}
	var (
		states []pastState
		cur    *record
		vec    []float32
	)
	err := c.settled(ctx, id, func() error {
		var err error
		states, err = c.be.past().states(ctx, id)
		return c.orClosed(err)
	}, func(r *record) error {
		cur = r
		if r == nil {
			return nil
		}
		v, err := c.st.Get(r.id)
		vec = slices.Clone(v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cairn: history %q: %w", id, err)
	}
	if len(states) == 0 && cur == nil {
		return nil, fmt.Errorf("cairn: history %q: %w", id, vector.ErrNotFound)
	}
	out := make([]Version, 0, len(states)+1)
	from := int64(noTime)
	for _, s := range states {
		v := Version{Absent: s.row.id == 0, From: timeOf(from), Until: timeOf(s.until)}
		if v.Absent {
			v.Item = Item{ID: id}
		} else {
			v.Item = s.row.item()
		}
		out, from = append(out, v), s.until
	}
	now := Version{Absent: cur == nil, From: timeOf(from), Item: Item{ID: id}}
	if cur != nil {
		now.Item = cur.item(vec)
	}
	out = append(out, now)
	slices.Reverse(out)
	return out, nil
}

// settled runs past, then current with the published record of key (nil
// for none), at a moment when no write of key is in flight and none has
// happened between the two, so that they agree; it waits for writes in
// flight and runs them again if one slipped in.
func (c *Collection) settled(ctx context.Context, key string, past func() error, current func(*record) error) error {
	lookup := func() (*record, *write, error) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		if c.err != nil {
			return nil, nil, c.err
		}
		r := c.cat.lookup(key)
		if r == nil {
			return nil, nil, nil
		}
		return r, r.w, nil
	}
	for {
		r, busy, err := lookup()
		if err == nil && busy == nil {
			err = past()
		}
		if err != nil {
			return err
		}
		if busy == nil {
			c.mu.RLock()
			r2 := c.cat.lookup(key)
			if r2 == r && (r == nil || r.w == nil) {
				err := current(r)
				c.mu.RUnlock()
				return err
			}
			if r2 != nil {
				busy = r2.w
			}
			c.mu.RUnlock()
		}
		if busy != nil {
			select {
			case <-busy.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// stateAt returns the state at t of every id (the items then, with their
// embeddings), for AsOf and Restore: changed holds the ids a write has
// changed since t, with their state at t (row id 0: none); the others are
// as the collection holds them now, in current. Writes are held off while
// it reads, so that the history and the items agree.
func (c *Collection) stateAt(ctx context.Context, t int64, withCurrent bool) (changed map[string]pastState, current []Item, err error) {
	c.wmu.Lock() // no write in flight: every one recorded is published
	defer c.wmu.Unlock()
	changed = make(map[string]pastState)
	err = c.be.past().statesAt(ctx, t, func(s pastState) error {
		changed[s.row.key] = s
		return nil
	})
	if err != nil {
		return nil, nil, c.orClosed(err)
	}
	if !withCurrent {
		return changed, nil, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, nil, c.err
	}
	for _, r := range c.cat.live {
		if _, ok := changed[r.key]; ok {
			continue
		}
		v, err := c.st.Get(r.id)
		if err != nil {
			return nil, nil, err
		}
		current = append(current, r.item(slices.Clone(v)))
	}
	return changed, current, nil
}

// aliveAt reports whether an item that expires at expires (noTime: never)
// is visible at t.
func aliveAt(expires, t int64) bool { return expires == noTime || expires > t }

// Snapshot is a collection as it was at a past time, read-only, made by
// [Collection.AsOf]: a copy in memory, searched exactly, whose reads see
// the items then, expired as of then. Close it to free its memory. A
// Snapshot is safe for concurrent use by multiple goroutines.
type Snapshot struct {
	at time.Time
	db *DB
	c  *Collection
}

// AsOf returns the collection as it was at t, which must be neither in
// the future nor before its history (an error wrapping
// [ErrBeforeHistory]); it returns an error wrapping [ErrNoHistory] if the
// collection keeps none. The state at t is that of the writes whose
// time (see [Item]) is at or before t. The snapshot is an exact (Flat)
// copy in memory, made while writes to the collection wait: it costs
// about what a Flat collection of its items does, and as long to make
// as reading them.
func (c *Collection) AsOf(ctx context.Context, t time.Time) (*Snapshot, error) {
	if err := checkTime("time", t); err != nil {
		return nil, fmt.Errorf("cairn: as of: %w", err)
	}
	at := nanos(t)
	if err := c.historyErr(ctx, "as of", at, c.now()); err != nil {
		return nil, err
	}
	changed, items, err := c.stateAt(ctx, at, true)
	if err != nil {
		return nil, fmt.Errorf("cairn: as of %v: %w", t, err)
	}
	kept := items[:0]
	for _, it := range items {
		if aliveAt(nanos(it.ExpiresAt), at) {
			kept = append(kept, it)
		}
	}
	items = kept
	for _, s := range changed {
		if s.row.id != 0 && aliveAt(s.row.expires, at) {
			items = append(items, s.row.item())
		}
	}
	db := OpenMemory(&Options{Embedder: c.db.emb})
	db.clock = func() time.Time { return t }
	db.noSweeper = true
	sc, err := db.CreateCollection(ctx, c.name, CollectionConfig{Dim: c.cfg.Dim, Metric: c.cfg.Metric, Index: Flat})
	for len(items) > 0 && err == nil {
		n := min(len(items), 4096)
		err = sc.Add(ctx, items[:n]...)
		items = items[n:]
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cairn: as of %v: %w", t, err)
	}
	db.readOnly = true
	return &Snapshot{at: t, db: db, c: sc}, nil
}

// At returns the time the snapshot shows.
func (s *Snapshot) At() time.Time { return s.at }

// Count returns how many items the collection held at the snapshot's
// time.
func (s *Snapshot) Count(ctx context.Context) (int, error) { return s.c.Count(ctx) }

// Get is [Collection.Get] as of the snapshot's time.
func (s *Snapshot) Get(ctx context.Context, ids ...string) ([]Item, error) {
	return s.c.Get(ctx, ids...)
}

// Find is [Collection.Find] as of the snapshot's time.
func (s *Snapshot) Find(ctx context.Context, f *Filter, limit int) ([]Item, error) {
	return s.c.Find(ctx, f, limit)
}

// Query is [Collection.Query] as of the snapshot's time, exact.
func (s *Snapshot) Query(ctx context.Context, embedding []float32, k int, o *QueryOptions) ([]Result, error) {
	return s.c.Query(ctx, embedding, k, o)
}

// QueryText is [Collection.QueryText] as of the snapshot's time, exact.
func (s *Snapshot) QueryText(ctx context.Context, text string, k int, o *QueryOptions) ([]Result, error) {
	return s.c.QueryText(ctx, text, k, o)
}

// Close frees the snapshot. Later calls return an error.
func (s *Snapshot) Close() error { return s.db.Close() }

// RestoreOptions narrow and rehearse a [Collection.Restore].
//
// Restore only reads them, so one value may serve concurrent calls.
type RestoreOptions struct {
	// IDs, if not empty, restores only these ids; others stay as they are.
	IDs []string
	// DryRun reports what the restore would change and changes nothing.
	DryRun bool
}

// Restored reports what a [Collection.Restore] changed (or, on a dry run,
// would change).
//
// It is a plain value, owned by the caller.
type Restored struct {
	// Put are the ids written back as they were (sorted).
	Put []string
	// Deleted are the ids deleted, which held no item then (sorted).
	Deleted []string
	// Undo is the time to restore to in order to undo this restore; zero
	// on a dry run or when nothing changed.
	Undo time.Time
}

// Restore puts the collection back as it was at t, in one write: every id
// that a write has changed since t is written back as it was then (text,
// metadata, embedding and times), or deleted if it held no item then.
// The result is what the collection would hold now had no write happened
// after t: an item of then whose ExpiresAt has passed since is not
// brought back. Ids not changed since t are not touched, nor are those
// changed and changed back (the same text, metadata, times and
// embedding: a second restore to t changes nothing). The restore is
// itself a write, kept in the history, so it can be undone by restoring
// to Restored.Undo. Writes that run during a restore come before or after
// it, id by id.
//
// It returns an error wrapping [ErrNoHistory] if the collection keeps no
// history, [ErrBeforeHistory] for a time before it, and
// [vector.ErrInvalidOptions] for a time in the future.
func (c *Collection) Restore(ctx context.Context, t time.Time, o *RestoreOptions) (Restored, error) {
	if o == nil {
		o = &RestoreOptions{}
	}
	if err := checkTime("time", t); err != nil {
		return Restored{}, fmt.Errorf("cairn: restore: %w", err)
	}
	check := c.writeErr // a rehearsal only reads: it may run on a read-only store
	if o.DryRun {
		check = c.closedErr
	}
	if err := check(); err != nil {
		return Restored{}, err
	}
	at, now := nanos(t), c.now()
	if err := c.historyErr(ctx, "restore", at, now); err != nil {
		return Restored{}, err
	}
	changed, _, err := c.stateAt(ctx, at, false)
	if err != nil {
		return Restored{}, fmt.Errorf("cairn: restore to %v: %w", t, err)
	}
	if len(o.IDs) > 0 {
		chosen := make(map[string]pastState, len(o.IDs))
		for _, id := range o.IDs {
			if s, ok := changed[id]; ok {
				chosen[id] = s
			}
		}
		changed = chosen
	}
	var (
		res   Restored
		items []Item
		gone  []string
	)
	present := func(key string) bool {
		c.mu.RLock()
		defer c.mu.RUnlock()
		r := c.cat.lookup(key)
		return r != nil && c.view(now).Allow(r.id)
	}
	for key, s := range changed {
		if s.row.id != 0 && aliveAt(s.row.expires, now) {
			if c.holdsRow(key, &s.row, now) {
				continue // changed back since
			}
			items = append(items, s.row.item())
			res.Put = append(res.Put, key)
		} else if present(key) {
			gone = append(gone, key)
		}
	}
	slices.Sort(res.Put)
	slices.SortFunc(items, func(a, b Item) int { return strings.Compare(a.ID, b.ID) })
	slices.Sort(gone)
	res.Deleted = gone
	if o.DryRun || (len(items) == 0 && len(gone) == 0) {
		return res, nil
	}
	w, err := c.restoreWrite(ctx, items, gone, now)
	if err != nil {
		return Restored{}, err
	}
	res.Deleted = res.Deleted[:0]
	for _, r := range w.deletes {
		res.Deleted = append(res.Deleted, r.key)
	}
	slices.Sort(res.Deleted)
	res.Undo = timeOf(w.now - 1)
	return res, nil
}

// holdsRow reports whether key's item at now is the one row holds: the
// same text, metadata, times and embedding (as the store keeps it).
func (c *Collection) holdsRow(key string, row *row, now int64) bool {
	c.mu.RLock()
	r := c.cat.lookup(key)
	same := r != nil && r.w == nil && c.view(now).Allow(r.id) && r.text == row.text && slices.Equal(r.md, row.md) &&
		r.created == row.created && r.updated == row.updated && r.expires == row.expires
	c.mu.RUnlock()
	if !same {
		return false
	}
	v, err := c.st.Get(r.id)
	if err != nil {
		return false
	}
	want, err := vector.Prepare(row.vec, c.cfg.Dim, c.cfg.Metric)
	return err == nil && slices.Equal(v, want)
}

// restoreWrite writes items back, with their times as given, and deletes
// those of gone that are still present, in one write.
func (c *Collection) restoreWrite(ctx context.Context, items []Item, gone []string, now int64) (*write, error) {
	rows, err := c.prepare(ctx, "restore", items, now)
	if err != nil {
		return nil, err
	}
	w := newWrite("restore", rows, now)
	w.keepTimes, w.own = true, true
	c.wmu.RLock()
	err = c.run(ctx, w, func() error {
		if err := c.stageRows(w, items); err != nil {
			return err
		}
		n := len(w.vers)
		found := make([]*record, n+len(gone))
		find := func() []*record {
			view := c.view(w.now)
			for i := range w.vers {
				found[i] = c.cat.lookup(w.vers[i].key)
			}
			for i, k := range gone {
				r := c.cat.lookup(k)
				if r != nil && r.w == nil && !view.Allow(r.id) {
					r = nil // expired: left to the sweeper
				}
				found[n+i] = r
			}
			return found
		}
		return c.reserve(ctx, w, find, func(found []*record) error {
			if err := c.retime(w, items); err != nil {
				return err
			}
			if err := c.claimRows(w, found[:n], true); err != nil {
				return err
			}
			var present []*record
			for _, r := range found[n:] {
				if r != nil {
					present = append(present, r)
				}
			}
			c.claimDeletes(w, present)
			return nil
		})
	})
	c.wmu.RUnlock()
	if err != nil {
		return nil, err
	}
	return w, nil
}

// trimHistory lets go of what the policy no longer keeps; the sweeper
// calls it. A policy with a count trims only after writes.
func (c *Collection) trimHistory(ctx context.Context, now int64) (int, error) {
	h := c.cfg.KeepHistory
	if h == nil || (h.For == 0 && h.Versions == 0) {
		return 0, nil
	}
	before := int64(math.MinInt64)
	if h.For > 0 {
		before = now - int64(h.For)
	}
	keep := h.Versions
	if keep > 0 && c.pastWrites.Swap(0) == 0 {
		keep = 0
	}
	if before == math.MinInt64 && keep == 0 {
		return 0, nil
	}
	n, err := c.be.past().trim(ctx, before, keep)
	if err != nil && keep > 0 {
		c.pastWrites.Add(1) // try again at the next sweep
	}
	return n, err
}
