package cairn

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/vector"
)

// A write goes through three steps, and holds the collection's lock (mu)
// only in the first and the last, never while the store commits:
//
//  1. Reserve, under mu: wait until no other write has any of its ids in
//     flight, check the ids against the published items (ErrDuplicateID,
//     ErrNotFound), give fresh ids their numbers and mark every id as in
//     flight, keeping a copy of the published version of the ones the
//     write replaces or deletes.
//  2. Write, without mu: take the replaced and deleted ids out of the
//     index, write to the store (one transaction, shared with concurrent
//     writers by sqlitestore's group commit) and, once it is durable, put
//     the new vectors in the index.
//  3. Publish, under mu: apply the change to the maps and drop the
//     reservation; or, if step 2 failed, put the index back as it was and
//     drop the reservation alone.
//
// Readers see only published items. While an id is in flight the index
// and the store may already hold its next version, or may have lost it, so
// readers skip whatever the index returns for ids in flight and use the
// copy kept in step 1 instead (see settle): a query or a Get sees each
// write entirely or not at all, and never a write that fails. The copies
// cost memory: a Delete or Upsert of n existing items holds n vectors
// until it publishes.
//
// A write never waits while it holds a reservation (step 1 reserves all
// its ids at once or none), so writes waiting for each other cannot
// deadlock.

// inflight records the writes between steps 1 and 3. The collection's mu
// guards it.
type inflight struct {
	pendKeys map[string]*flight // caller's ids held by a write
	pendIDs  map[vector.ID]held // numeric ids held by a write
	nheld    int                // how many of pendIDs have a published version
}

func newInflight() inflight {
	return inflight{pendKeys: make(map[string]*flight), pendIDs: make(map[vector.ID]held)}
}

// flight is one write in progress; done is closed when it has published or
// abandoned its change.
type flight struct {
	done chan struct{}
}

// held is a numeric id reserved by a write in flight, with the published
// version of its item if it has one (rec and vec are nil for an id the
// write creates). vec is a copy, immune to the write.
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

// keyConflict returns the flight holding one of keys, or nil. mu is held.
func (c *Collection) keyConflict(keys []string) *flight {
	for _, k := range keys {
		if f := c.pendKeys[k]; f != nil {
			return f
		}
	}
	return nil
}

// hold reserves keys, the fresh ids and the published ids olds for a new
// flight, keeping a copy of the published version of each of olds. mu is
// held. It returns the flight and the copies, in the order of olds.
func (c *Collection) hold(keys []string, fresh, olds []vector.ID) (*flight, []held) {
	f := &flight{done: make(chan struct{})}
	for _, k := range keys {
		c.pendKeys[k] = f
	}
	for _, id := range fresh {
		c.pendIDs[id] = held{f: f}
	}
	copies := make([]held, len(olds))
	buf := make([]float32, 0, len(olds)*c.cfg.Dim) // one allocation for the batch
	for i, id := range olds {
		h := held{f: f, rec: c.recs[id]}
		if v, err := c.st.Get(id); err == nil {
			n := len(buf)
			buf = append(buf, v...)
			h.vec = buf[n:len(buf):len(buf)]
		}
		c.pendIDs[id] = h
		copies[i] = h
	}
	c.nheld += len(olds)
	return f, copies
}

// release ends flight f, which holds keys and ids (nolds of them with a
// published version): under mu it runs publish, if not nil, then drops
// the reservation and wakes the writes waiting for f.
func (c *Collection) release(f *flight, keys []string, ids []vector.ID, nolds int, publish func()) {
	c.mu.Lock()
	if publish != nil {
		publish()
		c.dirty = true
	}
	for _, k := range keys {
		delete(c.pendKeys, k)
	}
	for _, id := range ids {
		delete(c.pendIDs, id)
	}
	c.nheld -= nolds
	c.mu.Unlock()
	close(f.done)
}

func (c *Collection) write(ctx context.Context, op string, items []Item, replace bool) error {
	rows, err := c.prepare(ctx, op, items, replace)
	if err != nil || len(rows) == 0 {
		return err
	}
	c.wmu.RLock()
	err = c.writeRows(ctx, op, rows, replace)
	c.wmu.RUnlock()
	if err == nil {
		c.maybeSwitch(ctx)
	}
	return err
}

