package cairn

// This file holds the key index: the caller's ids (keys) to numeric ids.

import (
	"hash/maphash"

	"github.com/cairndb/cairn/vector"
)

// keyIndex maps the caller's ids (keys) to the collection's numeric ids.
//
// It is keyed by a 64-bit seeded hash of the key rather than by the key
// itself. A map of integers holds no pointers, so the garbage collector
// never scans it, and growing it rehashes integers in place instead of
// reading every key string again from wherever it lies in memory, which is
// most of what a map of strings costs as it grows. The key of an entry is
// looked up, to confirm a hit, through a resolver that knows the key of
// each numeric id (the catalog, from its record).
//
// Two keys with the same hash are rare (about n²/2⁶⁵ for n keys) but
// handled: the first holds the hash in ids, the others go to more, and
// when the holder goes, one of them takes its place.
//
// A keyIndex is not safe for concurrent use; the collection's lock guards
// it (shared for get, exclusive for the rest).
type keyIndex struct {
	ids  map[uint64]vector.ID // hash → id of the key holding it
	more map[string]vector.ID // keys whose hash another key holds
	seed maphash.Seed
	mask uint64 // all ones; tests narrow it to make hashes collide
}

// keyResolver returns the key of a numeric id that a keyIndex holds.
type keyResolver interface {
	keyOf(id vector.ID) string
}

func newKeyIndex() keyIndex {
	return keyIndex{ids: make(map[uint64]vector.ID), seed: maphash.MakeSeed(), mask: ^uint64(0)}
}

func (x *keyIndex) len() int { return len(x.ids) + len(x.more) }

func (x *keyIndex) hash(k string) uint64 { return maphash.String(x.seed, k) & x.mask }

// get returns the id of k.
func (x *keyIndex) get(k string, r keyResolver) (vector.ID, bool) {
	id, ok := x.ids[x.hash(k)]
	if !ok {
		return 0, false
	}
	if r.keyOf(id) == k {
		return id, true
	}
	id, ok = x.more[k]
	return id, ok
}

// add enters k with id, unless k is there already: then it returns the id
// k has and true, and changes nothing. r must resolve id once add returns.
func (x *keyIndex) add(k string, id vector.ID, r keyResolver) (vector.ID, bool) {
	h := x.hash(k)
	held, ok := x.ids[h]
	if !ok {
		x.ids[h] = id
		return id, false
	}
	if r.keyOf(held) == k {
		return held, true
	}
	if old, ok := x.more[k]; ok {
		return old, true
	}
	if x.more == nil {
		x.more = make(map[string]vector.ID)
	}
	x.more[k] = id
	return id, false
}

// move gives k, which has id old, the id new.
func (x *keyIndex) move(k string, old, new vector.ID) {
	if h := x.hash(k); x.ids[h] == old {
		x.ids[h] = new
		return
	}
	x.more[k] = new
}

// del removes k, which has id.
func (x *keyIndex) del(k string, id vector.ID) {
	h := x.hash(k)
	if held, ok := x.ids[h]; !ok || held != id {
		delete(x.more, k)
		return
	}
	delete(x.ids, h)
	for mk, mid := range x.more { // almost always empty
		if x.hash(mk) == h {
			delete(x.more, mk)
			x.ids[h] = mid
			return
		}
	}
}
