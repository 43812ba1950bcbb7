package cairn

// This file holds the rebuilding of a collection's graph without the
// expired items a sweep is about to remove, when they are most of it.

import (
	"context"
	"slices"
	"sync"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// regraphState is a collection's bookkeeping of graph rebuilds, under a
// lock of its own so that writers never wait for readers to update it.
type regraphState struct {
	mu sync.Mutex
	// unindexed are published versions that a rebuild left out of the
	// graph, as expired, until they are evicted.
	unindexed map[vector.ID]struct{}
	// running is set while a rebuild reads the store; the versions that
	// writes retire meanwhile wait in deferred before they leave it.
	running  bool
	deferred []vector.ID
}

// regraphMin is the fewest marked versions for which a sweep rebuilds the
// graph rather than unlinking them one by one; variable for tests.
var regraphMin = 1024

// regraphHook, if set, runs after a rebuild has listed the versions to
// build from and before it reads them: tests write there, as a user could
// while the build runs.
var regraphHook func()

// regraphDue reports whether a sweep should rebuild the graph idx before
// deleting the marked versions: when they are at least half of it, and at
// least regraphMin. Unlinking a node repairs the lists of the nodes that
// link to it, about sixteen of them; when most of a graph goes, each
// repair finds mostly dead neighbours and must walk through them to reach
// live ones (at 90% expired, 32-d: about 0.5 ms of CPU a removed item),
// while inserting the live remainder into a new graph costs a tenth of
// that a live item. mu is held.
func (c *Collection) regraphDue(idx *hnsw.Index) bool {
	m := len(c.cat.exp.marked)
	return m >= regraphMin && 2*m >= idx.Len()
}

// visibleIDs returns the ids of the published versions readers see (not
// marked expired), sorted. mu is held.
func (c *Collection) visibleIDs() []vector.ID {
	ids := make([]vector.ID, 0, len(c.cat.live))
	for _, r := range c.cat.live {
		if c.cat.vis.Allow(r.id) {
			ids = append(ids, r.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// regraph rebuilds the collection's HNSW graph from its visible versions,
// leaving out the marked ones, if regraphDue says so, and reports whether
// it did. The new graph is built beside the old one, which queries go on
// using, while writes go on too (their evictions from the store wait,
// so that every version the build reads stays there); then, holding wmu
// exclusively (no write in flight), it takes the versions written since,
// drops those deleted since, and replaces the old graph under mu. The
// marked versions it left out are remembered in unindexed, so that their
// eviction does not ask the graph to drop what it does not hold. On an
// error (ctx ended, a store that fails) the old graph stays, and the
// sweep unlinks as before.
func (c *Collection) regraph(ctx context.Context) (bool, error) {
	c.mu.RLock()
	old, ok := c.idx.(*hnsw.Index)
	due := ok && c.err == nil && c.regraphDue(old)
	c.mu.RUnlock()
	if !due || !c.startRegraph() {
		return false, nil
	}
	defer c.evictDeferred(ctx)
	// Versions retired from here on stay in the store until the end.
	c.mu.RLock()
	before := c.visibleIDs()
	c.mu.RUnlock()
	if regraphHook != nil {
		regraphHook()
	}
	idx, err := newIndex(HNSW, c.cfg, c.st)
	if err != nil {
		return false, err
	}
	if err := track(ctx, idx, before); err != nil {
		return false, err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.RLock()
	if c.err != nil || c.idx != vector.Index(old) {
		c.mu.RUnlock()
		return false, nil
	}
	now := c.visibleIDs()
	left := make(map[vector.ID]struct{})
	for _, r := range c.cat.live {
		if !c.cat.vis.Allow(r.id) {
			left[r.id] = struct{}{}
		}
	}
	c.mu.RUnlock()
	added, dropped := sortedDiff(now, before)
	if err := track(ctx, idx, added); err != nil {
		return false, err
	}
	if err := untrack(ctx, idx, dropped); err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false, nil
	}
	c.idx, c.dirty = idx, true
	c.rg.mu.Lock()
	c.rg.unindexed = left
	c.rg.mu.Unlock()
	return true, nil
}

// startRegraph marks a rebuild running, and reports false if one already
// is.
func (c *Collection) startRegraph() bool {
	c.rg.mu.Lock()
	defer c.rg.mu.Unlock()
	if c.rg.running {
		return false
	}
	c.rg.running = true
	return true
}

// evictDeferred ends a rebuild: the versions retired while it ran leave
// the store, as evictRetired would have done.
func (c *Collection) evictDeferred(ctx context.Context) {
	c.rg.mu.Lock()
	ids := c.rg.deferred
	c.rg.running, c.rg.deferred = false, nil
	c.rg.mu.Unlock()
	if len(ids) == 0 || c.be.evict(context.WithoutCancel(ctx), ids) != nil {
		return
	}
	c.mu.Lock()
	c.unpublished -= len(ids)
	c.mu.Unlock()
}

// sortedDiff returns the ids of a not in b and those of b not in a, both
// sorted and free of repeats.
func sortedDiff(a, b []vector.ID) (aOnly, bOnly []vector.ID) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			aOnly = append(aOnly, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			bOnly = append(bOnly, b[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return aOnly, bOnly
}

// indexedOf returns the ids of ids that the index holds: all of them,
// unless a rebuild left some out, which it forgets as they go.
func (c *Collection) indexedOf(ids []vector.ID) []vector.ID {
	c.rg.mu.Lock()
	defer c.rg.mu.Unlock()
	if len(c.rg.unindexed) == 0 {
		return ids
	}
	kept := make([]vector.ID, 0, len(ids))
	for _, id := range ids {
		if _, ok := c.rg.unindexed[id]; ok {
			delete(c.rg.unindexed, id)
		} else {
			kept = append(kept, id)
		}
	}
	return kept
}

// deferEvict reports whether a rebuild is reading the store, and if so
// keeps ids for it to evict when it ends.
func (c *Collection) deferEvict(ids []vector.ID) bool {
	c.rg.mu.Lock()
	defer c.rg.mu.Unlock()
	if c.rg.running {
		c.rg.deferred = append(c.rg.deferred, ids...)
	}
	return c.rg.running
}

// leftOut reports whether a rebuild left versions out of the graph that
// are not evicted yet.
func (c *Collection) leftOut() bool {
	c.rg.mu.Lock()
	defer c.rg.mu.Unlock()
	return len(c.rg.unindexed) > 0
}
