package cairn

// This file holds the write path: Add, Upsert, Delete and DeleteWhere,
// and the one route they all take.

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/internal/keyword"
	"github.com/cairndb/cairn/vector"
)

// Versions by id. Every write of an item stores a new version of it under
// an id never used before, and a version is visible to readers only while
// the catalog publishes it; an id's vector never changes. A write goes
// through five steps, and holds the collection's lock (mu) only in the
// first, second and fourth, never while the store commits:
//
//  1. Number, under mu: give the new versions their ids, and tell the
//     catalog's versions of them (hidden until published).
//  2. Reserve, under mu: wait until no other write has any of the
//     write's keys in flight, check the keys against the published
//     versions (ErrDuplicateID, ErrNotFound), claim the published
//     versions the write replaces or deletes, and stage the new ones
//     (their records enter the catalog unpublished, a fresh key enters
//     the key index).
//  3. Store, without mu: the backend writes the new versions and deletes
//     the old in one transaction, durable when it returns, keeping the
//     old vectors in memory; then the index takes the new ids.
//  4. Publish, under mu: the new versions replace the old in the
//     catalog, all at one instant, and the write's claims end.
//  5. Evict, without mu: the old versions leave the index, then the
//     store.
//
// If a step before 4 fails, the write is abandoned: its new versions,
// never published, leave the catalog (and the store and index, if they
// got there), and its claims end, so nothing has changed.
//
// Readers therefore ask one question of whatever the index returns: does
// the view (package versions) allow this id? The index and the store hold
// every published version with its vector, and perhaps versions not
// published yet or any more; while any are, the view's filter asks that
// question of the index.
//
// A write never waits while it holds a claim (step 2 claims all its keys
// at once or none), so writes waiting for each other cannot deadlock.
//
// An Add deletes nothing, so its store step needs nothing from step 2: a
// large Add to a volatile backend (memory, where an evict undoes a store
// without trace) runs step 2 and the store's half of step 3 at once, on
// two goroutines, and indexes its versions once both are done.

// write is one write in flight: an Add, Upsert, Delete or DeleteWhere.
type write struct {
	op      string
	done    chan struct{} // closed when the write has published or been abandoned
	overlap bool          // step 2 runs beside the store (see overlaps)

	rows     []row     // the new versions, numbered in step 1
	vers     []record  // their records, made in step 2
	replaces []*record // for each new version, the published version it replaces, or nil
	deletes  []*record // the published versions it deletes
	staged   int       // the new versions staged in the catalog so far
	// now is the write's time (Unix ns): the store's clock when it
	// began, then, once step 2 has claimed its ids, its stamp, at which
	// it changes them (stamp).
	now int64
	// keepTimes keeps the rows' CreatedAt even where they replace an
	// item (a Restore's, which puts versions back as they were).
	keepTimes bool
	// own asks for a time after every earlier write's (a Restore's:
	// stamp).
	own bool
	// words are the new versions' texts cut into words (by row); those
	// of the rows with text are staged in the keyword index (wordsIn)
	// with the versions, and committed when they are published.
	words   []keyword.Doc
	wordsIn []*keyword.Doc
	// published, if set, is called under mu in publish (the sweep's
	// bookkeeping).
	published func()
	// timed asks publish to add how long it held mu to held (the sweep
	// paces itself by it).
	timed bool
	held  time.Duration
}

func newWrite(op string, rows []row, now int64) *write {
	return &write{op: op, done: make(chan struct{}), rows: rows, now: now}
}

// newIDs returns the ids of the new versions.
func (w *write) newIDs() []vector.ID {
	ids := make([]vector.ID, len(w.rows))
	for i := range w.rows {
		ids[i] = w.rows[i].id
	}
	return ids
}

// oldIDs returns the ids of the published versions the write retires.
func (w *write) oldIDs() []vector.ID {
	var ids []vector.ID
	for _, r := range w.replaces {
		if r != nil {
			ids = append(ids, r.id)
		}
	}
	for _, r := range w.deletes {
		ids = append(ids, r.id)
	}
	return ids
}

// overlapMin is the batch size from which an Add to a volatile backend
// stores its vectors while another goroutine reserves its keys.
const overlapMin = 256

