// Package versions decides what a reader of a collection sees.
//
// A collection stores every write of an item as a new version under an id
// never used before. A version exists in the store and the search index
// from the moment it is numbered until it is evicted, but readers see it
// only while it is published and has not expired. [State] keeps that
// state, and answers one question, asked one way: [State.View] at an
// instant gives [View.Allow], and filters that are nil when nothing is
// hidden. The write path and the sweeper only change the state; every
// read asks a View.
package versions

import (
	"math"

	"github.com/cairndb/cairn/vector"
)

// None is the time of a version that never expires (Unix nanoseconds are
// the times here; None is the least int64).
const None = math.MinInt64

// Lookup returns the ExpiresAt of version id (None for never) and whether
// it is published. The caller's table of records answers it; State
// asks it only about ids it was told of.
type Lookup func(id vector.ID) (expires int64, published bool)

// State is the visibility state of one collection's versions.
//
// It is not safe for concurrent use on its own: the collection's lock
// guards it, held exclusively to change it and shared to read it (View,
// and the methods that say so).
type State struct {
	lookup Lookup
	// shown holds the published versions less those a sweep has marked
	// expired: readers see them by a bit test while nothing else expired.
	shown bitset
	// hidden counts the versions the store and the index may hold that
	// are not published: numbered and not yet published, or retired and
	// not yet evicted.
	hidden int
	exp    expiry
}

// New returns the state of an empty collection whose records lookup
// describes.
func New(lookup Lookup) *State { return &State{lookup: lookup} }

// Numbered counts n new versions, about to reach the store and the index
// before they are published.
func (vs *State) Numbered(n int) { vs.hidden += n }

// Publish makes the numbered version id, which expires at expires (None
// for never), visible.
func (vs *State) Publish(id vector.ID, expires int64) {
	vs.hidden--
	vs.shown.set(id)
	if expires != None {
		vs.exp.add(id, expires)
	}
}

// Retire hides the published version id, which expires at expires: the
// store and the index still hold it until it is evicted.
func (vs *State) Retire(id vector.ID, expires int64) {
	vs.shown.clear(id)
	vs.hidden++
	if expires != None {
		vs.exp.live--
		vs.dropStale()
	}
}

// Evicted counts n versions that left the store and the index, after they
// were retired, or abandoned before they were published.
func (vs *State) Evicted(n int) { vs.hidden -= n }

// Hidden returns the number of versions the store and the index may hold
// that are not published.
func (vs *State) Hidden() int { return vs.hidden }

// Shown reports whether id is published and not marked expired: what a
// graph rebuilt now must hold. It is not what a reader sees, which
// [View.Allow] says.
func (vs *State) Shown(id vector.ID) bool { return vs.shown.has(id) }

// View returns what a reader at now (Unix nanoseconds) sees.
func (vs *State) View(now int64) View {
	return View{vs: vs, now: now, due: vs.exp.due(now)}
}

// View is what readers see at one instant. It reads the State it came
// from, so it is used under the same shared lock.
type View struct {
	vs  *State
	now int64
	// due is set if some published version may have expired by now and
	// not been marked: then each version's ExpiresAt must be checked.
	due bool
}

// Now returns the view's instant.
func (v View) Now() int64 { return v.now }

// Allow reports whether a reader sees version id: it is published, not
// marked expired, and not expired at the view's instant.
func (v View) Allow(id vector.ID) bool {
	if !v.vs.shown.has(id) {
		return false
	}
	if !v.due {
		return true
	}
	at, _ := v.vs.lookup(id)
	return at == None || at > v.now
}

// Expiring reports whether the view checks each version's ExpiresAt:
// some published version may have expired at its instant without a sweep
// having marked it.
func (v View) Expiring() bool { return v.due }

// hidesPublished reports whether some published version is not seen.
func (v View) hidesPublished() bool { return v.due || v.vs.exp.hiding() }

// Filter returns the filter of a search over what the store or the index
// holds (versions not published among them): nil when a reader sees every
// one of them.
func (v View) Filter() vector.Filter {
	switch {
	case v.due:
		return v
	case v.vs.hidden > 0 || v.vs.exp.hiding():
		return &v.vs.shown
	}
	return nil
}

// OfPublished returns the test of a search over published versions only
// (the keyword index, posting lists): nil when a reader sees all of them.
func (v View) OfPublished() func(vector.ID) bool {
	if !v.hidesPublished() {
		return nil
	}
	return v.Allow
}

// Keep removes from ids, published versions, in place, those a reader
// does not see, and returns what is left.
func (v View) Keep(ids []vector.ID) []vector.ID {
	if !v.hidesPublished() {
		return ids
	}
	out := ids[:0]
	for _, id := range ids {
		if v.Allow(id) {
			out = append(out, id)
		}
	}
	return out
}

// Count returns the number of versions a reader sees.
func (v View) Count() int {
	if !v.due {
		return v.vs.shown.n
	}
	n := 0
	v.vs.shown.each(func(id vector.ID) {
		if v.Allow(id) {
			n++
		}
	})
	return n
}
