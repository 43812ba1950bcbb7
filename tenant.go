package cairn

// This file holds tenants: the users, agents or sessions of one
// collection, each with items of its own, as Weaviate's multi-tenant
// classes and mem0's user_id keep them apart. A tenant is loaded on first
// use and closed when idle once the loaded tenants outgrow
// Options.TenantMemory, so a file may hold far more tenants than memory.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// ErrTenantExists is returned (wrapped) by [Collection.CreateTenant] for a
// name already taken.
var ErrTenantExists = errors.New("cairn: tenant exists")

// Tenant is one tenant of a collection: a set of items apart from every
// other tenant's and from the collection's own, with the collection's
// configuration (dimension, metric, index, TTL). Its methods are those of
// [Collection], and behave as on a collection holding only the tenant's
// items: no read of a tenant returns another's item, and the same id may
// be used in every tenant. Get one from [Collection.CreateTenant],
// [Collection.Tenant] or [Collection.GetOrCreateTenant].
//
// A Tenant names its tenant: its calls load the tenant's items and index
// when they are not in memory (as [DB.Collection] loads a collection), and
// a tenant no call uses may be closed to keep the loaded tenants within
// [Options.TenantMemory] (saving its graph only if it was written to).
// Once the tenant is deleted, every call returns an error wrapping
// [vector.ErrNotFound], until a tenant of the same name is created.
//
// A Tenant is safe for concurrent use by multiple goroutines, as a
// Collection is.
type Tenant struct {
	parent *Collection
	name   string
	slot   atomic.Pointer[tenantSlot] // the slot last used, tried first
}

var _ MemoryCollection = (*Tenant)(nil)

// use returns the tenant's collection, loaded, and its slot, which the
// caller releases with done.
func (t *Tenant) use(ctx context.Context) (*Collection, *tenantSlot, error) {
	tc := t.parent.db.tenants
	if s := t.slot.Load(); tc.pinLoaded(s) {
		return s.c, s, nil
	}
	s, err := tc.acquire(ctx, tenantKey{t.parent, t.name}, false, t.parent.loadTenant(t.name))
	if err == nil {
		t.slot.Store(s)
	} else {
		if errors.Is(err, errTenantMissing) {
			err = fmt.Errorf("cairn: tenant %q of %q: %w", t.name, t.parent.name, vector.ErrNotFound)
		}
		return nil, nil, err
	}
	return s.c, s, nil
}

// done ends a use of s; wrote says the call may have changed its size.
func (t *Tenant) done(s *tenantSlot, wrote bool) { t.parent.db.tenants.release(s, wrote) }

// tenantBackend keeps a tenant in a tenant of its collection's
// sqlitestore.Collection; closing it frees its memory.
type tenantBackend struct{ *sqlBackend }

func (b tenantBackend) close() error {
	if err := b.c.Unload(); err != nil && !errors.Is(err, vector.ErrClosed) {
		return err
	}
	return nil
}

// route is nil: a tenant keeps no routing verdict (its collection's
// settings hold the collection's).
func (b tenantBackend) route() *measuredRoute { return nil }

func (b tenantBackend) saveRoute(context.Context, *measuredRoute) error { return nil }

// tenantStore returns the parent's sqlitestore collection, nil for an
// in-memory DB.
func (c *Collection) tenantStore() *sqlitestore.Collection { return c.be.file() }

// tenantName is the name of a tenant's collection, in logs and errors.
func (c *Collection) tenantName(name string) string { return c.name + "/" + name }

// loadTenant returns the loader of the tenant name from the file; an
// in-memory DB has no tenant that is not loaded.
func (c *Collection) loadTenant(name string) func(context.Context) (*Collection, bool, error) {
	return func(ctx context.Context) (*Collection, bool, error) {
		if err := c.closedErr(); err != nil {
			return nil, false, err
		}
		st := c.tenantStore()
		if st == nil {
			return nil, false, errTenantMissing
		}
		s, err := st.Tenant(ctx, name)
		if errors.Is(err, vector.ErrNotFound) {
			return nil, false, errTenantMissing
		}
		if err != nil {
			return nil, false, fmt.Errorf("cairn: tenant %q of %q: %w", name, c.name, err)
		}
		tc, err := newCollection(ctx, c.db, c.tenantName(name), c.cfg, tenantBackend{newSQLBackend(s)})
		if err != nil {
			s.Unload()
			return nil, false, fmt.Errorf("cairn: tenant %q of %q: %w", name, c.name, err)
		}
		return tc, false, nil
	}
}