// overlaps reports whether an Add (replace unset) of n items runs step 2
// beside the store: the backend must be volatile, the batch large enough to
// pay for a goroutine, and there must be a CPU to run it on; and the
// collection must keep no history, which the store takes from step 2.
func (c *Collection) overlaps(n int, replace bool) bool {
	return !replace && n >= overlapMin && c.be.volatile() && runtime.GOMAXPROCS(0) > 1 && !c.keepsHistory()
}

// Add stores items, all or nothing. It returns an error wrapping
// [vector.ErrDuplicateID] if an id is already in the collection or repeated
// in items, [vector.ErrEmptyID] for an empty id, the errors of
// [vector.Check] for a bad embedding ([vector.ErrDimensionMismatch],
// [vector.ErrNonFinite], [vector.ErrOutOfRange], [vector.ErrZeroVector]),
// [vector.ErrInvalidOptions]
// for bad metadata or an id, text or metadata that is not valid UTF-8, and
// [ErrNoEmbedder] for an item given only as text when the store has no
// embedder. On error nothing is stored.
//
// Items without an embedding are embedded from their text, all in one call
// to the embedder, before the collection is locked.
func (c *Collection) Add(ctx context.Context, items ...Item) error {
	return c.write(ctx, "add", items, false)
}

// Upsert stores items, replacing (embedding, text and metadata) those whose
// ids are already in the collection, all or nothing. It returns the errors
// of [Collection.Add] except [vector.ErrDuplicateID] for a stored id (an id
// repeated within items is still an error).
func (c *Collection) Upsert(ctx context.Context, items ...Item) error {
	return c.write(ctx, "upsert", items, true)
}

func (c *Collection) write(ctx context.Context, op string, items []Item, replace bool) error {
	if err := c.writeErr(); err != nil {
		return err
	}
	now := c.now()
	rows, err := c.prepare(ctx, op, items, now)
	if err != nil || len(rows) == 0 {
		return err
	}
	w := newWrite(op, rows, now)
	w.overlap = c.overlaps(len(rows), replace)
	c.wmu.RLock()
	err = c.run(ctx, w, func() error { return c.reserveRows(ctx, w, items, replace) })
	c.wmu.RUnlock()
	if err == nil {
		c.maybeSwitch(ctx)
	}
	return err
}

// prepare checks items and turns them into rows (ids and metadata not yet
// set, times as of now), embedding the ones given only as text.
func (c *Collection) prepare(ctx context.Context, op string, items []Item, now int64) ([]row, error) {
	if err := c.closedErr(); err != nil {
		return nil, err
	}
	rows := make([]row, len(items))
	var toEmbed []int
	for i, it := range items {
		created, updated, expires, err := checkItem(op, i, &items[i], now, c.cfg.TTL)
		if err != nil {
			return nil, err
		}
		rows[i] = row{key: it.ID, vec: it.Embedding, text: it.Text, created: created, updated: updated, expires: expires}
		if len(it.Embedding) == 0 && it.Text != "" {
			toEmbed = append(toEmbed, i)
		}
	}
	if len(toEmbed) == 0 {
		return rows, nil
	}
	// An id repeated in items is found when the write reserves its keys;
	// look for one now only to spare the embedder a batch that will be
	// refused.
	seen := make(map[string]struct{}, len(items))
	for _, it := range items {
		if _, dup := seen[it.ID]; dup {
			return nil, fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", op, it.ID, vector.ErrDuplicateID)
		}
		seen[it.ID] = struct{}{}
	}
	texts := make([]string, len(toEmbed))
	for j, i := range toEmbed {
		texts[j] = items[i].Text
	}
	vs, err := c.embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("cairn: %s %q: %w", op, items[toEmbed[0]].ID, err)
	}
	for j, i := range toEmbed {
		rows[i].vec = vs[j]
	}
	return rows, nil
}

// checkItem checks the id, text and times of it, item i of a write op at
// now to a collection of TTL ttl, and returns its times (itemTimes).
func checkItem(op string, i int, it *Item, now int64, ttl time.Duration) (created, updated, expires int64, err error) {
	switch {
	case it.ID == "":
		return 0, 0, 0, fmt.Errorf("cairn: %s: item %d: %w", op, i, vector.ErrEmptyID)
	case !utf8.ValidString(it.ID):
		return 0, 0, 0, fmt.Errorf("cairn: %s %q: %w: the id is not valid UTF-8", op, it.ID, vector.ErrInvalidOptions)
	case !utf8.ValidString(it.Text):
		return 0, 0, 0, fmt.Errorf("cairn: %s %q: %w: the text is not valid UTF-8", op, it.ID, vector.ErrInvalidOptions)
	}
	if created, updated, expires, err = itemTimes(it, now, ttl); err != nil {
		return 0, 0, 0, fmt.Errorf("cairn: %s %q: %w", op, it.ID, err)
	}
	return created, updated, expires, nil
}

