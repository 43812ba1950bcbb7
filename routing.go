// This file holds when an Auto collection changes or measures its index:
// the switch to HNSW at its threshold, and, with a recall target, the
// measurements of its ways to the target (made by internal/route, under
// the collection's locks here) and the installing of their verdicts.

package cairn

import (
	"context"
	"slices"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/reservoir"
	"github.com/cairndb/cairn/internal/route"
	"github.com/cairndb/cairn/vector"
)

// maybeSwitch builds an HNSW graph for an Auto collection that has
// reached its threshold and makes it the collection's index, or, with a
// recall target, measures the ways to it for the first time (switchIndex),
// on the path of the write that reached it. Later measurements run in the
// background (measureLater). If the build fails or ctx ends, the collection
// stays on its scan, keeps the queries the measurement took, and the next
// write tries again. It also saves a verdict reached while the collection
// was only read (at its load, or measured on queries), which waited for a
// write (saveRoute).
func (c *Collection) maybeSwitch(ctx context.Context) {
	c.mu.RLock()
	due := c.switchDue()
	unsaved := c.life.routeUnsaved && c.wrote // a verdict reads learned
	c.measureLater()
	c.mu.RUnlock()
	if !due && !unsaved {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.RLock()
	due = c.switchDue()
	c.mu.RUnlock()
	if due {
		c.switchIndex(ctx)
	}
	c.saveRoute(ctx)
}

// switchDue reports whether an Auto collection is due to switch to HNSW,
// or, with a recall target, to measure the ways to it for the first time.
// mu is held.
func (c *Collection) switchDue() bool {
	return c.err == nil && c.cfg.Index == Auto && (c.kind == Flat || c.kind == QFlat) &&
		c.life.route == nil && c.cat.len() >= c.cfg.AutoThreshold
}

// switchIndex builds an HNSW graph of the collection's items and makes it
// the collection's index, or, with a recall target, the way that meets the
// target fastest (route.Choose), measured on the queries kept if there are
// any. It holds wmu exclusively, so no write is in flight and none starts
// meanwhile, while queries go on with the scan.
func (c *Collection) switchIndex(ctx context.Context) {
	c.mu.RLock()
	ids := make([]vector.ID, len(c.cat.live))
	for i, r := range c.cat.live {
		ids[i] = r.id
	}
	c.mu.RUnlock()
	slices.Sort(ids)
	idx, err := newIndex(HNSW, c.indexConfig(), c.st)
	if err != nil {
		return
	}
	var recorded [][]float32
	if c.cfg.routed() {
		recorded = c.life.queries.Take()
		err = recordQueries(idx, recorded)
	}
	if err == nil {
		err = track(ctx, idx, ids)
	}
	r := route.Verdict{Kind: route.HNSW, Index: idx}
	if err == nil && c.cfg.routed() {
		r, err = chooseRouteFunc(ctx, idx.(*hnsw.Index), c.st, ids, &c.cfg.QFlat, recorded, false)
	}
	if err != nil {
		c.restoreQueries(recorded)
		return
	}
	var rt *measuredRoute
	if c.cfg.routed() {
		rt = routeOf(r, len(ids), len(recorded))
	}
	c.mu.Lock()
	if c.err == nil {
		c.idx, c.kind, c.life.route = r.Index, indexKind(r.Kind), rt
		c.dirty = c.dirty || r.Kind == route.HNSW
		c.life.routeUnsaved = rt != nil
	}
	c.mu.Unlock()
	c.saveRoute(ctx)
}

// saveRoute saves the routing verdict in use with the collection's
// settings, if it is not saved yet and a write has changed the collection
// since its load (wrote); else it stays in memory, for Close to save if a
// write comes. A verdict is a hint: if it is lost, the next open measures
// again. wmu is held exclusively, so that verdicts are saved in order.
func (c *Collection) saveRoute(ctx context.Context) {
	c.mu.RLock()
	r, due := c.life.route, c.err == nil && c.wrote && c.life.routeUnsaved
	c.mu.RUnlock()
	if !due {
		return
	}
	if c.be.saveRoute(ctx, r) == nil {
		c.mu.Lock()
		if c.life.route == r {
			c.life.routeUnsaved = false
		}
		c.mu.Unlock()
	}
}

// recordQueries records qs, queries a scan answered, into the graph idx
// before it is built, so that the calibration its build ends with measures
// on them (hnsw.Index.RecordQueries).
func recordQueries(idx vector.Index, qs [][]float32) error {
	if len(qs) == 0 {
		return nil
	}
	return idx.(*hnsw.Index).RecordQueries(qs)
}

// keepsQueries reports whether the collection keeps the queries it answers
// for its next routing measurement: an Auto collection with a recall target
// while a scan answers them. mu is held.
func (c *Collection) keepsQueries() bool {
	return c.cfg.routed() && (c.kind == Flat || c.kind == QFlat)
}

// keepQuery adds the unfiltered vector query q, which the scan answered, to
// the queries kept, and starts a measurement on them if one is due. mu is
// held.
func (c *Collection) keepQuery(q []float32) {
	c.life.queries.Limit(reservoir.Size(c.cat.len(), c.cfg.Dim))
	c.life.queries.Add(q)
	c.measureLater()
}

// measureDue reports whether the scan in use, which won the last
// measurement, is due to be measured against the graph again: the
// collection has doubled since, or that measurement was on held-out vectors
// (or too few queries) and enough queries have been kept since to measure
// on them; and no failed measurement's back-off is running. mu is held.
func (c *Collection) measureDue() bool {
	if c.err != nil || !c.keepsQueries() || c.life.route == nil {
		return false
	}
	n := c.cat.len()
	due := n >= c.life.route.next ||
		!c.life.route.onQueries() && n >= c.cfg.AutoThreshold && c.life.queries.Len() >= hnsw.MinRealQueries
	return due && c.life.retry.Ready(time.Now())
}

// measureLater starts a measurement in the background (remeasure) if one
// is due and none is running. mu is held.
func (c *Collection) measureLater() {
	if c.measureDue() && c.life.remeasuring.CompareAndSwap(false, true) {
		go c.remeasure()
	}
}

// remeasure measures the ways to the recall target again while measureDue
// says so, in its own goroutine; it ends early if the collection closes. A
// measurement that fails (a store error) ends it and starts a back-off.
func (c *Collection) remeasure() {
	for {
		ok, err := c.measureBeside(c.bg)
		c.mu.Lock()
		if err != nil {
			c.life.retry.Fail(time.Now())
		} else if ok {
			c.life.retry = route.Retry{}
		}
		again := ok && c.measureDue()
		c.mu.Unlock()
		if !again {
			c.life.remeasuring.Store(false)
			// A write or query may have made one due after the look
			// above and before the flag fell, and found it still set.
			c.mu.RLock()
			c.measureLater()
			c.mu.RUnlock()
			return
		}
	}
}

// measureBeside runs one measurement of the ways to the target beside
// queries and writes, and reports whether it came to a verdict, or the
// error that stopped it (the queries it took are then kept for the next).
// It builds the graph as a rebuild does (rebuild.go), by one worker that
// rests as long as it works, so that queries and writes keep the rest of
// the machine, measures on the queries kept, and holds wmu only to install
// the way that won, if it is not the scan in use, with the writes made
// meanwhile, and to keep its verdict.
func (c *Collection) measureBeside(ctx context.Context) (verdict bool, err error) {
	// buildGraph gives the queries back if it fails; from here on, this
	// does.
	g, err := c.buildGraph(ctx, graphBuild{workers: 1, paced: true, due: c.measureDue, queries: &c.life.queries})
	if g == nil || err != nil {
		return false, err
	}
	recorded := g.recorded
	defer func() {
		if err != nil {
			c.restoreQueries(recorded)
		}
	}()
	r, err := chooseRouteFunc(ctx, g.idx.(*hnsw.Index), c.st, g.before, &c.cfg.QFlat, recorded, true)
	if err != nil {
		c.dropGraph(ctx)
		return false, err
	}
	g.idx, g.kind, g.route = r.Index, indexKind(r.Kind), routeOf(r, len(g.before), len(recorded))
	if g.kind == g.oldKind {
		c.dropGraph(ctx) // the scan in use won again: it stays
	} else if ok, err := c.installGraph(ctx, g); !ok || err != nil {
		return false, err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	current := c.err == nil && (c.idx == g.old || c.idx == g.idx)
	if current {
		c.life.route, c.life.routeUnsaved = g.route, true
	}
	c.mu.Unlock()
	if current {
		c.saveRoute(ctx) // only if written to: queries started this
	}
	return current, nil
}

// restoreQueries gives qs, queries taken by a measurement that failed,
// back to the sample of queries kept, for the next measurement.
func (c *Collection) restoreQueries(qs [][]float32) {
	c.mu.RLock()
	c.life.queries.Limit(reservoir.Size(c.cat.len(), c.cfg.Dim))
	c.mu.RUnlock()
	for _, q := range qs {
		c.life.queries.Add(q)
	}
}
