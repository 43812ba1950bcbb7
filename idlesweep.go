package cairn

// This file holds the sweep of the tenants that are not loaded. A loaded
// tenant's own sweeper removes its expired items and lets go of the
// history its policy no longer keeps (expiry.go); a tenant no call
// loads would keep both in the file for ever. So a file's writer looks,
// by two indexes of the file (sqlitestore's DueTenants), for the tenants
// that hold something due, and loads each through the path every call
// takes: its sweeper's first pass, the one every load runs, does what an
// expiry does; then the sweep closes it again, as the budget would. What
// an expiry does has one owner, the loaded collection's sweeper.

import (
	"context"
	"errors"
	"math"
	"time"
)

// idleSweepRetry is how soon a sweep looks again when something it
// found due is still in the file after its pass: a loaded tenant's, which
// its own sweeper is removing, or one whose sweep failed.
const idleSweepRetry = time.Second

// idleSweepGap is the least time from the end of a pass to the start of
// the next one that an eviction asks for: each pass queries the file on
// the writer's connection, and with a small TenantMemory every call to
// another tenant evicts one.
const idleSweepGap = time.Second

// dueTenantsPage is how many due tenants a pass asks the file for at a
// time; it sweeps them one at a time.
const dueTenantsPage = 64

// idleSweep is a file-backed, writable DB's sweep of the tenants that are
// not loaded, in the background: it sleeps until the soonest time that an
// item of a tenant of a loaded collection expires, or that a history
// state of one passes its collection's KeepHistory.For (at most
// maxSweepWait, or until a tenant is evicted, which wakes it, at most
// once every idleSweepGap), then
// sweeps every tenant with something due that is not loaded, one at a
// time. The tenants of a collection the program has not loaded
// ([DB.Collection]) are not swept, as the collection itself is not.
type idleSweep struct {
	db    *DB
	wake  chan struct{}
	force chan struct{} // a test's wake, which no gap defers
	stop  context.CancelFunc
	done  chan struct{} // closed when the sweep's goroutine has returned
}