// CreateTenant creates the tenant name of c, empty, and returns it. It
// returns an error wrapping [ErrTenantExists] if c has a tenant of that
// name, and [vector.ErrInvalidOptions] for a name that is empty or not
// valid UTF-8. Its cost does not grow with the number of tenants.
func (c *Collection) CreateTenant(ctx context.Context, name string) (*Tenant, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("cairn: create tenant %q: %w", name, err)
	}
	if c.db.readOnly {
		return nil, errReadOnly
	}
	if err := ctx.Err(); err != nil { // as a file's store would fail
		return nil, fmt.Errorf("cairn: create tenant %q of %q: %w", name, c.name, err)
	}
	s, err := c.db.tenants.acquire(ctx, tenantKey{c, name}, true, func(ctx context.Context) (*Collection, bool, error) {
		if err := c.closedErr(); err != nil {
			return nil, false, err
		}
		st := c.tenantStore()
		if st == nil {
			be, err := newMemBackend(c.cfg)
			if err != nil {
				return nil, false, err
			}
			tc, err := newCollection(ctx, c.db, c.tenantName(name), c.cfg, be)
			return tc, true, err
		}
		s, err := st.CreateTenant(ctx, name)
		if errors.Is(err, vector.ErrDuplicateID) {
			return nil, false, ErrTenantExists
		}
		if err != nil {
			return nil, false, err
		}
		tc, err := newCollection(ctx, c.db, c.tenantName(name), c.cfg, tenantBackend{newSQLBackend(s)})
		if err != nil {
			st.DropTenant(context.WithoutCancel(ctx), name)
			return nil, false, err
		}
		return tc, false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("cairn: create tenant %q of %q: %w", name, c.name, err)
	}
	c.db.tenants.release(s, false)
	return &Tenant{parent: c, name: name}, nil
}

// Tenant returns the tenant name of c, loading it if it is not loaded, or
// an error wrapping [vector.ErrNotFound].
func (c *Collection) Tenant(ctx context.Context, name string) (*Tenant, error) {
	if s := c.db.tenants.lookup(tenantKey{c, name}); s != nil {
		return s.handle, nil // loaded: it exists
	}
	t := &Tenant{parent: c, name: name}
	_, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	t.done(s, false)
	return t, nil
}

// GetOrCreateTenant returns the tenant name of c, creating it if there is
// none: the call for a server that keeps a tenant per user.
func (c *Collection) GetOrCreateTenant(ctx context.Context, name string) (*Tenant, error) {
	for {
		t, err := c.Tenant(ctx, name)
		if !errors.Is(err, vector.ErrNotFound) || c.closedErr() != nil {
			return t, err
		}
		t, err = c.CreateTenant(ctx, name)
		if !errors.Is(err, ErrTenantExists) {
			return t, err
		}
	}
}

// DeleteTenant deletes the tenant name of c and its items, or returns an
// error wrapping [vector.ErrNotFound]. It waits for the writes in flight
// on the tenant; calls on it from then on return an error wrapping
// [vector.ErrNotFound]. If it fails, the tenant is left as it was. Its cost
// grows with the tenant's items, not with the number of tenants.
//
// The tenant's history goes with it: a tenant created again under the
// name starts empty, with a history of its own from its creation, so
// that its AsOf and Restore reach no further back (an error wrapping
// [ErrBeforeHistory]) and its History holds none of the deleted one's
// versions. Neither the collection's history, which is of its own items
// only, nor a Restore of it brings a deleted tenant back.
func (c *Collection) DeleteTenant(ctx context.Context, name string) error {
	if c.db.readOnly {
		return errReadOnly
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // as a file's store would fail
		return fmt.Errorf("cairn: delete tenant %q of %q: %w", name, c.name, err)
	}
	key := tenantKey{c, name}
	s, err := c.db.tenants.take(ctx, key)
	if err != nil {
		return fmt.Errorf("cairn: delete tenant %q of %q: %w", name, c.name, err)
	}
	drop := func() error {
		st := c.tenantStore()
		if st == nil {
			if s.c == nil {
				return vector.ErrNotFound
			}
			return nil
		}
		return st.DropTenant(ctx, name)
	}
	if s.c == nil {
		err = drop()
	} else {
		err = s.c.dropWith(drop)
	}
	c.db.tenants.settle(s, err == nil)
	if err != nil {
		return fmt.Errorf("cairn: delete tenant %q of %q: %w", name, c.name, err)
	}
	return nil
}

// Tenants returns the names of c's tenants, sorted.
func (c *Collection) Tenants(ctx context.Context) ([]string, error) {
	if err := c.closedErr(); err != nil {
		return nil, err
	}
	st := c.tenantStore()
	if st == nil {
		names := c.db.tenants.names(c)
		slices.Sort(names)
		return names, nil
	}
	names, err := st.Tenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("cairn: tenants of %q: %w", c.name, c.orClosed(err))
	}
	return names, nil
}

// Name returns the tenant's name.
func (t *Tenant) Name() string { return t.name }

// Collection returns the collection the tenant belongs to.
func (t *Tenant) Collection() *Collection { return t.parent }

// Config returns the configuration of the tenant's collection.
func (t *Tenant) Config() CollectionConfig { return t.parent.cfg.clone() }

