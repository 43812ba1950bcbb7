package cairn

// This file holds the catalog: a collection's items apart from their
// vectors (keys, text, metadata), by key and by id.

import (
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/internal/keyword"
	"github.com/cairndb/cairn/internal/versions"
	"github.com/cairndb/cairn/vector"
)

// record is one version of an item, kept in memory so that filters and
// results need no storage round trip. A version is published (readers see
// it) from the moment it enters the catalog's list of live records; before
// that it is being written, and once replaced or deleted it is gone from
// the catalog, though the store may still hold its vector for a moment.
type record struct {
	id   vector.ID
	key  string
	text string
	md   metadata
	pos  int    // index in catalog.live; -1 while not published
	w    *write // the write in flight that creates, replaces or deletes this version, if any
	// words is text cut into words before the write took the lock, and
	// staged in the keyword index by the reserve step, for publish to
	// commit; nil once published.
	words *keyword.Doc
	// created, updated and expires are the item's times, Unix
	// nanoseconds, noTime for none (expires noTime for never).
	created, updated, expires int64
	// tpos is the record's index in the time order's list (timeorder.go),
	// where it was last placed; a query checks it against the list it holds.
	tpos atomic.Int64
}

func (r *record) published() bool { return r.pos >= 0 }

// item returns r as the caller sees it, with the embedding emb.
func (r *record) item(emb []float32) Item {
	return Item{ID: r.key, Embedding: emb, Text: r.text, Metadata: r.md.toMap(),
		CreatedAt: timeOf(r.created), UpdatedAt: timeOf(r.updated), ExpiresAt: timeOf(r.expires)}
}

// catalog holds a collection's records: the caller's keys, mapped to the
// id of their current version; every record by id (those published and
// those being written); the published ones in a dense slice, for filter
// scans; and posting lists (metadata key → value → ids) that answer
// equality conditions without a scan.
//
// Posting lists are built for a metadata key the first time a filter
// looks a value of it up, and kept up to date from then on, so writes pay
// for them only on keys that queries use for equality.
//
// The keyword index holds the text of every published version, entered
// and removed at the very instant the version is published and retired,
// so keyword and vector search always see the same items.
//
// What a reader sees of the versions the catalog holds, and of those the
// store and the index hold besides, is decided in one place: ver, whose
// view (Collection.view) every read asks. The catalog tells ver of each
// version it publishes and retires; the write path, of each it numbers
// and evicts.
//
// The collection's lock guards the catalog: writers hold it exclusively;
// readers hold it shared and may call matchSet, which takes postMu to
// build a key's lists.
type catalog struct {
	keys  keyIndex
	recs  recTable
	live  []*record
	words *keyword.Index // the text of the versions shown (published, not marked expired) that have any
	ver   *versions.State
	times timeOrder // the published versions by UpdatedAt

	postMu sync.Mutex
	post   map[string]postings // guarded by postMu when read under a shared lock
}

func newCatalog() *catalog {
	cat := &catalog{keys: newKeyIndex(), post: make(map[string]postings), words: keyword.New()}
	cat.ver = versions.New(func(id vector.ID) (int64, bool) {
		if r := cat.recs.get(id); r != nil && r.published() {
			return r.expires, true
		}
		return noTime, false
	})
	return cat
}

// len returns the number of published records.
func (cat *catalog) len() int { return len(cat.live) }

// add enters r, published, with its key, unless its id or key is in the
// catalog already: then it returns false and changes nothing.
func (cat *catalog) add(r *record) bool {
	if cat.recs.get(r.id) != nil {
		return false
	}
	cat.recs.set(r.id, r)
	if _, dup := cat.keys.add(r.key, r.id, cat); dup {
		cat.recs.del(r.id)
		return false
	}
	cat.ver.Numbered(1)
	cat.publish(r)
	return true
}

// keyOf returns the key of id, which the key index holds (see
// keyResolver): every id there has a record, published or being written.
func (cat *catalog) keyOf(id vector.ID) string { return cat.recs.get(id).key }

// lookup returns the record that key maps to, published or being
// written, or nil.
func (cat *catalog) lookup(key string) *record {
	id, ok := cat.keys.get(key, cat)
	if !ok {
		return nil
	}
	return cat.recs.get(id)
}