// writeRows stores rows (ids not yet assigned) in the three steps above;
// wmu is held shared.
func (c *Collection) writeRows(ctx context.Context, op string, rows []row, replace bool) error {
	keys := make([]string, len(rows))
	for i := range rows {
		keys[i] = rows[i].key
	}
	if err := c.lockClear(ctx, op, func() *flight { return c.keyConflict(keys) }); err != nil {
		return err
	}
	// Step 1, under mu.
	var olds, fresh []vector.ID
	isOld := make([]bool, len(rows))
	for i := range rows {
		if id, ok := c.keys[rows[i].key]; ok {
			if !replace {
				c.mu.Unlock()
				return fmt.Errorf("cairn: %s %q: %w", op, rows[i].key, vector.ErrDuplicateID)
			}
			rows[i].id, isOld[i] = id, true
			olds = append(olds, id)
		}
	}
	ids := make([]vector.ID, len(rows))
	for i := range rows {
		if !isOld[i] {
			rows[i].id = c.next
			c.next++
			fresh = append(fresh, rows[i].id)
		}
		ids[i] = rows[i].id
	}
	f, copies := c.hold(keys, fresh, olds)
	idx := c.idx // stable while wmu is held
	c.mu.Unlock()

	// Step 2. The store is written first (it validates every vector, all
	// or nothing), then the index is told; a failure at either step
	// undoes the steps before it.
	abandon := func(err error) error {
		c.release(f, keys, ids, len(olds), nil)
		return err
	}
	var err error
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
	if err := track(context.WithoutCancel(ctx), idx, ids); err != nil {
		return abandon(c.unwrite(ctx, op, idx, fresh, copies, fmt.Errorf("cairn: %s: indexing: %w", op, err)))
	}

	// Step 3.
	recs := make([]record, len(rows)) // one allocation for the batch
	for i, r := range rows {
		recs[i] = record{id: r.id, key: r.key, text: r.text, md: r.md}
	}
	c.release(f, keys, ids, len(olds), func() {
		for i := range recs {
			c.put(&recs[i])
		}
	})
	return nil
}

// unwrite undoes a durable write that the index refused (which only a bug
// can cause): the fresh rows are removed from the store and the replaced
// ones written back from their copies and indexed again. It returns err,
// with whatever went wrong on the way.
func (c *Collection) unwrite(ctx context.Context, op string, idx vector.Index, fresh []vector.ID, copies []held, err error) error {
	ctx = context.WithoutCancel(ctx)
	if len(fresh) > 0 {
		if rerr := c.be.remove(ctx, fresh); rerr != nil {
			return fmt.Errorf("%w (and removing the rows: %v)", err, rerr)
		}
	}
	if len(copies) == 0 {
		return err
	}
	rows := make([]row, len(copies))
	ids := make([]vector.ID, len(copies))
	for i, h := range copies {
		rows[i] = row{id: h.rec.id, key: h.rec.key, vec: h.vec, text: h.rec.text, md: h.rec.md}
		ids[i] = h.rec.id
	}
	untrack(ctx, idx, ids) // those of ids that made it in
	if uerr := c.be.upsert(ctx, rows); uerr != nil {
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
	if err := c.lockClear(ctx, "delete", func() *flight { return c.keyConflict(keys) }); err != nil {
		return err
	}
	nums := make([]vector.ID, len(keys))
	for i, k := range keys {
		id, ok := c.keys[k]
		if !ok {
			c.mu.Unlock()
			return fmt.Errorf("cairn: delete %q: %w", k, vector.ErrNotFound)
		}
		nums[i] = id
	}
	return c.removeHeld(ctx, keys, nums)
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
	keys := make([]string, len(nums))
	for i, id := range nums {
		keys[i] = c.recs[id].key
	}
	if err := c.removeHeld(ctx, keys, nums); err != nil {
		return 0, err
	}
	return len(nums), nil
}

// removeHeld deletes ids (published, none in flight) whose keys are keys;
// it is called with mu held, reserves them and releases mu, then removes
// them from the index and the store, putting the index back if the store
// fails. wmu is held shared.
func (c *Collection) removeHeld(ctx context.Context, keys []string, ids []vector.ID) error {
	if len(ids) == 0 {
		c.mu.Unlock()
		return nil
	}
	f, _ := c.hold(keys, nil, ids)
	idx := c.idx
	c.mu.Unlock()
	if err := untrack(ctx, idx, ids); err != nil {
		c.release(f, keys, ids, len(ids), nil)
		return fmt.Errorf("cairn: delete: %w", err)
	}
	if err := c.be.remove(ctx, ids); err != nil {
		if terr := track(context.WithoutCancel(ctx), idx, ids); terr != nil {
			err = fmt.Errorf("%w (and restoring the index: %v)", err, terr)
		}
		c.release(f, keys, ids, len(ids), nil)
		return fmt.Errorf("cairn: delete: %w", err)
	}
	c.release(f, keys, ids, len(ids), func() {
		for _, id := range ids {
			c.remove(id)
		}
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

// notInFlight reports whether id has no write in flight; mu is held
// (shared: searches call it from several goroutines).
func (c *Collection) notInFlight(id vector.ID) bool {
	_, busy := c.pendIDs[id]
	return !busy
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
		if _, ok := c.recs[h.ID]; !ok {
			continue
		}
		out = append(out, h)
	}
	if c.nheld > 0 {
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