// Delete removes the items with the given ids, all or nothing: it returns
// an error wrapping [vector.ErrNotFound] if any id is not in the collection
// (an expired item is not: the sweeper removes it).
// An id that another write has in flight is looked up once that write has
// finished. To delete whichever of the ids are present, as a retry must,
// use [Collection.DeleteIfExists].
func (c *Collection) Delete(ctx context.Context, ids ...string) error {
	_, err := c.delete(ctx, "delete", ids, false)
	return err
}

// DeleteIfExists removes those of the items with the given ids that are in
// the collection, at one instant, and returns how many it removed: ids not
// in the collection are no error, so that a delete can be retried (after a
// timeout, say) without first finding out what the last attempt did.
func (c *Collection) DeleteIfExists(ctx context.Context, ids ...string) (int, error) {
	return c.delete(ctx, "delete if exists", ids, true)
}

// delete is Delete, or DeleteIfExists if missingOK is set.
func (c *Collection) delete(ctx context.Context, op string, ids []string, missingOK bool) (int, error) {
	if err := c.writeErr(); err != nil {
		return 0, err
	}
	keys := make([]string, 0, len(ids))
	seen := make(map[string]struct{}, len(ids))
	for _, k := range ids {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	w := newWrite(op, nil, c.now())
	found := make([]*record, len(keys))
	find := func() []*record {
		view := c.view(w.now)
		for i, k := range keys {
			found[i] = c.cat.lookup(k)
			if r := found[i]; r != nil && r.w == nil && !view.Allow(r.id) {
				found[i] = nil // expired: gone for every caller, left to the sweeper
			}
		}
		return found
	}
	claim := func(found []*record) error {
		present := found[:0:0]
		for i, r := range found {
			switch {
			case r != nil:
				present = append(present, r)
			case !missingOK:
				return fmt.Errorf("cairn: %s %q: %w", op, keys[i], vector.ErrNotFound)
			}
		}
		c.claimDeletes(w, present)
		return nil
	}
	c.wmu.RLock()
	defer c.wmu.RUnlock()
	if err := c.run(ctx, w, func() error { return c.reserve(ctx, w, find, claim) }); err != nil {
		return 0, err
	}
	return len(w.deletes), nil
}

// DeleteWhere removes every item that f matches and returns how many it
// removed. A nil or malformed filter is an error wrapping
// [vector.ErrInvalidOptions] (to empty a collection, delete the collection
// or use And(), which matches everything). It first waits for the writes
// in flight on the items f matches; writes in flight on other items (such
// as Adds not yet published) are neither waited for nor affected.
func (c *Collection) DeleteWhere(ctx context.Context, f *Filter) (int, error) {
	m, err := f.compile()
	if err != nil {
		return 0, fmt.Errorf("cairn: delete where: %w", err)
	}
	if err := c.writeErr(); err != nil {
		return 0, err
	}
	w := newWrite("delete where", nil, c.now())
	find := func() []*record {
		ids := c.cat.visible(f, m, c.view(w.now))
		found := make([]*record, len(ids))
		for i, id := range ids {
			found[i] = c.cat.recs.get(id)
		}
		return found
	}
	claim := func(found []*record) error {
		c.claimDeletes(w, found)
		return nil
	}
	c.wmu.RLock()
	defer c.wmu.RUnlock()
	if err := c.run(ctx, w, func() error { return c.reserve(ctx, w, find, claim) }); err != nil {
		return 0, err
	}
	return len(w.deletes), nil
}

// run takes w through the five steps; reserve is its step 2. wmu is held
// shared.
func (c *Collection) run(ctx context.Context, w *write, reserve func() error) error {
	if err := c.numberVersions(w); err != nil {
		return err
	}
	var err error
	if w.overlap {
		var (
			reserved error
			g        sync.WaitGroup
		)
		g.Go(func() { reserved = reserve() })
		err = c.storeVersions(ctx, w, nil) // an Add deletes nothing
		g.Wait()
		if reserved != nil { // the error the steps in order would meet first
			c.abandon(ctx, w, err == nil)
			return reserved
		}
	} else if err = reserve(); err == nil {
		err = c.storeVersions(ctx, w, w.oldIDs())
	}
	if err == nil {
		err = c.indexVersions(ctx, w)
	}
	if err != nil {
		c.abandon(ctx, w, false)
		return err
	}
	c.publish(w)
	c.evictRetired(ctx, w)
	return nil
}

// numberVersions is step 1.
func (c *Collection) numberVersions(w *write) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	for i := range w.rows {
		w.rows[i].id = c.next
		c.next++
	}
	c.cat.ver.Numbered(len(w.rows))
	return nil
}

