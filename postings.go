package cairn

// This file holds the posting lists and the filter planner: which ids a
// filter matches, from posting lists where an equality allows, else by a
// scan of the published records.

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
// lock, under which the list cannot change.
func (cat *catalog) matchSet(f *Filter, m matcher) matched {
	return cat.matchSetInto(f, m, nil)
}

// matchSetInto is matchSet, appending to buf[:0] (which it may grow) the
// ids it returns in a slice.
func (cat *catalog) matchSetInto(f *Filter, m matcher, buf []vector.ID) matched {
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
		seen := make(map[value]bool, len(f.vals))
		cat.postMu.Lock()
		defer cat.postMu.Unlock()
		ps := cat.postingsLocked(f.key)
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
