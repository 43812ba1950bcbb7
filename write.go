package cairn

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cairndb/cairn/vector"
)

// A write goes through three steps, and holds the collection's lock (mu)
// only in the first and the last, never while the store commits:
//
//  1. Reserve, under mu: wait until no other write has any of its ids in
//     flight, check the ids against the published items (ErrDuplicateID,
//     ErrNotFound), give fresh ids their numbers (entering their keys in
//     the key map at once, so that a second write of the same key finds
//     them) and hold the published ids the write replaces or deletes,
//     keeping a copy of their published version.
//  2. Write, without mu: take the replaced and deleted ids out of the
//     index, write to the store (one transaction, shared with concurrent
//     writers by sqlitestore's group commit) and, once it is durable, put
//     the new vectors in the index.
//  3. Publish, under mu: apply the change to the records and drop the
//     reservation; or, if step 2 failed, put the index back as it was and
//     drop the reservation alone (with the fresh keys).
//
// An id is published when it has a record; a key may map to an id that is
// not published yet, which a write in flight is creating. Readers see only
// published items. While an id is in flight the index and the store may
// already hold its next version, or may have lost it, so readers skip
// whatever the index returns for ids in flight and use the copy kept in
// step 1 instead (see settle): a query or a Get sees each write entirely
// or not at all, and never a write that fails. The copies cost memory: a
// Delete or Upsert of n existing items holds n vectors until it
// publishes.
//
// The bookkeeping of a batch of fresh items is one key-map insertion per
// item: the ids a write creates are consecutive, so its flight records
// them as a range rather than one by one.
//
// A write never waits while it holds a reservation (step 1 reserves all
// its ids at once or none), so writes waiting for each other cannot
// deadlock.
//
// A large Add to memory takes another route to the same end (addAhead):
// it takes its ids and stores its vectors first, and reserves its keys
// on another goroutine meanwhile.

// inflight records the writes between steps 1 and 3. The collection's mu
// guards it.
type inflight struct {
	flights []*flight          // the writes in flight
	pendIDs map[vector.ID]held // published ids that a write in flight replaces or deletes
}

// freshInFlight returns how many ids the writes in flight create. mu is
// held.
func (c *Collection) freshInFlight() int {
	n := 0
	for _, f := range c.flights {
		n += int(f.hi - f.lo)
	}
	return n
}

func newInflight() inflight {
	return inflight{pendIDs: make(map[vector.ID]held)}
}

// flight is one write in progress; done is closed when it has published or
// abandoned its change.
type flight struct {
	done   chan struct{}
	lo, hi vector.ID // the ids it creates, [lo, hi)
	keys   []string  // their keys, in the same order (see keyOf)
}

// keyOf returns the key of id, which the key index holds: the key of its
// record, or of the write in flight that creates it. mu is held.
func (c *Collection) keyOf(id vector.ID) string {
	if r := c.recs.get(id); r != nil {
		return r.key
	}
	for _, f := range c.flights {
		if id >= f.lo && id-f.lo < vector.ID(len(f.keys)) {
			return f.keys[id-f.lo]
		}
	}
	return "" // unreachable: the index holds only published ids and ids in flight
}

// held is a published id reserved by a write in flight, with a copy of its
// published vector (immune to the write) and its record.
type held struct {
	f   *flight
	rec *record
	vec vector.Vector
}

// lockClear returns with mu held once conflict (called under mu) finds no
// write in flight in the way, waiting for each write it finds to finish.
// It fails, without mu, if the collection is closed or ctx ends first.
// The caller holds wmu shared; since a write never waits while it holds a
// reservation, waiting cannot deadlock.
func (c *Collection) lockClear(ctx context.Context, op string, conflict func() *flight) error {
	for {
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			return c.err
		}
		if err := ctx.Err(); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("cairn: %s: %w", op, err)
		}
		f := conflict()
		if f == nil {
			return nil
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return fmt.Errorf("cairn: %s: %w", op, ctx.Err())
		}
	}
}