// reserve is step 2 of w. Under mu, w is stamped (w.now), and find
// returns the records the write names (nil for a name that has none);
// while another write has claimed any of them, reserve waits for that
// write to finish and looks again. Then claim, still under mu, checks
// them and claims them all, or none and returns an error. reserve fails,
// claiming nothing, if the collection is closed or ctx ends first.
func (c *Collection) reserve(ctx context.Context, w *write, find func() []*record, claim func([]*record) error) error {
	op := w.op
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
		w.now = c.stamp(w)
		found := find()
		var busy *write
		for _, r := range found {
			if r != nil && r.w != nil {
				busy = r.w
				break
			}
		}
		if busy == nil {
			err := claim(found)
			c.mu.Unlock()
			return err
		}
		c.mu.Unlock()
		select {
		case <-busy.done:
		case <-ctx.Done():
			return fmt.Errorf("cairn: %s: %w", op, ctx.Err())
		}
	}
}

// reserveRows is step 2 of an Add or Upsert of items, whose rows w holds:
// it normalises their metadata, makes the records of the new versions and
// reserves their keys.
func (c *Collection) reserveRows(ctx context.Context, w *write, items []Item, replace bool) error {
	if err := c.stageRows(w, items); err != nil {
		return err
	}
	found := make([]*record, len(w.rows))
	find := func() []*record {
		for i := range w.vers {
			found[i] = c.cat.lookup(w.vers[i].key)
		}
		return found
	}
	return c.reserve(ctx, w, find, func(found []*record) error {
		if err := c.retime(w, items); err != nil {
			return err
		}
		return c.claimRows(w, found, replace)
	})
}

// stamp returns the time of w, which claims its ids now: the store's
// clock, but never before the time of a write that claimed its ids
// earlier (for a Restore, a nanosecond after it at least). A write
// claims an id only once every earlier write of it has published
// (reserve), so the writes of an id take effect in the order of their
// times, even when the one that began first claims last or the clock
// steps back: AsOf, History and Restore rely on it, and a Restore on its
// time being its own, so that the state a nanosecond before it is the
// one it changed (Restored.Undo). mu is held.
func (c *Collection) stamp(w *write) int64 {
	least := c.stamped
	if w.own && least < math.MaxInt64 {
		least++
	}
	c.stamped = max(least, c.now())
	return c.stamped
}

// retime sets the times of w's new versions that items leave to the
// store (Item's zero times) to w's stamp, which step 2 has just taken,
// and checks them again at that time. A write whose store runs beside
// step 2 (overlap) keeps the times it began with: the store is reading
// them, and it adds items under new ids, keeping no history. mu is
// held.
func (c *Collection) retime(w *write, items []Item) error {
	if w.overlap {
		return nil
	}
	for i := range w.rows {
		created, updated, expires, err := itemTimes(&items[i], w.now, c.cfg.TTL)
		if err != nil {
			return fmt.Errorf("cairn: %s %q: %w", w.op, items[i].ID, err)
		}
		r, v := &w.rows[i], &w.vers[i]
		r.created, r.updated, r.expires = created, updated, expires
		v.created, v.updated, v.expires = created, updated, expires
	}
	return nil
}

// stageRows makes the records of w's new versions, from items: their
// metadata normalised and their texts cut into words.
func (c *Collection) stageRows(w *write, items []Item) error {
	mds, err := normalizeBatch(w.op, items)
	if err != nil {
		return err
	}
	w.vers = make([]record, len(w.rows)) // one allocation for the batch
	words := make([]keyword.Doc, len(w.rows))
	texts := make([]string, len(w.rows))
	for i := range w.rows {
		texts[i] = w.rows[i].text
	}
	keyword.AnalyzeAll(texts, words) // cut into words here, not under the lock in publish
	w.words = words
	for i := range w.rows {
		r := &w.rows[i]
		if !w.overlap { // else the store is reading the rows, and needs no metadata
			r.md = mds[i]
		}
		w.vers[i] = record{id: r.id, key: r.key, text: r.text, md: mds[i], pos: -1, w: w,
			created: r.created, updated: r.updated, expires: r.expires}
		if r.text != "" {
			w.vers[i].words = &words[i]
		}
	}
	return nil
}

