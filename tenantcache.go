package cairn

// This file holds the tenants loaded in memory: each loaded on first use,
// pinned while a call uses it, and closed, least recently used first,
// once the loaded tenants' estimated memory exceeds the DB's budget
// (Options.TenantMemory). Pinning a loaded tenant is a read lock and two
// atomic operations, so that a call to a tenant costs what a call to a
// collection does.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
)

// defaultTenantMemory is the budget of loaded tenants when
// Options.TenantMemory is 0.
const defaultTenantMemory = 256 << 20

// goneBias is added to a slot's pins to close it to new calls: pins is
// negative from then on, while the calls in flight still count.
const goneBias = 1 << 40

type tenantKey struct {
	parent *Collection
	name   string
}

// tenantSlot is a tenant that is loaded, being loaded or being closed.
type tenantSlot struct {
	key   tenantKey
	ready chan struct{} // closed once c or err is set
	c     *Collection
	err   error
	keep  bool // an in-memory DB's tenant: never evicted
	// handle is the Tenant that Collection.Tenant returns while s is
	// loaded, so that looking a loaded tenant up allocates nothing.
	handle *Tenant
	// loaded is set once c is, for the callers that hold s without
	// having waited for ready (Tenant handles).
	loaded atomic.Bool
	// pins counts the calls using c; negative once the slot is closed to
	// new calls (evicted, deleted, or its load failed).
	pins atomic.Int64
	last atomic.Int64 // the cache's tick at the last use

	// Guarded by the cache's mu:
	size int64         // estimated bytes, counted in the cache's used
	gone chan struct{} // closed when a slot closed to new calls is settled
}

// tenantCache is a DB's loaded tenants. Safe for concurrent use.
type tenantCache struct {
	budget int64
	tick   atomic.Int64
	over   atomic.Bool // used > budget: releases try to evict

	mu    sync.RWMutex
	slots map[tenantKey]*tenantSlot
	used  int64                 // estimated bytes of the loaded slots
	shut  map[*Collection]error // parents whose tenants are closed for good (nil: all)
}

func newTenantCache(budget int64) *tenantCache {
	if budget == 0 {
		budget = defaultTenantMemory
	}
	return &tenantCache{budget: budget, slots: map[tenantKey]*tenantSlot{}, shut: map[*Collection]error{}}
}

// tenantSize estimates the memory of a loaded tenant of n items of
// dimension dim: the arena's blocks of 256 vectors, about 1 KiB an item
// for the catalog, the keyword index and a graph, and the collection's
// fixed cost.
func tenantSize(n, dim int) int64 {
	blocks := int64(n+255) / 256
	return blocks*256*int64(dim)*4 + int64(n)*1024 + 16<<10
}

func (s *tenantSlot) estimate() int64 {
	if s.c == nil || s.keep {
		return 0
	}
	return tenantSize(s.c.st.Len(), s.c.cfg.Dim)
}

// pin counts a call on s, unless s is closed to new calls.
func (tc *tenantCache) pin(s *tenantSlot) bool {
	for {
		p := s.pins.Load()
		if p < 0 {
			return false
		}
		if s.pins.CompareAndSwap(p, p+1) {
			s.last.Store(tc.tick.Add(1))
			return true
		}
	}
}

// errTenantMissing is what a loader returns for a tenant not in the file.
var errTenantMissing = errors.New("no such tenant")

// pinLoaded pins s if it is loaded and open to calls: the fast path of a
// handle that remembers its slot.
func (tc *tenantCache) pinLoaded(s *tenantSlot) bool {
	if s == nil || !s.loaded.Load() {
		return false
	}
	if !tc.pin(s) {
		return false
	}
	return true
}

// lookup returns the slot of key if it is loaded and open to calls, without
// pinning it: what a handle remembers.
func (tc *tenantCache) lookup(key tenantKey) *tenantSlot {
	tc.mu.RLock()
	s := tc.slots[key]
	tc.mu.RUnlock()
	if s == nil || !s.loaded.Load() || s.pins.Load() < 0 {
		return nil
	}
	return s
}