// flightOf returns the write in flight on id, which is in the key map, or
// nil if id is published and free. mu is held.
func (c *Collection) flightOf(id vector.ID) *flight {
	if h, ok := c.pendIDs[id]; ok {
		return h.f
	}
	if c.recs.get(id) != nil {
		return nil
	}
	for _, f := range c.flights {
		if id >= f.lo && id < f.hi {
			return f
		}
	}
	return nil // unreachable: a key maps only to published ids and to ids in flight
}

// lookupKeys sets found[i] to the id of key(i), for i < n, or to 0 if it
// has none, and returns the first write in flight on one of them (nil if
// none is). mu is held.
func (c *Collection) lookupKeys(n int, key func(int) string, found []vector.ID) *flight {
	for i := range n {
		id, ok := c.keys.get(key(i), c)
		found[i] = id
		if ok {
			if f := c.flightOf(id); f != nil {
				return f
			}
		}
	}
	return nil
}

// hold reserves for flight f, which reserve has started, the published
// ids olds, keeping a copy of the published version of each. mu is held.
// It returns the copies, in the order of olds.
func (c *Collection) hold(f *flight, olds []vector.ID) []held {
	copies := make([]held, len(olds))
	buf := make([]float32, 0, len(olds)*c.cfg.Dim) // one allocation for the batch
	for i, id := range olds {
		h := held{f: f, rec: c.recs.get(id)}
		if v, err := c.st.Get(id); err == nil {
			n := len(buf)
			buf = append(buf, v...)
			h.vec = buf[n:len(buf):len(buf)]
		}
		c.pendIDs[id] = h
		copies[i] = h
	}
	return copies
}

// unflight takes f out of the writes in flight. mu is held.
func (c *Collection) unflight(f *flight) {
	i := slices.Index(c.flights, f)
	last := len(c.flights) - 1
	c.flights[i] = c.flights[last]
	c.flights[last] = nil
	c.flights = c.flights[:last]
}

// release ends flight f, which holds the published ids olds: under mu it
// runs apply, if not nil, then drops the reservation and wakes the writes
// waiting for f.
func (c *Collection) release(f *flight, olds []vector.ID, apply func()) {
	c.mu.Lock()
	if apply != nil {
		apply()
	}
	for _, id := range olds {
		delete(c.pendIDs, id)
	}
	c.unflight(f)
	c.mu.Unlock()
	close(f.done)
}

// publish ends flight f, which holds the published ids olds, with its
// records made the collection's (step 3).
func (c *Collection) publish(f *flight, olds []vector.ID, recs []record) {
	c.release(f, olds, func() {
		for i := range recs {
			c.put(&recs[i])
		}
		c.dirty = true
	})
}

func (c *Collection) write(ctx context.Context, op string, items []Item, replace bool) error {
	rows, meta, err := c.prepare(ctx, op, items, replace)
	if err != nil || len(rows) == 0 {
		return err
	}
	c.wmu.RLock()
	if meta != nil {
		err = c.addAhead(ctx, op, rows, meta)
	} else {
		err = c.writeRows(ctx, op, rows, replace)
	}
	c.wmu.RUnlock()
	if err == nil {
		c.maybeSwitch(ctx)
	}
	return err
}

