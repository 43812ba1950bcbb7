package sqlitestore

// This file holds tenants: named sub-collections of a collection, as many
// as a file holds rows, that cost no memory until loaded. A table per
// tenant would not do: SQLite parses every table's schema into every
// connection, and this package loads every collection at Open, so each
// table costs memory and open time whether used or not (BENCHMARKS.md,
// "Tenants"). All tenants' items share the table tenant_items, keyed by
// (tenant, id) and clustered by tenant, so loading one reads its rows
// side by side.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/cairndb/cairn/vector"
	sqlite3 "modernc.org/sqlite/lib"
)

// migrateV3 adds the tenants' tables. Files of earlier versions gain them
// empty; nothing else is touched.
func migrateV3(ctx context.Context, conn *sql.Conn) error {
	return execAll(ctx, conn,
		`CREATE TABLE tenants (
			id      INTEGER PRIMARY KEY,
			coll    INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
			name    TEXT NOT NULL,
			changes INTEGER NOT NULL DEFAULT 0,
			UNIQUE (coll, name)
		)`,
		`CREATE TABLE tenant_items (
			tenant  INTEGER NOT NULL,
			id      INTEGER NOT NULL,
			vec     BLOB NOT NULL,
			key     TEXT,
			text    TEXT,
			meta    TEXT,
			`+itemColumns+`,
			PRIMARY KEY (tenant, id)
		) WITHOUT ROWID`,
		`CREATE UNIQUE INDEX tenant_items_key ON tenant_items (tenant, key) WHERE key IS NOT NULL`,
	)
}

// tenantTable is the table of every tenant's items.
const tenantTable = "tenant_items"

// tenantMark separates a tenant's row id from an index name in the
// index_blobs key of a tenant's saved index (indexKey); collections'
// index names may not hold it.
const tenantMark = '\x1f'

// tenantStmts are the statements of every tenant's items, prepared once
// for all of them: each takes the tenant's row id first.
type tenantStmts struct {
	ins, ups, del, get *sql.Stmt
}

func (t *tenantStmts) prepare(ctx context.Context, conn *sql.Conn) error {
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = conn.PrepareContext(ctx, q)
		return s
	}
	t.ins = p("INSERT INTO tenant_items (tenant, id, vec, key, text, meta, created, updated, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
	t.ups = p(`INSERT INTO tenant_items (tenant, id, vec, key, text, meta, created, updated, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, id) DO UPDATE SET vec = excluded.vec, key = excluded.key, text = excluded.text, meta = excluded.meta,
			created = excluded.created, updated = excluded.updated, expires = excluded.expires`)
	t.del = p("DELETE FROM tenant_items WHERE tenant = ? AND id = ?")
	t.get = p("SELECT vec, key, text, meta, created, updated, expires FROM tenant_items WHERE tenant = ? AND id = ?")
	if err != nil {
		t.close()
	}
	return err
}

func (t *tenantStmts) close() {
	for _, s := range []**sql.Stmt{&t.ins, &t.ups, &t.del, &t.get} {
		if *s != nil {
			(*s).Close()
			*s = nil
		}
	}
}

// bindTenant gives the tenant c the DB's tenant statements, preparing
// them first if no tenant has been loaded yet. The caller holds connMu.
func (db *DB) bindTenant(ctx context.Context, c *Collection) error {
	if db.tstmts.ins == nil {
		if err := db.tstmts.prepare(ctx, db.conn); err != nil {
			return mapErr(err)
		}
	}
	c.insStmt, c.upsStmt, c.delStmt, c.getStmt = db.tstmts.ins, db.tstmts.ups, db.tstmts.del, db.tstmts.get
	return nil
}

// args returns a statement's arguments for the collection's rows: the
// tenant's row id first, for a tenant.
func (c *Collection) args(a ...any) []any {
	if c.tenant == 0 {
		return a
	}
	return append([]any{c.tenant}, a...)
}

// scope is the condition, to be followed by another, that selects the
// collection's rows in its table: "" for a collection, which owns its
// table.
func (c *Collection) scope() string {
	if c.tenant == 0 {
		return ""
	}
	return "tenant = " + strconv.FormatInt(c.tenant, 10) + " AND "
}

// whereScope is scope as a whole WHERE clause.
func (c *Collection) whereScope() string {
	if c.tenant == 0 {
		return ""
	}
	return " WHERE tenant = " + strconv.FormatInt(c.tenant, 10)
}

