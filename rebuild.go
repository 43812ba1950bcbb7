package cairn

// This file holds the building of a new graph beside the index in use and
// its installing in place of it, with the writes made meanwhile: to
// rebuild the graph without the expired items a sweep is about to remove
// when they are most of it (now, or ahead of the expiry), and for a
// routing measurement (routing.go).

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/hnswseam"
	"github.com/cairndb/cairn/internal/pace"
	"github.com/cairndb/cairn/internal/reservoir"
	"github.com/cairndb/cairn/vector"
)

// rebuildState is a collection's bookkeeping of graph rebuilds, under a
// lock of its own so that writers never wait for readers to update it.
type rebuildState struct {
	mu sync.Mutex
	// unindexed are published versions that a rebuild left out of the
	// graph, as expired, until they are evicted.
	unindexed map[vector.ID]struct{}
	// running is set from a rebuild's list of versions until its graph
	// is installed or dropped; the versions that writes retire meanwhile
	// wait in deferred before they leave the store.
	running  bool
	deferred []vector.ID
	// ahead is a graph the sweeper built before an expiry, waiting for
	// the sweep to install it.
	ahead *builtIndex
}

// rebuildMin is the fewest marked versions for which a sweep rebuilds the
// graph rather than unlinking them one by one; variable for tests.
var rebuildMin = 1024

// rebuildHook, if set, runs after a rebuild has listed the versions to
// build from and before it reads them: tests write there, as a user could
// while the build runs.
var rebuildHook func()

// rebuildDue reports whether a sweep should rebuild the graph idx before
// deleting the marked versions: when they are at least half of it, and at
// least rebuildMin. Unlinking a node repairs the lists of the nodes that
// link to it, about sixteen of them; when most of a graph goes, each
// repair finds mostly dead neighbours and must walk through them to reach
// live ones (at 90% expired, 32-d: about 0.5 ms of CPU a removed item),
// while inserting the live remainder into a new graph costs a tenth of
// that a live item. mu is held.
func (c *Collection) rebuildDue(idx *hnsw.Index) bool {
	m := c.cat.ver.Marked()
	return m >= rebuildMin && 2*m >= idx.Len()
}