// publish makes r, which is in recs and numbered, visible to readers.
func (cat *catalog) publish(r *record) {
	r.pos = len(cat.live)
	cat.live = append(cat.live, r)
	cat.times.add(r)
	cat.ver.Publish(r.id, r.expires)
	switch {
	case r.words != nil && r.words.Staged():
		cat.words.Commit(r.words)
	case r.text != "":
		d := r.words
		if d == nil {
			a := keyword.Analyze(r.text)
			d = &a
		}
		cat.words.AddNew(r.id, *d) // ids are never reused
	}
	r.words = nil
	if len(cat.post) > 0 {
		for _, f := range r.md {
			if ps := cat.post[f.key]; ps != nil {
				ps.add(f.val, r.id)
			}
		}
	}
}

// markExpired marks up to n versions expired at now, hiding them from
// readers ([versions.State.MarkDue]), and takes their text out of the
// keyword index, whose statistics then count only what readers see. It
// reports whether more have expired. The lock is held exclusively.
func (cat *catalog) markExpired(now int64, n int) (more bool) {
	return cat.ver.MarkDue(now, n, func(id vector.ID) { cat.words.Remove(id) })
}

// retire takes r, published, out of the catalog (but not its key, which
// the caller moves or deletes); the store and the index hold it until it
// is evicted. It returns whether r had text, which the
// caller must then remove from the keyword index, in one call for the
// write.
func (cat *catalog) retire(r *record) (hasText bool) {
	last := cat.live[len(cat.live)-1]
	cat.live[r.pos] = last
	last.pos = r.pos
	cat.live[len(cat.live)-1] = nil
	cat.live = cat.live[:len(cat.live)-1]
	r.pos = -1
	cat.times.retire()
	cat.ver.Retire(r.id, r.expires)
	cat.recs.del(r.id)
	if len(cat.post) == 0 {
		return r.text != ""
	}
	for _, f := range r.md {
		if ps := cat.post[f.key]; ps != nil {
			delete(ps[f.val], r.id)
			if len(ps[f.val]) == 0 {
				delete(ps, f.val)
			}
		}
	}
	return r.text != ""
}

// recTable maps ids to records. Ids are issued in sequence, so records
// are kept in pages of 256 consecutive ids, found through a map keyed by
// page: a lookup is one map probe and a load, and the table's size follows
// the pages that hold records, however large the ids grow. A page is
// freed when its last record goes.
type recTable struct {
	pages map[vector.ID]*recPage
}

const recPageBits = 8

type recPage struct {
	n    int // records in the page
	recs [1 << recPageBits]*record
}

func (t *recTable) get(id vector.ID) *record {
	if pg := t.page(id); pg != nil {
		return pg.recs[id&(1<<recPageBits-1)]
	}
	return nil
}

// page returns the page that holds id's slot; nil if none does.
func (t *recTable) page(id vector.ID) *recPage { return t.pages[id>>recPageBits] }

func (t *recTable) set(id vector.ID, r *record) {
	if t.pages == nil {
		t.pages = make(map[vector.ID]*recPage)
	}
	pg := t.pages[id>>recPageBits]
	if pg == nil {
		pg = new(recPage)
		t.pages[id>>recPageBits] = pg
	}
	slot := &pg.recs[id&(1<<recPageBits-1)]
	if *slot == nil {
		pg.n++
	}
	*slot = r
}

func (t *recTable) del(id vector.ID) {
	pg := t.pages[id>>recPageBits]
	if pg == nil {
		return
	}
	slot := &pg.recs[id&(1<<recPageBits-1)]
	if *slot != nil {
		*slot = nil
		if pg.n--; pg.n == 0 {
			delete(t.pages, id>>recPageBits)
		}
	}
}

// visible returns the ids of the versions v sees that f matches (m is f
// compiled), or of all of them if m is nil, in a new slice.
func (cat *catalog) visible(f *Filter, m matcher, v versions.View) []vector.ID {
	if m != nil {
		return v.Keep(cat.match(f, m))
	}
	allow := v.OfPublished()
	ids := make([]vector.ID, 0, len(cat.live))
	for _, r := range cat.live {
		if allow == nil || allow(r.id) {
			ids = append(ids, r.id)
		}
	}
	return ids
}
