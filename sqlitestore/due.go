package sqlitestore

// This file holds what a writer needs to find, without loading any
// tenant, the tenants that hold something due to leave the file: an item
// whose time to expire has come, or a history state older than the
// collection's policy keeps. The tenants themselves are swept by their
// owner (the cairn package loads them and lets their sweeper run).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
)

// migrateV5 adds the indexes that find due tenants: the items that
// expire, by time (most items of most files have no ExpiresAt, and a
// partial index holds none of them), and the tenants' history states by
// collection and time (a collection's own states, tenant 0, are swept
// with the loaded collection and are left out). Nothing else is touched;
// a reader needs neither index (readOnlyFrom).
func migrateV5(ctx context.Context, conn *sql.Conn) error {
	return execAll(ctx, conn,
		`CREATE INDEX tenant_items_expires ON tenant_items (expires) WHERE expires IS NOT NULL`,
		`CREATE INDEX history_tenant_until ON history (coll, until, tenant) WHERE tenant <> 0`,
	)
}

// TenantRef names one tenant of a collection: its row id and its name.
//
// It is a plain value.
type TenantRef struct {
	ID   int64
	Name string
}

// DueTenants returns, in order of row id and at most limit of them, the
// tenants of c with a row id after after that hold an item whose Expires
// is at or before now, or (unless before is math.MinInt64) a history
// state whose Until is before before. Its cost grows with the items and
// states that are due, not with the tenants or their items: it reads the
// indexes that migrateV5 adds, and it is for a writer (a read-only DB may
// not have them), which is the only one that can remove what it finds: it
// returns [ErrReadOnly] on a read-only DB.
func (c *Collection) DueTenants(ctx context.Context, now, before, after int64, limit int) ([]TenantRef, error) {
	var out []TenantRef
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		// Two ranges of their indexes, each distinct and in order of
		// tenant, then merged. The tenant filter is the second term, so
		// that the planner cannot walk the primary key instead.
		ids := map[int64]bool{}
		collect := func(q string, args ...any) error {
			rows, err := conn.QueryContext(ctx, q, args...)
			if err != nil {
				return mapErr(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return scanErr(err)
				}
				ids[id] = true
			}
			return mapErr(rows.Err())
		}
		if err := collect(`SELECT DISTINCT tenant FROM tenant_items INDEXED BY tenant_items_expires
			WHERE expires <= ?1 AND tenant > ?2 AND tenant IN (SELECT id FROM tenants WHERE coll = ?3)
			ORDER BY tenant LIMIT ?4`, now, after, c.id, limit); err != nil {
			return err
		}
		if before != math.MinInt64 {
			if err := collect(`SELECT DISTINCT tenant FROM history INDEXED BY history_tenant_until
				WHERE coll = ?1 AND tenant <> 0 AND until < ?2 AND tenant > ?3
				ORDER BY tenant LIMIT ?4`, c.id, before, after, limit); err != nil {
				return err
			}
		}
		sorted := make([]int64, 0, len(ids))
		for id := range ids {
			sorted = append(sorted, id)
		}
		slices.Sort(sorted)
		if len(sorted) > limit {
			sorted = sorted[:limit]
		}
		for _, id := range sorted {
			var name string
			err := scanErr(conn.QueryRowContext(ctx, "SELECT name FROM tenants WHERE id = ? AND coll = ?", id, c.id).Scan(&name))
			if errors.Is(err, sql.ErrNoRows) {
				continue // history of a tenant deleted since: DropTenant removes it too
			}
			if err != nil {
				return err
			}
			out = append(out, TenantRef{ID: id, Name: name})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: due tenants of %q: %w", c.name, err)
	}
	return out, nil
}

// TenantsNextDue returns the earliest Expires of an item of c's tenants
// (ok false if none has one), and the earliest Until of a history state
// of c's tenants (pastOK false if none): the times from which DueTenants
// finds something. Like DueTenants, it is for a writer.
func (c *Collection) TenantsNextDue(ctx context.Context) (expires int64, ok bool, until int64, pastOK bool, err error) {
	err = c.db.withWriteConn(func(conn *sql.Conn) error {
		if err := c.tenantErr(); err != nil {
			return err
		}
		var e, u sql.NullInt64
		err := scanErr(conn.QueryRowContext(ctx, `SELECT expires FROM tenant_items INDEXED BY tenant_items_expires
			WHERE expires IS NOT NULL AND tenant IN (SELECT id FROM tenants WHERE coll = ?)
			ORDER BY expires LIMIT 1`, c.id).Scan(&e))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = scanErr(conn.QueryRowContext(ctx, `SELECT min(until) FROM history INDEXED BY history_tenant_until
			WHERE coll = ? AND tenant <> 0`, c.id).Scan(&u))
		if err != nil {
			return err
		}
		expires, ok, until, pastOK = e.Int64, e.Valid, u.Int64, u.Valid
		return nil
	})
	if err != nil {
		return 0, false, 0, false, fmt.Errorf("sqlitestore: next due of %q's tenants: %w", c.name, err)
	}
	return expires, ok, until, pastOK, nil
}