// visibleIDs returns the ids of the published versions not marked
// expired, sorted: those a graph rebuilt now holds. mu is held.
func (c *Collection) visibleIDs() []vector.ID {
	ids := make([]vector.ID, 0, len(c.cat.live))
	for _, r := range c.cat.live {
		if c.cat.ver.Shown(r.id) {
			ids = append(ids, r.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// builtIndex is a graph built from a list of versions (before), to replace
// old (of kind oldKind) once it has taken the writes since: or, after a
// routing measurement, the index of kind that won it (its route), which
// may be a scan.
type builtIndex struct {
	idx           vector.Index
	kind, oldKind IndexKind
	route         *measuredRoute
	old           vector.Index
	before        []vector.ID
	recorded      [][]float32 // the queries recorded into it before its build
	paced         bool        // built by buildGraph's paced way
	// until is the ExpiresAt up to which its versions were left out, for
	// a graph built ahead of an expiry; 0 for one built after it.
	until int64
}

// rebuildForSweep rebuilds the collection's HNSW graph without the marked
// versions, if rebuildDue says so, and reports whether it did: it installs
// the graph the sweeper built ahead of the expiry (prebuild) if there is
// one, else builds one now, with every core, beside the old graph, which
// queries go on using meanwhile. On an error (ctx ended, a store that
// fails) the old graph stays, and the sweep unlinks as before.
func (c *Collection) rebuildForSweep(ctx context.Context) (bool, error) {
	c.mu.RLock()
	old, ok := c.idx.(*hnsw.Index)
	due := ok && c.err == nil && c.rebuildDue(old)
	c.mu.RUnlock()
	if !due {
		return false, nil
	}
	c.life.rebuild.mu.Lock()
	g := c.life.rebuild.ahead
	c.life.rebuild.ahead = nil
	c.life.rebuild.mu.Unlock()
	if g == nil {
		var err error
		if g, err = c.buildGraph(ctx, graphBuild{due: c.onGraph}); g == nil || err != nil {
			return false, err
		}
	}
	return c.installGraph(ctx, g)
}

// onGraph reports whether the collection searches an HNSW graph. mu is
// held.
func (c *Collection) onGraph() bool {
	_, ok := c.idx.(*hnsw.Index)
	return ok
}

// graphBuild says how buildGraph builds: without the versions that expire
// by until (if non-zero), with workers goroutines (0 for every core),
// resting as long as it works if paced, and only if due (called with mu
// held) reports true.
type graphBuild struct {
	until   int64
	workers int
	paced   bool
	due     func() bool
	// queries, for a measurement of the ways to a recall target, are
	// taken once the build is due and recorded into the new graph before
	// it is built, so that the calibration its build ends with measures
	// on them.
	queries *reservoir.Reservoir
}

// buildGraph builds a new HNSW graph of the visible versions as b says,
// and returns it, or nil if a rebuild is already running or b.due reports
// false. From its list of versions on, until installGraph or dropGraph,
// the versions that writes retire stay in the store (deferEvict), so that
// the build finds every one it lists.
func (c *Collection) buildGraph(ctx context.Context, b graphBuild) (*builtIndex, error) {
	until := b.until
	c.life.rebuild.mu.Lock()
	if c.life.rebuild.running {
		c.life.rebuild.mu.Unlock()
		return nil, nil
	}
	c.life.rebuild.running = true
	c.life.rebuild.mu.Unlock()
	c.mu.RLock()
	old, oldKind := c.idx, c.kind
	isDue := c.err == nil && b.due()
	var before []vector.ID
	if isDue {
		before = make([]vector.ID, 0, len(c.cat.live))
		for _, r := range c.cat.live {
			if c.cat.ver.Shown(r.id) && (until == 0 || r.expires == noTime || r.expires > until) {
				before = append(before, r.id)
			}
		}
	}
	c.mu.RUnlock()
	if !isDue {
		c.dropGraph(ctx)
		return nil, nil
	}
	slices.Sort(before)
	if rebuildHook != nil {
		rebuildHook()
	}
	cfg := c.indexConfig()
	if b.workers > 0 {
		cfg.HNSW.Workers = b.workers
	}
	if b.paced {
		cfg.HNSW.Progress = pace.Progress(cfg.HNSW.Progress)
	}
	var recorded [][]float32
	if b.queries != nil {
		recorded = b.queries.Take()
	}
	idx, err := newIndex(HNSW, cfg, c.st)
	if err == nil {
		err = recordQueries(idx, recorded)
	}
	if err == nil {
		err = track(ctx, idx, before)
	}
	if err == nil {
		err = calibrated(ctx, idx)
	}
	if err != nil {
		c.dropGraph(ctx)
		c.restoreQueries(recorded)
		return nil, err
	}
	return &builtIndex{idx: idx, kind: HNSW, oldKind: oldKind, old: old, before: before, recorded: recorded, until: until, paced: b.paced}, nil
}

// calibrated waits for the calibration that the build or load of idx, a
// graph with a recall target, started to end: until its first
// calibration, a graph of hnsw.MinCalibrationLen nodes or more is searched
// at the default beam width, whatever its target, so a graph put in use
// before that would answer below the target (the graph it replaces, or
// the one the file saved, was calibrated to meet it: at a target no beam
// reaches, by searching exactly). A graph loaded with the calibration it
// was saved with (hnsw.Index.ReadFrom: saved for the same target) starts
// none, and this returns at once; one the rules redo at once (the graph
// doubled or lost a quarter since it was measured) is waited for as a
// first one is.
func calibrated(ctx context.Context, idx vector.Index) error {
	h, ok := idx.(*hnsw.Index)
	if !ok || h.Options().TargetRecall == 0 {
		return nil
	}
	_, _, err := h.WaitCalibration(ctx)
	return err
}

// installGraph makes g the collection's index (of g's kind): holding wmu exclusively (no write in flight), it takes
// the versions written since g's list was made and drops those deleted or
// marked expired since, so that g then holds exactly the visible versions
// (an exact scan, holding no list, takes nothing), and swaps it in under
// mu. The
// marked versions it does not hold are remembered in unindexed, so that
// their eviction does not ask the graph to drop them. It ends the
// rebuild (dropGraph) whatever happens; if the index changed since g's
// list (a switch), g is dropped.
func (c *Collection) installGraph(ctx context.Context, g *builtIndex) (bool, error) {
	defer c.dropGraph(ctx)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.RLock()
	if c.err != nil || c.idx != g.old {
		c.mu.RUnlock()
		return false, nil
	}
	now := c.visibleIDs()
	left := make(map[vector.ID]struct{})
	for _, r := range c.cat.live {
		if !c.cat.ver.Shown(r.id) {
			left[r.id] = struct{}{}
		}
	}
	c.mu.RUnlock()
	added, dropped := sortedDiff(now, g.before)
	if h, ok := g.idx.(*hnsw.Index); ok && g.paced {
		// Built by one resting worker; from now on the collection's.
		opts := c.indexConfig().HNSW
		hnswseam.SetBuild(h, opts.Workers, opts.Progress)
	}
	if err := track(ctx, g.idx, added); err != nil {
		return false, err
	}
	if err := untrack(ctx, g.idx, dropped); err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false, nil
	}
	c.idx, c.kind = g.idx, g.kind
	c.dirty = c.dirty || g.kind == HNSW
	c.life.rebuild.mu.Lock()
	c.life.rebuild.unindexed = left
	c.life.rebuild.mu.Unlock()
	return true, nil
}

// dropGraph ends a rebuild: the versions retired while it ran leave the
// store, as evictRetired would have done.
func (c *Collection) dropGraph(ctx context.Context) {
	c.life.rebuild.mu.Lock()
	ids := c.life.rebuild.deferred
	c.life.rebuild.running, c.life.rebuild.deferred = false, nil
	c.life.rebuild.mu.Unlock()
	if len(ids) == 0 || c.be.evict(context.WithoutCancel(ctx), ids) != nil {
		return
	}
	c.mu.Lock()
	c.cat.ver.Evicted(len(ids))
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
	c.life.rebuild.mu.Lock()
	defer c.life.rebuild.mu.Unlock()
	if len(c.life.rebuild.unindexed) == 0 {
		return ids
	}
	kept := make([]vector.ID, 0, len(ids))
	for _, id := range ids {
		if _, ok := c.life.rebuild.unindexed[id]; ok {
			delete(c.life.rebuild.unindexed, id)
		} else {
			kept = append(kept, id)
		}
	}
	return kept
}

// deferEvict reports whether a rebuild is reading the store, and if so
// keeps ids for it to evict when it ends.
func (c *Collection) deferEvict(ids []vector.ID) bool {
	c.life.rebuild.mu.Lock()
	defer c.life.rebuild.mu.Unlock()
	if c.life.rebuild.running {
		c.life.rebuild.deferred = append(c.life.rebuild.deferred, ids...)
	}
	return c.life.rebuild.running
}

// leftOut reports whether a rebuild left versions out of the graph that
// are not evicted yet.
func (c *Collection) leftOut() bool {
	c.life.rebuild.mu.Lock()
	defer c.life.rebuild.mu.Unlock()
	return len(c.life.rebuild.unindexed) > 0
}

// aheadGroup is how far past the soonest ExpiresAt the sweeper looks for
// the versions that expire together, when it builds a graph ahead.
const aheadGroup = time.Second

// aheadLead returns how long before a mass expiry the sweeper starts
// building the graph without it, for n versions of dim dimensions: twice
// an estimate of the build on one core (an insert at M = 16 and
// EfConstruction = 200 scores about 3,000 vectors, at about 0.2 ns a
// dimension, plus the walk), at least ten seconds and at most ten minutes.
func aheadLead(n, dim int) time.Duration {
	per := 20*time.Microsecond + time.Duration(dim)*600*time.Nanosecond
	return min(max(2*time.Duration(n)*per, 10*time.Second), 10*time.Minute)
}

// buildAhead is the sweeper's look ahead: if the versions that expire
// within aheadGroup of at, the soonest ExpiresAt, are most of the graph
// (rebuildDue's rule) and at is within aheadLead (for the half that stays
// at most), it builds the graph of the others now, on all cores but one,
// so that the sweep that removes them installs it at once instead of
// building it while every query walks through the expired nodes; those of
// them that have not expired yet when it is installed are added to it
// then. A graph built ahead that no sweep installed within aheadGroup of
// at (its versions were replaced, say) is dropped at the next look.
func (c *Collection) buildAhead(ctx context.Context, at int64) {
	now := c.now()
	c.life.rebuild.mu.Lock()
	g := c.life.rebuild.ahead
	if g != nil && now > g.until {
		c.life.rebuild.ahead = nil
	}
	c.life.rebuild.mu.Unlock()
	if g != nil {
		if now > g.until {
			c.dropGraph(ctx)
		}
		return
	}
	c.mu.RLock()
	old, ok := c.idx.(*hnsw.Index)
	if !ok || c.err != nil {
		c.mu.RUnlock()
		return
	}
	until, size := at+int64(aheadGroup), old.Len()
	due := time.Duration(at-now) <= aheadLead(size/2, c.cfg.Dim) &&
		c.cat.ver.ExpiringBy(until, max(rebuildMin, (size+1)/2))
	c.mu.RUnlock()
	if !due {
		return
	}
	g, err := c.buildGraph(ctx, graphBuild{until: until, workers: max(1, runtime.GOMAXPROCS(0)-1), due: c.onGraph})
	if g == nil || err != nil {
		return
	}
	c.life.rebuild.mu.Lock()
	c.life.rebuild.ahead = g
	c.life.rebuild.mu.Unlock()
}