// acquire returns the tenant key, loaded (by load) if it is not, pinned
// until the caller calls release. With create set, load creates it, and
// a tenant already there is [ErrTenantExists].
func (tc *tenantCache) acquire(ctx context.Context, key tenantKey, create bool, load func(context.Context) (*Collection, bool, error)) (*tenantSlot, error) {
	for {
		tc.mu.RLock()
		s, shut := tc.slots[key], cmpOr(tc.shut[key.parent], tc.shut[nil])
		tc.mu.RUnlock()
		if shut != nil {
			return nil, shut
		}
		if s != nil {
			if create {
				// Loaded, it exists; being loaded, closed or deleted, the
				// outcome decides.
				if err := waitFor(ctx, s.ready); err != nil {
					return nil, err
				}
				if s.err == nil && s.pins.Load() >= 0 {
					return nil, ErrTenantExists
				}
				if err := tc.waitGone(ctx, s); err != nil {
					return nil, err
				}
				continue
			}
			if tc.pin(s) {
				if err := waitFor(ctx, s.ready); err != nil {
					tc.release(s, false)
					return nil, err
				}
				if s.err == nil {
					return s, nil
				}
				// Its load failed; the slot is closed and forgotten.
			}
			if err := tc.waitGone(ctx, s); err != nil {
				return nil, err
			}
			if s.err != nil && !isCtxErr(s.err) && !errors.Is(s.err, ErrTenantExists) {
				return nil, s.err
			}
			// Gone, a load whose context ended, or a create that found
			// the tenant there: again.
			continue
		}
		tc.mu.Lock()
		if tc.slots[key] != nil {
			tc.mu.Unlock()
			continue
		}
		if shut := cmpOr(tc.shut[key.parent], tc.shut[nil]); shut != nil {
			tc.mu.Unlock() // closeParent ran since the look above
			return nil, shut
		}
		s = &tenantSlot{key: key, ready: make(chan struct{}), gone: make(chan struct{})}
		s.pins.Store(1)
		s.last.Store(tc.tick.Add(1))
		tc.slots[key] = s
		tc.mu.Unlock()
		c, keep, err := load(ctx)
		tc.mu.Lock()
		if err != nil {
			s.err = err
			s.pins.Add(-goneBias)
			delete(tc.slots, key)
			close(s.gone)
		} else {
			s.c, s.keep = c, keep
			s.handle = &Tenant{parent: key.parent, name: key.name}
			s.handle.slot.Store(s)
			s.loaded.Store(true)
			s.size = s.estimate()
			tc.used += s.size
			tc.over.Store(tc.used > tc.budget)
		}
		close(s.ready)
		tc.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// waitGone waits until s, closed to new calls, is settled.
func (tc *tenantCache) waitGone(ctx context.Context, s *tenantSlot) error {
	tc.mu.RLock()
	g, open := s.gone, s.pins.Load() >= 0 // open again: settled already
	tc.mu.RUnlock()
	if open {
		return nil
	}
	return waitFor(ctx, g)
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func waitFor(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release ends a call on s. A call that wrote updates s's size; while
// the loaded tenants exceed the budget, release evicts.
func (tc *tenantCache) release(s *tenantSlot, wrote bool) {
	s.pins.Add(-1)
	if wrote && !s.keep {
		tc.mu.Lock()
		if s.pins.Load() >= 0 {
			size := s.estimate()
			tc.used += size - s.size
			s.size = size
			tc.over.Store(tc.used > tc.budget)
		}
		tc.mu.Unlock()
	}
	if tc.over.Load() {
		tc.trim()
	}
}

// trim closes the tenants no call uses, least recently used first, until
// the loaded tenants fit the budget.
func (tc *tenantCache) trim() {
	tc.mu.Lock()
	var idle []*tenantSlot
	for _, s := range tc.slots {
		if s.c != nil && !s.keep && s.pins.Load() == 0 {
			idle = append(idle, s)
		}
	}
	slices.SortFunc(idle, func(a, b *tenantSlot) int { return int(a.last.Load() - b.last.Load()) })
	var victims []*tenantSlot
	for _, s := range idle {
		if tc.used <= tc.budget {
			break
		}
		if s.pins.CompareAndSwap(0, -goneBias) {
			tc.used -= s.size
			s.size = 0
			victims = append(victims, s)
		}
	}
	tc.over.Store(tc.used > tc.budget)
	tc.mu.Unlock()
	tc.close(victims, errEvicted, true)
	if len(victims) > 0 {
		// No longer loaded, their items expire unseen by a sweeper of
		// their own: the DB's sweep of idle tenants takes them on.
		victims[0].key.parent.db.wakeIdleSweep()
	}
}

// releaseSwept ends the use of s by the sweep of idle tenants, which
// loaded it and pinned it once, at the tick mine. Unless a call has pinned
// it since, it is closed at once: a tenant loaded only to be swept does
// not stay in memory, and is the first to go, before any tenant a call
// used is evicted for its memory. Else it is released as after a call.
func (tc *tenantCache) releaseSwept(s *tenantSlot, mine int64) {
	tc.mu.Lock()
	if !s.keep && s.last.Load() == mine && s.pins.CompareAndSwap(1, -goneBias) {
		tc.used -= s.size
		s.size = 0
		tc.over.Store(tc.used > tc.budget)
		tc.mu.Unlock()
		tc.close([]*tenantSlot{s}, errEvicted, true)
		return
	}
	tc.mu.Unlock()
	tc.release(s, true)
}

// errEvicted closes an evicted tenant's Collection; no call sees it, as
// a slot is evicted only when no call holds it.
var errEvicted = fmt.Errorf("cairn: tenant evicted: %w", vector.ErrClosed)

// close closes the slots, closed to new calls, saving what a write
// changed if save is set, and forgets them.
func (tc *tenantCache) close(slots []*tenantSlot, err error, save bool) error {
	var first error
	for _, s := range slots {
		if cerr := s.c.closeWith(err, save && !s.c.db.readOnly); cerr != nil && first == nil {
			first = cerr
		}
		tc.settle(s, true)
	}
	return first
}

// take closes the slot of key to new calls, once loaded, for the caller
// to close or delete; if it is not loaded, it returns a placeholder with
// no Collection, which keeps it from loading meanwhile. The caller calls
// settle after. Calls in flight on the slot go on.
func (tc *tenantCache) take(ctx context.Context, key tenantKey) (*tenantSlot, error) {
	for {
		tc.mu.Lock()
		s := tc.slots[key]
		if s == nil {
			s = &tenantSlot{key: key, ready: make(chan struct{}), gone: make(chan struct{})}
			s.pins.Store(-goneBias)
			close(s.ready)
			tc.slots[key] = s
			tc.mu.Unlock()
			return s, nil
		}
		select {
		case <-s.ready:
		default:
			tc.mu.Unlock()
			if err := waitFor(ctx, s.ready); err != nil {
				return nil, err
			}
			continue
		}
		if p := s.pins.Load(); p < 0 || s.err != nil {
			g := s.gone
			tc.mu.Unlock()
			if err := waitFor(ctx, g); err != nil {
				return nil, err
			}
			continue
		}
		s.pins.Add(-goneBias)
		tc.used -= s.size
		s.size = 0
		tc.mu.Unlock()
		return s, nil
	}
}

// settle ends a take or an eviction: the slot is forgotten if deleted
// (or a placeholder), else open to calls again.
func (tc *tenantCache) settle(s *tenantSlot, deleted bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if deleted || s.c == nil {
		if tc.slots[s.key] == s {
			delete(tc.slots, s.key)
		}
		close(s.gone)
		return
	}
	s.pins.Add(goneBias)
	s.size = s.estimate()
	tc.used += s.size
	tc.over.Store(tc.used > tc.budget)
	close(s.gone)
	s.gone = make(chan struct{})
}

// closeParent closes every loaded tenant of parent (of all parents for
// nil), with err as the error of later calls on them, and refuses to
// load more until reopenParent. It waits for loads in progress. Once
// parent is closed or deleted, its own error refuses them (loadTenant),
// and reopenParent may forget it.
func (tc *tenantCache) closeParent(parent *Collection, err error, save bool) error {
	tc.mu.Lock()
	tc.shut[parent] = err
	var keys []tenantKey
	for k := range tc.slots {
		if parent == nil || k.parent == parent {
			keys = append(keys, k)
		}
	}
	tc.mu.Unlock()
	var first error
	for _, k := range keys {
		s, _ := tc.take(context.Background(), k)
		if s.c == nil {
			tc.settle(s, true)
			continue
		}
		if cerr := tc.close([]*tenantSlot{s}, err, save); cerr != nil && first == nil {
			first = cerr
		}
	}
	return first
}

// reopenParent lets parent's tenants load again, after closeParent: once
// parent is deleted (which refuses them itself), or when its deletion
// failed.
func (tc *tenantCache) reopenParent(parent *Collection) {
	tc.mu.Lock()
	delete(tc.shut, parent)
	tc.mu.Unlock()
}

// names returns the names of parent's loaded tenants.
func (tc *tenantCache) names(parent *Collection) []string {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	var out []string
	for k, s := range tc.slots {
		if k.parent == parent && s.c != nil && s.pins.Load() >= 0 {
			out = append(out, k.name)
		}
	}
	return out
}

// loaded returns how many tenants are in memory and their estimated
// bytes.
func (tc *tenantCache) loaded() (int, int64) {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	return len(tc.slots), tc.used
}