// writeRows stores rows (ids not yet assigned) in the three steps above;
// wmu is held shared.
func (c *Collection) writeRows(ctx context.Context, op string, rows []row, replace bool) error {
	found := make([]vector.ID, len(rows))
	key := func(i int) string { return rows[i].key }
	if err := c.lockClear(ctx, op, func() *flight { return c.lookupKeys(len(rows), key, found) }); err != nil {
		return err
	}
	// Step 1, under mu: found holds the published id of every key that
	// has one (and none is in flight).
	f, olds, err := c.reserve(op, rows, found, replace)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	copies := c.hold(f, olds)
	idx := c.idx // stable while wmu is held
	c.mu.Unlock()

	// Step 2. The store is written first (it validates every vector, all
	// or nothing), then the index is told; a failure at either step
	// undoes the steps before it.
	abandon := func(err error) error {
		c.release(f, olds, func() { c.forget(rows, f) })
		return err
	}
	if len(olds) == 0 {
		err = c.be.insert(ctx, rows)
	} else {
		if err := untrack(ctx, idx, olds); err != nil {
			return abandon(fmt.Errorf("cairn: %s: %w", op, err))
		}
		err = c.be.upsert(ctx, rows)
	}
	if err != nil {
		if terr := track(context.WithoutCancel(ctx), idx, olds); terr != nil {
			return abandon(fmt.Errorf("cairn: %s: %w (and restoring the index: %v)", op, err, terr))
		}
		return abandon(c.explain(op, rows, err))
	}
	// The rows are durable: finish even if ctx is cancelled now.
	ids := make([]vector.ID, len(rows))
	for i := range rows {
		ids[i] = rows[i].id
	}
	if err := track(context.WithoutCancel(ctx), idx, ids); err != nil {
		return abandon(c.unwrite(ctx, op, idx, rows, f, copies, fmt.Errorf("cairn: %s: indexing: %w", op, err)))
	}

	// Step 3.
	recs := records(rows, nil)
	c.publish(f, olds, recs)
	return nil
}

