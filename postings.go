package cairn

// This file holds the posting lists and the filter planner: which ids a
// filter matches, from posting lists where an equality allows (or, for a
// negated equality, as every published record but those of the lists),
// else by a scan of the published records.

import (
	"slices"

	"github.com/cairndb/cairn/vector"
)

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

// matched is the answer of matchSet: the matching ids either as a slice,
// or, when one posting list is the whole answer, as that list itself, or,
// for a negated equality, as every published record except those of the
// posting lists in except.
type matched struct {
	ids []vector.ID
	set map[vector.ID]struct{} // a posting list: read it only, under the collection's lock
	// except, if not nil, are disjoint posting lists of published
	// records; the answer is live (the published records) less them,
	// n of them.
	except []map[vector.ID]struct{}
	live   []*record
	n      int
}

func (m matched) len() int {
	switch {
	case m.except != nil:
		return m.n
	case m.set != nil:
		return len(m.set)
	}
	return len(m.ids)
}

// slice returns the ids as a new slice if they are not one already.
func (m matched) slice() []vector.ID {
	if m.set == nil && m.except == nil {
		return m.ids
	}
	return m.appendIDs(make([]vector.ID, 0, m.len()))
}

// appendIDs appends the ids to buf.
func (m matched) appendIDs(buf []vector.ID) []vector.ID {
	if m.except != nil {
		for _, r := range m.live {
			if !excluded(m.except, r.id) {
				buf = append(buf, r.id)
			}
		}
		return buf
	}
	for id := range m.set {
		buf = append(buf, id)
	}
	return append(buf, m.ids...)
}

// excluded reports whether id is in one of lists.
func excluded(lists []map[vector.ID]struct{}, id vector.ID) bool {
	for _, l := range lists {
		if _, ok := l[id]; ok {
			return true
		}
	}
	return false
}

// allBut is the filter of a negated equality's matches: it allows the ids
// of no list in except, and, if vis is set, only those vis allows (the
// index may hold versions readers do not see). It is read under the
// collection's lock.
type allBut struct {
	except []map[vector.ID]struct{}
	vis    vector.Filter
}

// Allow reports whether id is in none of the lists (and visible).
func (a *allBut) Allow(id vector.ID) bool {
	return (a.vis == nil || a.vis.Allow(id)) && !excluded(a.except, id)
}

// match returns the ids of the published records f matches; m is f
// compiled.
func (cat *catalog) match(f *Filter, m matcher) []vector.ID {
	return cat.matchSet(f, m).slice()
}

// matchSet returns the ids of the published records f matches; m is f
// compiled. When f is an equality, a set of equalities, or a conjunction
// holding one, the posting lists give the candidates and only they are
// checked; otherwise every record is. When a single posting list answers
// f exactly (an equality, or In with one value present), the list itself
// is returned, for the caller to read while it holds the collection's
// lock, under which the list cannot change. When f negates what posting
// lists answer exactly (Ne, Not(Eq), Not(In)), the answer is their
// complement, also read under the lock.
func (cat *catalog) matchSet(f *Filter, m matcher) matched {
	return cat.matchSetInto(f, m, nil, nil)
}

// matchSetInto is matchSet, appending to buf[:0] (which it may grow) the
// ids it returns in a slice, and to lbuf[:0] the lists of a complement.
func (cat *catalog) matchSetInto(f *Filter, m matcher, buf []vector.ID, lbuf []map[vector.ID]struct{}) matched {
	if f.op == opEq {
		// One equality: its posting list is the answer, looked up
		// without the bookkeeping of candidates.
		v, err := toValue(f.vals[0])
		if err != nil {
			return matched{} // compile has reported it already
		}
		cat.postMu.Lock()
		l := cat.postingsLocked(f.key)[v]
		cat.postMu.Unlock()
		if len(l) == 0 {
			return matched{ids: buf[:0]}
		}
		return matched{set: l}
	}
	if f.op == opNe || f.op == opNot {
		// A negated equality: every published record but the posting
		// lists' (which hold only published records), none visited.
		lists, exact, ok := []map[vector.ID]struct{}(nil), false, false
		if f.op == opNe {
			lists, exact, ok = cat.appendValueLists(lbuf[:0], f.key, f.vals), true, true
		} else {
			lists, exact, ok = cat.candidates(f.subs[0])
		}
		if ok && exact {
			n := len(cat.live)
			for _, l := range lists {
				n -= len(l)
			}
			if lists == nil {
				lists = []map[vector.ID]struct{}{}
			}
			return matched{except: lists, live: cat.live, n: n}
		}
	}
	lists, exact, ok := cat.candidates(f)
	if !ok {
		ids := buf[:0]
		for _, r := range cat.live {
			if m(r) {
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
	ids := slices.Grow(buf[:0], n)
	for _, l := range lists {
		for id := range l {
			if exact || m(cat.recs.get(id)) {
				ids = append(ids, id)
			}
		}
	}
	return matched{ids: ids}
}

// candidates returns posting lists whose union holds every record f
// matches, and whether it holds only those (exact). ok is false if f has
// no equality to look up. The lists of one call are disjoint.
func (cat *catalog) candidates(f *Filter) (lists []map[vector.ID]struct{}, exact, ok bool) {
	switch f.op {
	case opEq, opIn:
		return cat.appendValueLists(nil, f.key, f.vals), true, true
	case opAnd:
		best := -1
		for _, s := range f.subs {
			l, ex, ok := cat.candidates(s)
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

// appendValueLists appends to lists the non-empty posting lists of key's
// values vals (each once), which are disjoint.
func (cat *catalog) appendValueLists(lists []map[vector.ID]struct{}, key string, vals []any) []map[vector.ID]struct{} {
	var seen map[value]bool
	if len(vals) > 1 {
		seen = make(map[value]bool, len(vals))
	}
	cat.postMu.Lock()
	defer cat.postMu.Unlock()
	ps := cat.postingsLocked(key)
	for _, raw := range vals {
		v, err := toValue(raw)
		if err != nil || seen[v] {
			continue // compile has reported bad values already
		}
		if seen != nil {
			seen[v] = true
		}
		// The inner maps change only under the collection's exclusive
		// lock, so the caller may read them after postMu is released.
		if l := ps[v]; len(l) > 0 {
			lists = append(lists, l)
		}
	}
	return lists
}

// postingsLocked returns the posting lists of key, building them on first
// use. postMu is held.
func (cat *catalog) postingsLocked(key string) postings {
	if ps := cat.post[key]; ps != nil {
		return ps
	}
	ps := make(postings)
	for _, r := range cat.live {
		if v, ok := r.md.get(key); ok {
			ps.add(v, r.id)
		}
	}
	cat.post[key] = ps
	return ps
}