// Info describes the tenant as [Collection.Info] does a collection; its
// Name is the tenant's.
func (t *Tenant) Info(ctx context.Context) (CollectionInfo, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return CollectionInfo{}, err
	}
	defer t.done(s, false)
	info, err := c.Info(ctx)
	info.Name = t.name
	return info, err
}

// Count returns the number of the tenant's items; see [Collection.Count].
func (t *Tenant) Count(ctx context.Context) (int, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return 0, err
	}
	defer t.done(s, false)
	return c.Count(ctx)
}

// Add stores new items in the tenant; see [Collection.Add].
func (t *Tenant) Add(ctx context.Context, items ...Item) error {
	c, s, err := t.use(ctx)
	if err != nil {
		return err
	}
	defer t.done(s, true)
	return c.Add(ctx, items...)
}

// Upsert stores or replaces items of the tenant; see [Collection.Upsert].
func (t *Tenant) Upsert(ctx context.Context, items ...Item) error {
	c, s, err := t.use(ctx)
	if err != nil {
		return err
	}
	defer t.done(s, true)
	return c.Upsert(ctx, items...)
}

// UpsertDedup is [Collection.UpsertDedup] within the tenant: it never
// merges an item into another tenant's.
func (t *Tenant) UpsertDedup(ctx context.Context, d *Dedup, items ...Item) ([]Merge, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, true)
	return c.UpsertDedup(ctx, d, items...)
}

// Get returns the tenant's items with the given ids; see [Collection.Get].
func (t *Tenant) Get(ctx context.Context, ids ...string) ([]Item, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, false)
	return c.Get(ctx, ids...)
}

// Delete removes items of the tenant; see [Collection.Delete].
func (t *Tenant) Delete(ctx context.Context, ids ...string) error {
	c, s, err := t.use(ctx)
	if err != nil {
		return err
	}
	defer t.done(s, true)
	return c.Delete(ctx, ids...)
}

// DeleteIfExists removes those of ids the tenant holds; see
// [Collection.DeleteIfExists].
func (t *Tenant) DeleteIfExists(ctx context.Context, ids ...string) (int, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return 0, err
	}
	defer t.done(s, true)
	return c.DeleteIfExists(ctx, ids...)
}

// DeleteWhere removes the tenant's items a filter matches; see
// [Collection.DeleteWhere].
func (t *Tenant) DeleteWhere(ctx context.Context, f *Filter) (int, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return 0, err
	}
	defer t.done(s, true)
	return c.DeleteWhere(ctx, f)
}

// Find lists the tenant's items a filter matches; see [Collection.Find].
func (t *Tenant) Find(ctx context.Context, f *Filter, limit int) ([]Item, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, false)
	return c.Find(ctx, f, limit)
}

// Items iterates over the tenant's items; see [Collection.Items]. The
// tenant stays loaded while the iteration runs.
func (t *Tenant) Items(ctx context.Context, o *ItemsOptions) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		c, s, err := t.use(ctx)
		if err != nil {
			yield(Item{}, err)
			return
		}
		defer t.done(s, false)
		for it, err := range c.Items(ctx, o) {
			if !yield(it, err) {
				return
			}
		}
	}
}

// Query returns the tenant's k items nearest to an embedding; see
// [Collection.Query].
func (t *Tenant) Query(ctx context.Context, embedding []float32, k int, o *QueryOptions) ([]Result, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, false)
	return c.Query(ctx, embedding, k, o)
}

// QueryText returns the tenant's k items nearest to a text; see
// [Collection.QueryText].
func (t *Tenant) QueryText(ctx context.Context, text string, k int, o *QueryOptions) ([]Result, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, false)
	return c.QueryText(ctx, text, k, o)
}

// RemoveExpired removes the tenant's expired items now; see
// [Collection.RemoveExpired]. It is needed no more than on a collection:
// a loaded tenant's sweeper removes them when they expire, and a file's
// DB loads, for that, a tenant with items expired or history past its
// policy's age that no call loads (see the package's Tenants).
func (t *Tenant) RemoveExpired(ctx context.Context) (int, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return 0, err
	}
	defer t.done(s, true)
	return c.RemoveExpired(ctx)
}

// History returns the versions of one of the tenant's items; see
// [Collection.History].
func (t *Tenant) History(ctx context.Context, id string) ([]Version, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, false)
	return c.History(ctx, id)
}

// AsOf returns the tenant as it was at a past time; see
// [Collection.AsOf].
func (t *Tenant) AsOf(ctx context.Context, at time.Time) (*Snapshot, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	defer t.done(s, false)
	return c.AsOf(ctx, at)
}

// Restore puts the tenant back as it was at a past time, leaving every
// other tenant as it is; see [Collection.Restore].
func (t *Tenant) Restore(ctx context.Context, at time.Time, o *RestoreOptions) (Restored, error) {
	c, s, err := t.use(ctx)
	if err != nil {
		return Restored{}, err
	}
	defer t.done(s, true)
	return c.Restore(ctx, at, o)
}