// startIdleSweepLocked starts the DB's sweep of idle tenants, once, for
// a writable file and unless a test turned sweepers off; called when a
// collection is entered in db.colls, so that a test's clock and hooks,
// set before, are the sweep's. db.mu is held.
func (db *DB) startIdleSweepLocked() {
	if db.idle.Load() != nil || db.persist == nil || db.readOnly || db.noSweeper || db.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &idleSweep{db: db, wake: make(chan struct{}, 1), force: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	db.idle.Store(s)
	go s.run(ctx)
}

// wakeIdleSweep tells the sweep of idle tenants to look again: a tenant
// was evicted, whose items expire sooner, perhaps, than the sweep sleeps.
func (db *DB) wakeIdleSweep() {
	if s := db.idle.Load(); s != nil {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

func (s *idleSweep) run(ctx context.Context) {
	defer close(s.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	due := time.Now()  // when timer fires
	var last time.Time // when the last pass ended
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.force:
		case <-s.wake:
			// Evictions come in runs, one for each tenant loaded past the
			// budget: a wake within idleSweepGap of the last pass is
			// served by a pass at the gap's end.
			if soon := last.Add(idleSweepGap); time.Now().Before(soon) {
				if soon.Before(due) {
					timer.Reset(time.Until(soon))
					due = soon
				}
				continue
			}
		case <-timer.C:
		}
		swept, wait, err := s.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if h := s.db.idleSweptHook; h != nil {
			h(swept, err)
		}
		last = time.Now()
		timer.Reset(wait)
		due = last.Add(wait)
	}
}

// pass sweeps the due tenants of every loaded collection kept in the
// file, and returns how many it loaded and how long to sleep before the
// next pass.
func (s *idleSweep) pass(ctx context.Context) (swept int, wait time.Duration, err error) {
	db := s.db
	db.mu.RLock()
	colls := make([]*Collection, 0, len(db.colls))
	for _, c := range db.colls {
		if c.tenantStore() != nil {
			colls = append(colls, c)
		}
	}
	db.mu.RUnlock()
	next := int64(math.MaxInt64)
	for _, c := range colls {
		n, at, cerr := c.sweepIdleTenants(ctx)
		swept += n
		next = min(next, at)
		if ctx.Err() != nil {
			return swept, 0, ctx.Err()
		}
		if cerr != nil && c.closedErr() == nil && err == nil {
			err = cerr
		}
	}
	wait = maxSweepWait
	if next != math.MaxInt64 {
		now := db.clock().UnixNano()
		switch d := next - now; {
		case next <= now:
			wait = idleSweepRetry // due while the pass ran, or left (above)
		case d > 0: // else next - now overflowed: far off
			wait = min(wait, time.Duration(d))
		}
	}
	if err != nil {
		// A tenant that fails to load or sweep (a failing disk, a damaged
		// row): the others were swept; it is tried again later.
		wait = maxSweepWait
	}
	return swept, wait, err
}

// historyAge is the age past which c's policy lets go of a history
// state, 0 for none.
func (c *Collection) historyAge() time.Duration {
	if h := c.cfg.KeepHistory; h != nil {
		return h.For
	}
	return 0
}

// sweepIdleTenants sweeps every tenant of c, not loaded, that holds an
// item expired or a history state older than c's policy keeps, and
// returns how many it swept and the time from which one of c's tenants
// has something due next (math.MaxInt64: nothing).
func (c *Collection) sweepIdleTenants(ctx context.Context) (swept int, next int64, err error) {
	next = math.MaxInt64
	st := c.tenantStore()
	now := c.now()
	before, age := int64(math.MinInt64), c.historyAge()
	if age > 0 {
		before = now - int64(age)
	}
	for after := int64(0); ; {
		due, derr := st.DueTenants(ctx, now, before, after, dueTenantsPage)
		if derr != nil {
			return swept, next, derr
		}
		for _, t := range due {
			ok, terr := c.sweepIdleTenant(ctx, t.Name)
			if ctx.Err() != nil {
				return swept, next, ctx.Err()
			}
			if terr != nil && err == nil {
				err = terr // the others are swept all the same
			}
			if ok {
				swept++
			}
			after = t.ID
		}
		if len(due) < dueTenantsPage {
			break
		}
	}
	exp, ok, until, pastOK, nerr := st.TenantsNextDue(ctx)
	if nerr != nil {
		return swept, next, nerr
	}
	if ok {
		next = exp
	}
	if pastOK && age > 0 {
		at := until + int64(age) + 1 // due once until < now - age
		if at < until {
			at = math.MaxInt64
		}
		next = min(next, at)
	}
	return swept, next, err
}

// sweepIdleTenant loads the tenant name of c, unless it is loaded (then
// its own sweeper has its due items), waits for its sweeper's first pass
// (RemoveExpired: its expired items and the history its policy no longer
// keeps), and closes it again unless a call has used it meanwhile. It
// reports whether it loaded the tenant; a tenant deleted meanwhile is
// none of its business. While it holds the tenant, the tenant counts in
// Options.TenantMemory as any loaded tenant does: the sweep loads one at
// a time, so the budget is exceeded by one tenant at most, for as long as
// its pass takes (a call that ends meanwhile may then evict the least
// recently used tenant no call holds, as after any load).
func (c *Collection) sweepIdleTenant(ctx context.Context, name string) (bool, error) {
	tc, key := c.db.tenants, tenantKey{c, name}
	if tc.lookup(key) != nil {
		return false, nil
	}
	loaded := false
	load := c.loadTenant(name)
	s, err := tc.acquire(ctx, key, false, func(ctx context.Context) (*Collection, bool, error) {
		loaded = true
		return load(ctx)
	})
	switch {
	case errors.Is(err, errTenantMissing):
		return false, nil
	case err != nil:
		return false, err
	}
	mine := s.last.Load() // the tick of this pin: a later one is a call's
	if loaded {
		select {
		case <-s.c.firstSwept:
		case <-s.c.bg.Done(): // closed: deleted, or its parent closed
		case <-ctx.Done():
		}
	}
	if !loaded || ctx.Err() != nil {
		tc.release(s, true) // loaded by a call, or Close closes it
		return loaded, nil
	}
	tc.releaseSwept(s, mine)
	return true, nil
}