// indexKey is the name under which the collection's index name is kept in
// index_blobs: a tenant's indexes are its collection's, under names that
// start with the tenant's row id between marks, so that deleting the
// tenant deletes them in one range.
func (c *Collection) indexKey(name string) string {
	if c.tenant == 0 {
		return name
	}
	return tenantIndexPrefix(c.tenant) + name
}

func tenantIndexPrefix(tenant int64) string {
	return string(tenantMark) + strconv.FormatInt(tenant, 10) + string(tenantMark)
}

// newTenant returns the tenant of parent with row id id, empty, its
// statements bound. The caller holds connMu.
func newTenant(ctx context.Context, parent *Collection, id int64, name string, changes int64) (*Collection, error) {
	t, err := newCollection(parent.db, parent.id, name, CollectionConfig{Dim: parent.dim, Metric: parent.metric, Settings: parent.Settings()}, false)
	if err != nil {
		return nil, err
	}
	t.tenant, t.table = id, tenantTable
	t.changes.Store(uint64(changes))
	if err := t.prepare(ctx); err != nil {
		t.arena.Close()
		return nil, err
	}
	return t, nil
}

// IsTenant reports whether c is a tenant of a collection rather than a
// collection.
func (c *Collection) IsTenant() bool { return c.tenant != 0 }

// tenantErr refuses a tenant operation on c when c is itself a tenant or
// is gone. The caller holds connMu.
func (c *Collection) tenantErr() error {
	if c.dropped {
		return vector.ErrClosed
	}
	if c.tenant != 0 {
		return fmt.Errorf("%w: a tenant has no tenants", vector.ErrInvalidOptions)
	}
	return nil
}

// CreateTenant creates the tenant name of c, empty, durably, and returns
// it loaded. A tenant is a collection of its own items that shares c's
// dimension, metric and settings; its items live in the file beside
// every other tenant's, and it holds no memory until loaded
// ([Collection.Tenant]). Creating or deleting one costs the same however
// many tenants the file holds.
//
// It returns an error wrapping [vector.ErrDuplicateID] if c has a tenant
// of that name, and [vector.ErrInvalidOptions] for an empty name or when
// c is itself a tenant.
func (c *Collection) CreateTenant(ctx context.Context, name string) (*Collection, error) {
	if name == "" {
		return nil, fmt.Errorf("sqlitestore: create tenant: %w: empty name", vector.ErrInvalidOptions)
	}
	var t *Collection
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		res, err := execCommitting(ctx, conn, "INSERT INTO tenants (coll, name) VALUES (?, ?)", c.id, name)
		if err != nil {
			if sqliteCode(err)&0xff == sqlite3.SQLITE_CONSTRAINT { // the name is taken
				return vector.ErrDuplicateID
			}
			return mapErr(err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// Committed: the tenant is in the file, so it is in the DB too,
		// whatever becomes of ctx.
		if t, err = newTenant(context.WithoutCancel(ctx), c, id, name, 0); err != nil {
			return err
		}
		c.db.collMu.Lock()
		c.db.tenants[id] = t
		c.db.collMu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: create tenant %q of %q: %w", name, c.name, err)
	}
	return t, nil
}

// Tenant returns the tenant name of c, loading its vectors into memory
// if it is not loaded, or an error wrapping [vector.ErrNotFound]. Every
// call returns the same *Collection until [Collection.Unload] or
// [Collection.DropTenant]. A load reads only the tenant's own rows.
func (c *Collection) Tenant(ctx context.Context, name string) (*Collection, error) {
	var t *Collection
	err := c.db.withConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		var id, changes int64
		err := scanErr(conn.QueryRowContext(ctx, "SELECT id, changes FROM tenants WHERE coll = ? AND name = ?", c.id, name).Scan(&id, &changes))
		if errors.Is(err, sql.ErrNoRows) {
			return vector.ErrNotFound
		}
		if err != nil {
			return err
		}
		c.db.collMu.Lock()
		t = c.db.tenants[id]
		c.db.collMu.Unlock()
		if t != nil {
			return nil
		}
		if t, err = newTenant(ctx, c, id, name, changes); err != nil {
			return err
		}
		if err := t.load(ctx); err != nil {
			t.arena.Close()
			t = nil
			return fmt.Errorf("load: %w", err)
		}
		c.db.collMu.Lock()
		c.db.tenants[id] = t
		c.db.collMu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: tenant %q of %q: %w", name, c.name, err)
	}
	return t, nil
}