// claimRows stages the new versions of w and claims the published ones
// they replace (found, by row), all or none. A version readers no longer
// see at w.now (expired) is replaced by an Add as by an Upsert, and lends
// its replacement no CreatedAt. mu is held.
func (c *Collection) claimRows(w *write, found []*record, replace bool) error {
	view := c.view(w.now)
	if !replace {
		for i, r := range found {
			if r != nil && view.Allow(r.id) {
				return fmt.Errorf("cairn: %s %q: %w", w.op, w.vers[i].key, vector.ErrDuplicateID)
			}
		}
	}
	w.replaces = make([]*record, len(found))
	for i, old := range found {
		v := &w.vers[i]
		if old != nil && old.w == w {
			c.unclaim(w)
			return fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", w.op, v.key, vector.ErrDuplicateID)
		}
		c.cat.recs.set(v.id, v) // before the key, which the key index resolves through it
		if old != nil {
			old.w = w
			w.replaces[i] = old
			if replace && !w.keepTimes && view.Allow(old.id) && old.created != noTime { // an Upsert keeps CreatedAt, if known
				r := &w.rows[i] // not read by the store yet: no overlap with replace
				v.created, r.created = old.created, old.created
				v.updated, r.updated = max(v.updated, v.created), max(r.updated, r.created)
			}
		} else if _, dup := c.cat.keys.add(v.key, v.id, c.cat); dup { // entered by an earlier row
			c.cat.recs.del(v.id)
			c.unclaim(w)
			return fmt.Errorf("cairn: %s %q: %w (repeated in the batch)", w.op, v.key, vector.ErrDuplicateID)
		}
		w.staged = i + 1
	}
	// The keyword index's work (the dictionary, the postings), done here
	// rather than in publish, which only counts them: in a large Add to
	// memory, this step runs beside the store.
	var ids []vector.ID
	for i := range w.vers {
		if v := &w.vers[i]; v.words != nil {
			ids, w.wordsIn = append(ids, v.id), append(w.wordsIn, v.words)
		}
	}
	c.cat.words.Stage(ids, w.wordsIn)
	return nil
}

// claimDeletes claims for w the published versions found. mu is held.
func (c *Collection) claimDeletes(w *write, found []*record) {
	for _, r := range found {
		r.w = w
	}
	w.deletes = found
}

// unclaim undoes what step 2 did for w: its staged versions leave the
// catalog and its claims end. mu is held.
func (c *Collection) unclaim(w *write) {
	for i := range w.staged {
		v := &w.vers[i]
		if old := w.replaces[i]; old != nil {
			old.w = nil
		} else {
			c.cat.keys.del(v.key, v.id)
		}
		c.cat.recs.del(v.id)
	}
	w.staged = 0
	if w.wordsIn != nil {
		c.cat.words.Unstage(w.wordsIn)
		w.wordsIn = nil
	}
	for _, r := range w.deletes {
		r.w = nil
	}
	w.deletes = nil
}

// storeVersions is the first half of step 3: the backend stores the new
// versions and deletes drop, validating every vector, all or nothing.
func (c *Collection) storeVersions(ctx context.Context, w *write, drop []vector.ID) error {
	if len(w.rows) == 0 && len(drop) == 0 {
		return nil
	}
	var prior []prior
	if c.keepsHistory() {
		prior = w.priors()
		c.pastWrites.Add(1)
	}
	if err := c.be.write(ctx, w.rows, drop, prior); err != nil {
		return c.itemError(w, err)
	}
	return nil
}

// indexVersions is the second half of step 3: the index takes the new
// versions, which the store holds, even if ctx is cancelled by now. If it
// refuses them, which only a bug can cause, the collection closes with
// the error (a persistent one can be reopened from its file, which is
// right).
func (c *Collection) indexVersions(ctx context.Context, w *write) error {
	if err := track(context.WithoutCancel(ctx), c.idx, w.newIDs()); err != nil {
		err = fmt.Errorf("cairn: %s: %w: the index refused the stored items (%v); collection %q is closed", w.op, vector.ErrCorrupt, err, c.name)
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
		return err
	}
	return nil
}

