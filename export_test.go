package cairn

import (
	"context"
	"time"

	"github.com/cairndb/cairn/vector"
)

// IndexForTest returns the index in use, so that benchmarks can compare a
// Query with a bare search of the very same index.
func (c *Collection) IndexForTest() vector.Index {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.idx
}

// SetClockForTest replaces the store's clock (time.Now), so that tests
// can move time; call it before any collection is created or loaded.
func (db *DB) SetClockForTest(now func() time.Time) { db.clock = now }

// SetSweptHookForTest sets a function called after every background
// sweep of expired items, with its outcome; call it before any collection
// is created or loaded.
func (db *DB) SetSweptHookForTest(h func(coll string, removed int, err error)) { db.sweptHook = h }

// NoSweeperForTest stops the background sweeper of every collection
// created or loaded from now on, so that a test's RemoveExpired calls see
// every expired item.
func (db *DB) NoSweeperForTest() { db.noSweeper = true }

// BuildAheadForTest does what the sweeper does before it sleeps until the
// soonest ExpiresAt: build the graph without the items expiring then, if
// they are most of it and the time is near (regraph.go).
func (c *Collection) BuildAheadForTest(ctx context.Context) {
	c.mu.RLock()
	at, ok := c.cat.exp.next()
	c.mu.RUnlock()
	if ok {
		c.buildAhead(ctx, at)
	}
}