// addAhead is writeRows for a large Add to memory (see addsAhead),
// with the store's copy of the vectors, the longest part, started first
// and the rest done on another goroutine meanwhile:
//
//   - Under mu, it takes the next len(rows) ids and starts its flight with
//     them and the keys, so that readers skip those ids as they would
//     any write's in flight. Nothing waits for such a flight: its keys
//     are not in the key index yet, and its ids are held by no one else.
//   - It stores the vectors, while the other goroutine waits for the
//     writes in flight on the same keys (as step 1 does), checks and
//     enters the keys, then normalises the metadata and makes the
//     records.
//   - If anything failed, it undoes the rest (the keys entered, the
//     vectors stored) and returns the error that the steps in order
//     would have met first: metadata, then ids, then vectors.
//   - Otherwise it indexes the ids and publishes, as in step 3.
func (c *Collection) addAhead(ctx context.Context, op string, rows []row, meta func() ([]metadata, error)) error {
	keys := make([]string, len(rows))
	for i := range rows {
		keys[i] = rows[i].key
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	f := &flight{done: make(chan struct{}), lo: c.next, hi: c.next + vector.ID(len(rows)), keys: keys}
	c.next = f.hi
	c.flights = append(c.flights, f)
	idx := c.idx // stable while wmu is held
	c.mu.Unlock()
	ids := make([]vector.ID, len(rows))
	for i := range rows {
		rows[i].id = f.lo + vector.ID(i)
		ids[i] = rows[i].id
	}

	var (
		run             sync.WaitGroup
		keyErr, metaErr error
		entered         bool
		recs            []record
	)
	run.Go(func() {
		entered, keyErr = c.enterKeys(ctx, op, rows, f)
		var mds []metadata
		if mds, metaErr = meta(); metaErr == nil && keyErr == nil {
			recs = records(rows, mds)
		}
	})
	err := c.be.insert(ctx, rows)
	run.Wait()
	forget := func() {
		if entered {
			c.forget(rows, f)
		}
	}
	if err == nil && keyErr == nil && metaErr == nil {
		// The rows are durable: finish even if ctx is cancelled now.
		if err := track(context.WithoutCancel(ctx), idx, ids); err != nil {
			err = c.unwrite(ctx, op, idx, rows, f, nil, fmt.Errorf("cairn: %s: indexing: %w", op, err))
			c.release(f, nil, forget)
			return err
		}
		c.publish(f, nil, recs)
		return nil
	}
	var undoErr error
	if err == nil {
		undoErr = c.be.remove(context.WithoutCancel(ctx), ids)
	}
	switch {
	case metaErr != nil:
		err = metaErr
	case keyErr != nil:
		err = keyErr
	default:
		err = c.explain(op, rows, err)
	}
	if undoErr != nil {
		err = fmt.Errorf("%w (and removing the vectors stored meanwhile: %v)", err, undoErr)
	}
	c.release(f, nil, forget)
	return err
}

// enterKeys checks the keys of rows, all fresh, and enters them in the key
// index with the ids f gives them, all or none: it waits for the writes in
// flight on any of them, as step 1 does, and fails if one is in the
// collection already or repeated in rows. It holds mu only while it
// looks and enters, and reports whether it entered the keys.
func (c *Collection) enterKeys(ctx context.Context, op string, rows []row, f *flight) (bool, error) {
	found := make([]vector.ID, len(rows))
	key := func(i int) string { return rows[i].key }
	if err := c.lockClear(ctx, op, func() *flight { return c.lookupKeys(len(rows), key, found) }); err != nil {
		return false, err
	}
	defer c.mu.Unlock()
	for i, id := range found {
		if id != 0 {
			return false, fmt.Errorf("cairn: %s %q: %w", op, rows[i].key, vector.ErrDuplicateID)
		}
	}
	for i := range rows {
		if _, dup := c.keys.add(rows[i].key, rows[i].id, c); dup {
			c.forget(rows[:i], f)
			return false, fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", op, rows[i].key, vector.ErrDuplicateID)
		}
	}
	return true, nil
}

// records returns the records of rows, whose ids are set, with the
// metadata mds if not nil, else their own; one allocation for the batch.
func records(rows []row, mds []metadata) []record {
	recs := make([]record, len(rows))
	for i := range rows {
		r := &rows[i]
		recs[i] = record{id: r.id, key: r.key, text: r.text, md: r.md}
		if mds != nil {
			recs[i].md = mds[i]
		}
	}
	return recs
}

// reserve gives rows their ids: the published id found for their key
// (an error unless replace) or, for the others, a fresh one, entered in
// the key index. It returns the flight to hold them and the published ids
// the write replaces. On error it changes nothing. mu is held, as it has
// been since found was looked up.
func (c *Collection) reserve(op string, rows []row, found []vector.ID, replace bool) (*flight, []vector.ID, error) {
	var olds []vector.ID
	for i := range rows {
		if id := found[i]; id != 0 {
			if !replace {
				return nil, nil, fmt.Errorf("cairn: %s %q: %w", op, rows[i].key, vector.ErrDuplicateID)
			}
			rows[i].id = id
			olds = append(olds, id)
		}
	}
	if len(olds) > 1 {
		sorted := slices.Clone(olds)
		slices.Sort(sorted)
		for j := 1; j < len(sorted); j++ {
			if sorted[j] == sorted[j-1] {
				return nil, nil, fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", op, c.recs.get(sorted[j]).key, vector.ErrDuplicateID)
			}
		}
	}
	f := &flight{done: make(chan struct{}), lo: c.next, hi: c.next, keys: make([]string, 0, len(rows)-len(olds))}
	c.flights = append(c.flights, f) // so that keyOf finds the keys entered below
	for i := range rows {
		if found[i] != 0 {
			continue
		}
		k := rows[i].key
		f.keys = append(f.keys, k)
		if _, dup := c.keys.add(k, c.next, c); dup { // entered by an earlier row
			f.hi = c.next
			c.forget(rows[:i], f)
			c.unflight(f)
			c.next = f.lo
			return nil, nil, fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", op, k, vector.ErrDuplicateID)
		}
		rows[i].id = c.next
		c.next++
	}
	f.hi = c.next
	return f, olds, nil
}

// forget takes out of the key map the keys of those rows whose ids f
// creates, for a write abandoned. mu is held.
func (c *Collection) forget(rows []row, f *flight) {
	for _, r := range rows {
		if r.id >= f.lo && r.id < f.hi {
			c.keys.del(r.key, r.id)
		}
	}
}

// unwrite undoes a durable write that the index refused (which only a bug
// can cause): the fresh rows are removed from the store and the replaced
// ones written back from their copies and indexed again. It returns err,
// with whatever went wrong on the way.
func (c *Collection) unwrite(ctx context.Context, op string, idx vector.Index, rows []row, f *flight, copies []held, err error) error {
	ctx = context.WithoutCancel(ctx)
	var fresh []vector.ID
	for _, r := range rows {
		if r.id >= f.lo && r.id < f.hi {
			fresh = append(fresh, r.id)
		}
	}
	if len(fresh) > 0 {
		if rerr := c.be.remove(ctx, fresh); rerr != nil {
			return fmt.Errorf("%w (and removing the rows: %v)", err, rerr)
		}
	}
	if len(copies) == 0 {
		return err
	}
	olds := make([]row, len(copies))
	ids := make([]vector.ID, len(copies))
	for i, h := range copies {
		olds[i] = row{id: h.rec.id, key: h.rec.key, vec: h.vec, text: h.rec.text, md: h.rec.md}
		ids[i] = h.rec.id
	}
	untrack(ctx, idx, ids) // those of ids that made it in
	if uerr := c.be.upsert(ctx, olds); uerr != nil {
		return fmt.Errorf("%w (and restoring the rows: %v)", err, uerr)
	}
	if terr := track(ctx, idx, ids); terr != nil {
		return fmt.Errorf("%w (and restoring the index: %v)", err, terr)
	}
	return err
}

// Delete removes the items with the given ids, all or nothing: it returns
// an error wrapping [vector.ErrNotFound] if any id is not in the collection.
// An id that another write has in flight is looked up once that write has
// finished.
func (c *Collection) Delete(ctx context.Context, ids ...string) error {
	if err := c.usable(); err != nil {
		return err
	}
	keys := make([]string, 0, len(ids))
	seen := make(map[string]struct{}, len(ids))
	for _, k := range ids {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	c.wmu.RLock()
	defer c.wmu.RUnlock()
	nums := make([]vector.ID, len(keys))
	key := func(i int) string { return keys[i] }
	if err := c.lockClear(ctx, "delete", func() *flight { return c.lookupKeys(len(keys), key, nums) }); err != nil {
		return err
	}
	for i, id := range nums {
		if id == 0 {
			c.mu.Unlock()
			return fmt.Errorf("cairn: delete %q: %w", keys[i], vector.ErrNotFound)
		}
	}
	return c.removeHeld(ctx, nums)
}

// DeleteWhere removes every item that f matches and returns how many it
// removed. A nil or malformed filter is an error wrapping
// [vector.ErrInvalidOptions] (to empty a collection, delete the collection
// or use And(), which matches everything). It first waits for the writes
// in flight on the items f matches; writes in flight on other items (such
// as Adds not yet published) are neither waited for nor affected. Until it
// has committed, it keeps a copy of the vectors it removes, so that
// queries still see them.
func (c *Collection) DeleteWhere(ctx context.Context, f *Filter) (int, error) {
	m, err := f.compile()
	if err != nil {
		return 0, fmt.Errorf("cairn: delete where: %w", err)
	}
	if err := c.usable(); err != nil {
		return 0, err
	}
	c.wmu.RLock()
	defer c.wmu.RUnlock()
	var nums []vector.ID
	err = c.lockClear(ctx, "delete where", func() *flight {
		nums = c.match(f, m)
		for _, id := range nums {
			if h, ok := c.pendIDs[id]; ok {
				return h.f
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := c.removeHeld(ctx, nums); err != nil {
		return 0, err
	}
	return len(nums), nil
}

// removeHeld deletes ids (published, none in flight); it is called with
// mu held, reserves them and releases mu, then removes them from the index
// and the store, putting the index back if the store fails. wmu is held
// shared.
func (c *Collection) removeHeld(ctx context.Context, ids []vector.ID) error {
	if len(ids) == 0 {
		c.mu.Unlock()
		return nil
	}
	f := &flight{done: make(chan struct{})}
	c.flights = append(c.flights, f)
	c.hold(f, ids)
	idx := c.idx
	c.mu.Unlock()
	if err := untrack(ctx, idx, ids); err != nil {
		c.release(f, ids, nil)
		return fmt.Errorf("cairn: delete: %w", err)
	}
	if err := c.be.remove(ctx, ids); err != nil {
		if terr := track(context.WithoutCancel(ctx), idx, ids); terr != nil {
			err = fmt.Errorf("%w (and restoring the index: %v)", err, terr)
		}
		c.release(f, ids, nil)
		return fmt.Errorf("cairn: delete: %w", err)
	}
	c.release(f, ids, func() {
		for _, id := range ids {
			c.remove(id)
		}
		c.dirty = true
	})
	return nil
}

// vectorOf returns the published vector of id, which is in the
// collection; mu is held.
func (c *Collection) vectorOf(id vector.ID) (vector.Vector, error) {
	if h, ok := c.pendIDs[id]; ok && h.vec != nil {
		return h.vec, nil
	}
	return c.st.Get(id)
}

// maxInflate is the number of ids in flight up to which an exact query
// asks the index for that many more results rather than filter them out
// (a filter costs a call per vector scanned).
var maxInflate = 1024

// notInFlight reports whether id is published and has no write in
// flight; mu is held (shared: searches call it from several goroutines).
func (c *Collection) notInFlight(id vector.ID) bool {
	_, busy := c.pendIDs[id]
	return !busy && c.recs.get(id) != nil
}

// withoutInFlight returns ids less those with a write in flight, as a new
// slice; mu is held.
func (c *Collection) withoutInFlight(ids matched) matched {
	out := make([]vector.ID, 0, ids.len())
	for _, id := range ids.ids {
		if c.notInFlight(id) {
			out = append(out, id)
		}
	}
	for id := range ids.set {
		if c.notInFlight(id) {
			out = append(out, id)
		}
	}
	return matched{ids: out}
}

// settle turns hits, the answer of an index searched for k plus the
// number of ids in flight, or with them filtered out, into the top k of
// the published items: it drops the hits on ids in flight (or unknown),
// scores the published version of each item in flight that m (if not nil)
// matches, and keeps the k best. q is the query as given. mu is held.
func (c *Collection) settle(q vector.Vector, hits []vector.Result, k int, m matcher) ([]vector.Result, error) {
	out := hits[:0]
	for _, h := range hits {
		if _, busy := c.pendIDs[h.ID]; busy {
			continue
		}
		if c.recs.get(h.ID) == nil {
			continue
		}
		out = append(out, h)
	}
	if len(c.pendIDs) > 0 {
		pq, err := vector.Prepare(q, c.cfg.Dim, c.cfg.Metric)
		if err != nil {
			return nil, err
		}
		dist := c.cfg.Metric.DistanceFunc()
		for id, h := range c.pendIDs {
			if h.vec == nil || (m != nil && !m(h.rec.md)) {
				continue
			}
			out = append(out, vector.Result{ID: id, Distance: dist(pq, h.vec)})
		}
		slices.SortFunc(out, func(a, b vector.Result) int {
			if a.Less(b) {
				return -1
			}
			if b.Less(a) {
				return 1
			}
			return 0
		})
	}
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// maybeSwitch builds an HNSW graph for an Auto collection that has
// reached its threshold and makes it the collection's index. It holds wmu
// exclusively, so no write is in flight and none starts meanwhile, while
// queries go on with exact search. If the build fails or ctx ends, the
// collection stays exact and the next write tries again.
func (c *Collection) maybeSwitch(ctx context.Context) {
	c.mu.RLock()
	due := c.switchDue()
	c.mu.RUnlock()
	if !due {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.RLock()
	if !c.switchDue() {
		c.mu.RUnlock()
		return
	}
	ids := make([]vector.ID, len(c.rows))
	for i, r := range c.rows {
		ids[i] = r.id
	}
	c.mu.RUnlock()
	slices.Sort(ids)
	idx, err := newIndex(HNSW, c.cfg, c.st)
	if err != nil {
		return
	}
	if err := track(ctx, idx, ids); err != nil {
		return
	}
	c.mu.Lock()
	if c.err == nil {
		c.idx, c.kind, c.dirty = idx, HNSW, true
	}
	c.mu.Unlock()
}

// switchDue reports whether an Auto collection is due to switch to HNSW;
// mu is held.
func (c *Collection) switchDue() bool {
	return c.err == nil && c.cfg.Index == Auto && c.kind == Flat && c.len() >= c.cfg.AutoThreshold
}
