package cairn

import (
	"sync"

	"github.com/cairndb/cairn/vector"
)

// record is the payload of an item, kept in memory so that filters and
// results need no storage round trip.
type record struct {
	id   vector.ID
	key  string
	text string
	md   metadata
	pos  int // index in payloads.rows
}

// payloads holds a collection's items apart from their vectors: the
// caller's keys, text and metadata, a dense slice of records for filter
// scans, and posting lists (metadata key → value → ids) that answer
// equality conditions without a scan.
//
// Posting lists are built for a metadata key the first time a filter
// looks a value of it up, and kept up to date from then on, so writes pay
// for them only on keys that queries use for equality.
//
// The collection's lock guards payloads: writers hold it exclusively;
// readers hold it shared and may call match, which takes postMu to build
// a key's lists.
type payloads struct {
	keys keyIndex
	recs recTable
	rows []*record

	postMu sync.Mutex
	post   map[string]postings // guarded by postMu when read under a shared lock
}

// recTable maps ids to records. Ids are issued in sequence from 1, so it
// is a table of fixed pages indexed by id rather than a hash map: a lookup
// is two loads and an insert little more. A page is freed when its last
// record goes, so memory follows the live items, plus a pointer for every
// 256 ids ever issued. Ids far beyond the table, which only a damaged or
// hand-made file can hold, go to a map instead.
type recTable struct {
	pages []*recPage
	far   map[vector.ID]*record
}

const recPageBits = 8

type recPage struct {
	n    int // records in the page
	recs [1 << recPageBits]*record
}

func (t *recTable) get(id vector.ID) *record {
	if p := id >> recPageBits; p < vector.ID(len(t.pages)) {
		if pg := t.pages[p]; pg != nil {
			return pg.recs[id&(1<<recPageBits-1)]
		}
		return nil
	}
	return t.far[id]
}

func (t *recTable) set(id vector.ID, r *record) {
	p := id >> recPageBits
	if p >= vector.ID(len(t.pages)) {
		if p > vector.ID(2*len(t.pages)+64) {
			if t.far == nil {
				t.far = make(map[vector.ID]*record)
			}
			t.far[id] = r
			return
		}
		t.pages = append(t.pages, make([]*recPage, int(p)+1-len(t.pages))...)
		for fid, fr := range t.far { // those now within the table move in
			if fid>>recPageBits < vector.ID(len(t.pages)) {
				delete(t.far, fid)
				t.set(fid, fr)
			}
		}
	}
	pg := t.pages[p]
	if pg == nil {
		pg = new(recPage)
		t.pages[p] = pg
	}
	slot := &pg.recs[id&(1<<recPageBits-1)]
	if *slot == nil {
		pg.n++
	}
	*slot = r
}

func (t *recTable) del(id vector.ID) {
	p := id >> recPageBits
	if p >= vector.ID(len(t.pages)) {
		delete(t.far, id)
		return
	}
	pg := t.pages[p]
	if pg == nil {
		return
	}
	slot := &pg.recs[id&(1<<recPageBits-1)]
	if *slot != nil {
		*slot = nil
		if pg.n--; pg.n == 0 {
			t.pages[p] = nil
		}
	}
}

// postings maps each value of one metadata key to the ids that have it.
type postings map[value]map[vector.ID]struct{}

func (ps postings) add(v value, id vector.ID) {
	ids := ps[v]
	if ids == nil {
		ids = make(map[vector.ID]struct{})
		ps[v] = ids
	}
	ids[id] = struct{}{}
}

func newPayloads() payloads {
	return payloads{
		keys: newKeyIndex(),
		post: make(map[string]postings),
	}
}

func (p *payloads) len() int { return len(p.rows) }

// put stores r, replacing the record of the same id if there is one. The
// caller enters r's key in keys (a write does so when it reserves it).
func (p *payloads) put(r *record) {
	if old := p.recs.get(r.id); old != nil {
		p.unpost(old)
		r.pos = old.pos
		p.rows[r.pos] = r
	} else {
		r.pos = len(p.rows)
		p.rows = append(p.rows, r)
	}
	p.recs.set(r.id, r)
	if len(p.post) > 0 {
		for _, f := range r.md {
			if ps := p.post[f.key]; ps != nil {
				ps.add(f.val, r.id)
			}
		}
	}
}

// unpost takes r out of the posting lists.
func (p *payloads) unpost(r *record) {
	if len(p.post) == 0 {
		return
	}
	for _, f := range r.md {
		if ps := p.post[f.key]; ps != nil {
			delete(ps[f.val], r.id)
			if len(ps[f.val]) == 0 {
				delete(ps, f.val)
			}
		}
	}
}

