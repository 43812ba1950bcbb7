package cairn

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// WaitRoutedForTest waits until no background measurement of the ways to
// the recall target runs on c.
func (c *Collection) WaitRoutedForTest() {
	for c.life.remeasuring.Load() {
		time.Sleep(5 * time.Millisecond)
	}
}

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
// they are most of it and the time is near (rebuild.go).
func (c *Collection) BuildAheadForTest(ctx context.Context) {
	c.mu.RLock()
	at, ok := c.cat.ver.NextExpiry()
	c.mu.RUnlock()
	if ok {
		c.buildAhead(ctx, at)
	}
}

// FakeClock is a clock that a test moves while other goroutines read it.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFakeClock returns a FakeClock at 2026-03-01 12:00 UTC.
func NewFakeClock() *FakeClock {
	return &FakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// QueryUnexpiredUntil runs query in a loop on g until stop closes, and
// fails t if a query errs or returns an item that had expired by clk's
// time when the query began.
func QueryUnexpiredUntil(t testing.TB, g *sync.WaitGroup, stop <-chan struct{}, clk *FakeClock, query func() ([]Result, error)) {
	g.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := clk.Now()
			rs, err := query()
			if err != nil {
				t.Error(err)
				return
			}
			for _, x := range rs {
				if !x.ExpiresAt.IsZero() && !x.ExpiresAt.After(start) {
					t.Errorf("query at %v returned %q, expired at %v", start, x.ID, x.ExpiresAt)
					return
				}
			}
		}
	})
}

// LoadedTenantsForTest returns how many tenants are in memory and their
// estimated bytes.
func (db *DB) LoadedTenantsForTest() (n int, bytes int64) {
	return db.tenants.loaded()
}

// RaceEnabled says the tests run under the race detector (race_test.go).
const RaceEnabled = raceEnabled

// WakeIdleSweepForTest wakes the DB's sweep of idle tenants at once, so
// that it looks at a test's clock again: unlike the wake of an eviction,
// within idleSweepGap of the last pass too.
func (db *DB) WakeIdleSweepForTest() {
	if s := db.idle.Load(); s != nil {
		select {
		case s.force <- struct{}{}:
		default:
		}
	}
}

// SetIdleSweptHookForTest sets a function called after every pass of the
// sweep of idle tenants, with how many tenants it loaded and its error;
// call it before any collection is created or loaded.
func (db *DB) SetIdleSweptHookForTest(h func(swept int, err error)) { db.idleSweptHook = h }

// IdleSweepRunningForTest reports whether the DB's sweep of idle tenants
// has started and not returned.
func (db *DB) IdleSweepRunningForTest() bool {
	s := db.idle.Load()
	if s == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// LoadedTenantNamesForTest returns the names of c's tenants in memory.
func (c *Collection) LoadedTenantNamesForTest() []string { return c.db.tenants.names(c) }