// itemError turns a store's error about w's rows into one that names the
// caller's id rather than the internal number.
func (c *Collection) itemError(w *write, err error) error {
	for i := range w.rows {
		r := &w.rows[i] // not a copy: the reserve step may be setting md
		if cerr := vector.Check(r.vec, c.cfg.Dim, c.cfg.Metric); cerr != nil {
			return fmt.Errorf("cairn: %s %q: %w", w.op, r.key, cerr)
		}
	}
	return fmt.Errorf("cairn: %s: %w", w.op, err)
}

// publish is step 4.
func (c *Collection) publish(w *write) {
	var unword []vector.ID // retired versions with text
	c.mu.Lock()
	var start time.Time
	if w.timed {
		start = time.Now()
	}
	for i := range w.vers {
		v := &w.vers[i]
		v.w = nil
		if old := w.replaces[i]; old != nil {
			old.w = nil // a retired record must not keep its write (and so older records) alive
			c.cat.keys.move(v.key, old.id, v.id)
			if c.cat.retire(old) {
				unword = append(unword, old.id)
			}
		}
		c.cat.publish(v)
	}
	for _, old := range w.deletes {
		old.w = nil
		c.cat.keys.del(old.key, old.id)
		if c.cat.retire(old) {
			unword = append(unword, old.id)
		}
	}
	if len(unword) > 0 {
		c.cat.words.Remove(unword...)
	}
	wake := false
	for i := range w.vers {
		wake = wake || w.vers[i].expires != noTime
	}
	if len(w.vers) > 0 || len(w.deletes) > 0 { // an empty write (a sweep that found nothing) changed nothing
		c.dirty, c.wrote = true, true
	}
	if w.published != nil {
		w.published()
	}
	if w.timed {
		w.held = time.Since(start)
	}
	c.mu.Unlock()
	close(w.done)
	if wake {
		c.wakeSweeper()
	}
}

// untrackStep is the most versions a write drops from the index in one
// call.
const untrackStep = 16

// evictRetired is step 5: the versions w replaced or deleted leave the
// index, then the store. Should either refuse (a bug), they stay hidden
// in the catalog's versions, so readers go on skipping them.
func (c *Collection) evictRetired(ctx context.Context, w *write) {
	ids := w.oldIDs()
	if len(ids) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	// A graph repairs itself around each version it drops, holding its
	// lock: in small steps, queries go on between them.
	for rest := c.indexedOf(ids); len(rest) > 0; {
		n := min(len(rest), untrackStep)
		if untrack(ctx, c.idx, rest[:n]) != nil {
			return
		}
		rest = rest[n:]
	}
	if c.deferEvict(ids) || c.be.evict(ctx, ids) != nil {
		return
	}
	c.mu.Lock()
	c.cat.ver.Evicted(len(ids))
	c.mu.Unlock()
}

// abandon ends w, failed before step 4: if stored is set, its new versions
// leave the store, which holds them though step 2 failed (only in a
// volatile backend: see overlaps); then its claims end.
func (c *Collection) abandon(ctx context.Context, w *write, stored bool) {
	unstored := true
	if stored {
		unstored = c.be.evict(context.WithoutCancel(ctx), w.newIDs()) == nil
	}
	c.mu.Lock()
	c.unclaim(w)
	if unstored { // else a bug left them in: readers go on skipping them
		c.cat.ver.Evicted(len(w.rows))
	}
	c.mu.Unlock()
	close(w.done)
}

// normalizeBatch returns the metadata of items in its stored form, the
// whole batch's in one allocation.
func normalizeBatch(op string, items []Item) ([]metadata, error) {
	n := 0
	for _, it := range items {
		n += len(it.Metadata)
	}
	mds := make([]metadata, len(items))
	slab := make(metadata, 0, n)
	for i, it := range items {
		start := len(slab)
		var err error
		if slab, err = appendMetadata(slab, it.Metadata); err != nil {
			return nil, fmt.Errorf("cairn: %s %q: %w", op, it.ID, err)
		}
		if len(slab) > start {
			mds[i] = slab[start:len(slab):len(slab)]
		}
	}
	return mds, nil
}