// remove deletes the record of id, which must be present, and its key.
func (p *payloads) remove(id vector.ID) {
	r := p.recs.get(id)
	last := p.rows[len(p.rows)-1]
	p.rows[r.pos] = last
	last.pos = r.pos
	p.rows[len(p.rows)-1] = nil
	p.rows = p.rows[:len(p.rows)-1]
	p.keys.del(r.key, r.id)
	p.recs.del(id)
	p.unpost(r)
}

// match returns the ids of the records f matches; m is f compiled. When
// f is an equality, a set of equalities, or a conjunction holding one, the
// posting lists give the candidates and only they are checked; otherwise
// every record is.
func (p *payloads) match(f *Filter, m matcher) []vector.ID {
	return p.matchSet(f, m).slice()
}

// matched is the answer of matchSet: the matching ids either as a slice
// or, when one posting list is the whole answer, as that list itself.
type matched struct {
	ids []vector.ID
	set map[vector.ID]struct{} // a posting list: read it only, under the collection's lock
}

func (m matched) len() int {
	if m.set != nil {
		return len(m.set)
	}
	return len(m.ids)
}

// slice returns the ids as a new slice if they are a set.
func (m matched) slice() []vector.ID {
	if m.set == nil {
		return m.ids
	}
	ids := make([]vector.ID, 0, len(m.set))
	for id := range m.set {
		ids = append(ids, id)
	}
	return ids
}

// matchSet is match without the copy when a single posting list answers
// f exactly (an equality, or In with one value present): the list itself
// is returned, for the caller to read while it holds the collection's
// lock, under which the list cannot change.
func (p *payloads) matchSet(f *Filter, m matcher) matched {
	lists, exact, ok := p.candidates(f)
	if !ok {
		var ids []vector.ID
		for _, r := range p.rows {
			if m(r.md) {
				ids = append(ids, r.id)
			}
		}
		return matched{ids: ids}
	}
	if exact && len(lists) == 1 {
		return matched{set: lists[0]}
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	ids := make([]vector.ID, 0, n)
	for _, l := range lists {
		for id := range l {
			if exact || m(p.recs.get(id).md) {
				ids = append(ids, id)
			}
		}
	}
	return matched{ids: ids}
}

// candidates returns posting lists whose union holds every record f
// matches, and whether it holds only those (exact). ok is false if f has
// no equality to look up. The lists of one call are disjoint.
func (p *payloads) candidates(f *Filter) (lists []map[vector.ID]struct{}, exact, ok bool) {
	switch f.op {
	case opEq, opIn:
		seen := make(map[value]bool, len(f.vals))
		p.postMu.Lock()
		defer p.postMu.Unlock()
		ps := p.postingsLocked(f.key)
		for _, raw := range f.vals {
			v, err := toValue(raw)
			if err != nil || seen[v] {
				continue // compile has reported bad values already
			}
			seen[v] = true
			// The inner maps change only under the collection's
			// exclusive lock, so the caller may read them after
			// postMu is released.
			if l := ps[v]; len(l) > 0 {
				lists = append(lists, l)
			}
		}
		return lists, true, true
	case opAnd:
		best := -1
		for _, s := range f.subs {
			l, ex, ok := p.candidates(s)
			if !ok {
				continue
			}
			n := 0
			for _, x := range l {
				n += len(x)
			}
			if best < 0 || n < best {
				best, lists, exact = n, l, ex
			}
		}
		if best < 0 {
			return nil, false, false
		}
		// The lists hold exactly the matches only if the condition they
		// answer is the whole conjunction.
		return lists, exact && len(f.subs) == 1, true
	}
	return nil, false, false
}

// postingsLocked returns the posting lists of key, building them on first
// use. postMu is held.
func (p *payloads) postingsLocked(key string) postings {
	if ps := p.post[key]; ps != nil {
		return ps
	}
	ps := make(postings)
	for _, r := range p.rows {
		if v, ok := r.md.get(key); ok {
			ps.add(v, r.id)
		}
	}
	p.post[key] = ps
	return ps
}

// bitFilter is an allow-list of ids as a bitmap, for allow-lists too large
// for a [vector.IDSet] to be worth building: ids are dense (assigned from 1
// in order), so it is small and quick to fill and to test.
type bitFilter []uint64

func newBitFilter(maxID vector.ID, ids matched) bitFilter {
	b := make(bitFilter, maxID/64+1)
	for _, id := range ids.ids {
		b[id/64] |= 1 << (id % 64)
	}
	for id := range ids.set {
		b[id/64] |= 1 << (id % 64)
	}
	return b
}

// Allow reports whether id is in the set.
func (b bitFilter) Allow(id vector.ID) bool {
	w := id / 64
	return w < vector.ID(len(b)) && b[w]&(1<<(id%64)) != 0
}