// Unload releases the memory of the tenant c: from then on every call on
// c returns an error wrapping [vector.ErrClosed], and
// [Collection.Tenant] loads it again from the file. Writes that returned
// before Unload are in the file; the caller makes sure no call on c is
// in flight. Unload writes nothing. It returns an error wrapping
// [vector.ErrInvalidOptions] for a collection that is not a tenant.
func (c *Collection) Unload() error {
	if c.tenant == 0 {
		return fmt.Errorf("sqlitestore: unload %q: %w: not a tenant", c.name, vector.ErrInvalidOptions)
	}
	return c.db.withConn(func(*sql.Conn) error {
		c.db.collMu.Lock()
		if c.db.tenants[c.tenant] == c {
			delete(c.db.tenants, c.tenant)
		}
		c.db.collMu.Unlock()
		c.release()
		return nil
	})
}

// release marks c gone and frees its arena. The caller holds connMu.
func (c *Collection) release() {
	c.closeStmts()
	c.mu.Lock()
	c.dropped = true
	c.arena.Close()
	c.mu.Unlock()
}

// unloadTenantsLocked releases the loaded tenants of the collection of
// row id coll, or every loaded tenant for 0. The caller holds connMu.
func (db *DB) unloadTenantsLocked(coll int64) {
	db.collMu.Lock()
	var gone []*Collection
	for id, t := range db.tenants {
		if coll == 0 || t.id == coll {
			gone = append(gone, t)
			delete(db.tenants, id)
		}
	}
	db.collMu.Unlock()
	for _, t := range gone {
		t.release()
	}
}

// DropTenant deletes the tenant name of c, its items and its saved
// indexes, in one transaction, or returns an error wrapping
// [vector.ErrNotFound]. A loaded *Collection of it then returns
// [vector.ErrClosed] from every method. It reads and writes only the
// tenant's rows.
func (c *Collection) DropTenant(ctx context.Context, name string) error {
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		var id int64
		err := scanErr(conn.QueryRowContext(ctx, "SELECT id FROM tenants WHERE coll = ? AND name = ?", c.id, name).Scan(&id))
		if errors.Is(err, sql.ErrNoRows) {
			return vector.ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := beginImmediate(ctx, conn); err != nil {
			return err
		}
		prefix := tenantIndexPrefix(id)
		end := prefix[:len(prefix)-1] + string(tenantMark+1) // just past every name with the prefix
		err = func() error {
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{"DELETE FROM tenant_items WHERE tenant = ?", []any{id}},
				{"DELETE FROM index_chunks WHERE coll = ? AND name >= ? AND name < ?", []any{c.id, prefix, end}},
				{"DELETE FROM index_blobs WHERE coll = ? AND name >= ? AND name < ?", []any{c.id, prefix, end}},
				{"DELETE FROM tenants WHERE id = ?", []any{id}},
				{"DELETE FROM history WHERE coll = ? AND tenant = ?", []any{c.id, id}},
				{"DELETE FROM history_since WHERE coll = ? AND tenant = ?", []any{c.id, id}},
			} {
				if _, err := conn.ExecContext(ctx, q.sql, q.args...); err != nil {
					return fmt.Errorf("%s: %w", firstWords(q.sql), err)
				}
			}
			return commit(ctx, conn)
		}()
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return mapErr(err)
		}
		c.db.collMu.Lock()
		t := c.db.tenants[id]
		delete(c.db.tenants, id)
		c.db.collMu.Unlock()
		if t != nil {
			t.release()
		}
		c.db.vacuumLocked(context.Background(), 0)
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: drop tenant %q of %q: %w", name, c.name, err)
	}
	return nil
}

// TenantCount returns how many tenants c has and how many items they
// hold together.
func (c *Collection) TenantCount(ctx context.Context) (tenants, items int, err error) {
	err = c.db.withConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		err := conn.QueryRowContext(ctx, "SELECT count(*) FROM tenants WHERE coll = ?", c.id).Scan(&tenants)
		if err == nil {
			err = conn.QueryRowContext(ctx, "SELECT count(*) FROM tenant_items WHERE tenant IN (SELECT id FROM tenants WHERE coll = ?)", c.id).Scan(&items)
		}
		return mapErr(err)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("sqlitestore: tenants of %q: %w", c.name, err)
	}
	return tenants, items, nil
}

// Tenants returns the names of c's tenants, sorted (by byte value).
func (c *Collection) Tenants(ctx context.Context) ([]string, error) {
	var names []string
	err := c.db.withConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		rows, err := conn.QueryContext(ctx, "SELECT name FROM tenants WHERE coll = ? ORDER BY name", c.id)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return scanErr(err)
			}
			names = append(names, n)
		}
		return mapErr(rows.Err())
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: tenants of %q: %w", c.name, err)
	}
	return names, nil
}
