package sqlitestore

// This file holds history: the earlier states of a collection's keys. A
// write that its owner gives priors (WriteItemsKeeping) copies the rows it
// replaces or deletes into the table history, in its own transaction, so
// that the file holds every state of a key since history began unless
// TrimHistory removed it. A state is a row of history: the item the key
// held (or none) until a time, which is the writer's clock, not SQLite's.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/cairndb/cairn/vector"
)

// migrateV4 adds the history tables. Files of earlier versions gain them
// empty; nothing else is touched.
func migrateV4(ctx context.Context, conn *sql.Conn) error {
	return execAll(ctx, conn,
		// id is the replaced version's id, NULL when the key held no item.
		`CREATE TABLE history (
			seq    INTEGER PRIMARY KEY,
			coll   INTEGER NOT NULL,
			tenant INTEGER NOT NULL,
			key    TEXT NOT NULL,
			until  INTEGER NOT NULL,
			id     INTEGER,
			vec    BLOB,
			text   TEXT,
			meta   TEXT,
			`+itemColumns+`
		)`,
		`CREATE INDEX history_key ON history (coll, tenant, key, until)`,
		`CREATE INDEX history_until ON history (coll, tenant, until)`,
		// since is the earliest time whose state the history holds whole.
		`CREATE TABLE history_since (
			coll   INTEGER NOT NULL,
			tenant INTEGER NOT NULL,
			since  INTEGER NOT NULL,
			PRIMARY KEY (coll, tenant)
		) WITHOUT ROWID`,
	)
}

// Prior is what a write changes one key from, for [Collection.WriteItemsKeeping]:
// the item Was (an id the same write deletes), or no item (Was 0: the
// write creates the key), held until the write's time Until. A key's
// states are kept in the order they were written: an Until earlier than
// the key's last kept one (a clock that went back) is kept as that one.
//
// It is a plain value.
type Prior struct {
	Key   string
	Was   vector.ID
	Until int64
}

// Past is one earlier state of a key: the item it held until Until, as it
// was written (Item.ID is the version's id), or no item (Item.ID 0, the
// Key alone set).
//
// It is a plain value.
type Past struct {
	Until int64
	Item  Item
}

// Held reports whether the key held an item in this state.
func (p Past) Held() bool { return p.Item.ID != 0 }

// WriteItemsKeeping is [Collection.WriteItems] that also records, in the
// same transaction, what each key of prior held before the write. Each
// non-zero Prior.Was must be in drop. It returns the errors of WriteItems,
// and one wrapping [vector.ErrInvalidOptions] for a prior with an empty
// key or a Was not in drop.
func (c *Collection) WriteItemsKeeping(ctx context.Context, items []Item, drop []vector.ID, prior []Prior) error {
	if len(prior) > 0 {
		dropped := make(map[vector.ID]struct{}, len(drop))
		for _, id := range drop {
			dropped[id] = struct{}{}
		}
		for _, p := range prior {
			_, ok := dropped[p.Was]
			switch {
			case p.Key == "":
				return fmt.Errorf("sqlitestore: write items: %w: a prior with no key", vector.ErrInvalidOptions)
			case p.Was != 0 && !ok:
				return fmt.Errorf("sqlitestore: write items: %w: the prior of %q is id %d, which the write does not delete", vector.ErrInvalidOptions, p.Key, p.Was)
			}
		}
	}
	return c.writeItems(ctx, items, drop, prior)
}

// keepPriors records r's priors; it runs in the committer's transaction,
// before r's deletes.
func (db *DB) keepPriors(ctx context.Context, r *request) error {
	c := r.c
	if len(r.prior) == 0 {
		return nil
	}
	// A key's states are kept in the order of its writes, which is the
	// order of their times unless the writer's clock went back: then the
	// time is raised to the key's last, so that both orders agree.
	const until = "max(?4, coalesce((SELECT max(until) FROM history WHERE coll = ?1 AND tenant = ?2 AND key = ?3), ?4))"
	copyRow, err := db.cached(ctx, fmt.Sprintf(`INSERT INTO history (coll, tenant, key, until, id, vec, text, meta, created, updated, expires)
		SELECT ?1, ?2, ?3, %s, id, vec, text, meta, created, updated, expires FROM %s WHERE %sid = ?5`, until, c.table, c.tenantArg()))
	if err != nil {
		return err
	}
	none, err := db.cached(ctx, "INSERT INTO history (coll, tenant, key, until) VALUES (?1, ?2, ?3, "+until+")")
	if err != nil {
		return err
	}
	for _, p := range r.prior {
		if p.Was == 0 {
			if _, err := none.ExecContext(ctx, c.id, c.tenant, p.Key, p.Until); err != nil {
				return mapErr(err)
			}
			continue
		}
		res, err := copyRow.ExecContext(ctx, c.id, c.tenant, p.Key, p.Until, int64(p.Was))
		if err != nil {
			return mapErr(err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("id %d: %w", p.Was, vector.ErrNotFound)
		}
	}
	return nil
}

// tenantArg is scope with the tenant as an argument, for a statement
// shared by every tenant.
func (c *Collection) tenantArg() string {
	if c.tenant == 0 {
		return ""
	}
	return "tenant = ?2 AND "
}

// cached returns the statement q prepared on the connection, preparing it
// on first use. The caller holds connMu.
func (db *DB) cached(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := db.stmts[q]; ok {
		return s, nil
	}
	s, err := db.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, mapErr(err)
	}
	if db.stmts == nil {
		db.stmts = make(map[string]*sql.Stmt)
	}
	db.stmts[q] = s
	return s, nil
}

// StartHistory records that c's history begins at t, unless it began
// before (a later call does not move it).
func (c *Collection) StartHistory(ctx context.Context, t int64) error {
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		_, err := execCommitting(ctx, conn, "INSERT OR IGNORE INTO history_since (coll, tenant, since) VALUES (?, ?, ?)", c.id, c.tenant, t)
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: start history: %w", err)
	}
	return nil
}

// HistorySince returns the earliest time whose state c's history holds
// whole: when it began, or the latest Until of a state TrimHistory
// removed. It returns an error wrapping [vector.ErrNotFound] if c's
// history has not begun.
func (c *Collection) HistorySince(ctx context.Context) (int64, error) {
	var since int64
	err := c.db.withConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		err := scanErr(conn.QueryRowContext(ctx, "SELECT since FROM history_since WHERE coll = ? AND tenant = ?", c.id, c.tenant).Scan(&since))
		if errors.Is(err, sql.ErrNoRows) {
			return vector.ErrNotFound
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: history since: %w", err)
	}
	return since, nil
}

// LastWrite returns the latest Until c's history has recorded, of a
// state it keeps or one TrimHistory removed: the time of the latest
// write it recorded. It returns an error wrapping [vector.ErrNotFound]
// if c's history has not begun.
func (c *Collection) LastWrite(ctx context.Context) (int64, error) {
	var last int64
	err := c.db.withConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		err := scanErr(conn.QueryRowContext(ctx, `SELECT max(since, coalesce((SELECT max(until) FROM history WHERE coll = ?1 AND tenant = ?2), since))
			FROM history_since WHERE coll = ?1 AND tenant = ?2`, c.id, c.tenant).Scan(&last))
		if errors.Is(err, sql.ErrNoRows) {
			return vector.ErrNotFound
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: last write: %w", err)
	}
	return last, nil
}

const pastColumns = "key, until, id, vec, text, meta, created, updated, expires"

// scanPast reads one row of pastColumns, and the columns after them
// into more.
func (c *Collection) scanPast(rows *sql.Rows, more ...any) (Past, error) {
	var (
		p         Past
		id        sql.NullInt64
		vec, meta []byte
		key, text sql.NullString
		times     [3]sql.NullInt64
	)
	if err := rows.Scan(append([]any{&key, &p.Until, &id, &vec, &text, &meta, &times[0], &times[1], &times[2]}, more...)...); err != nil {
		return Past{}, scanErr(err)
	}
	if !id.Valid {
		p.Item = Item{Key: key.String}
		return p, nil
	}
	it, err := c.makeItem(id.Int64, vec, key, text, meta)
	if err != nil {
		return Past{}, fmt.Errorf("history of %q: %w", key.String, err)
	}
	it.Created, it.Updated, it.Expires = times[0], times[1], times[2]
	p.Item = it
	return p, nil
}

// History returns the kept states of key, oldest first (by Until, then by
// the order they were written).
func (c *Collection) History(ctx context.Context, key string) ([]Past, error) {
	out, err := c.queryPast(ctx, "SELECT "+pastColumns+" FROM history WHERE coll = ? AND tenant = ? AND key = ? ORDER BY until, seq", c.id, c.tenant, key)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: history of %q: %w", key, err)
	}
	return out, nil
}

// queryPast returns the states the query q (selecting pastColumns) finds.
func (c *Collection) queryPast(ctx context.Context, q string, args ...any) ([]Past, error) {
	var out []Past
	err := c.db.withConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			p, err := c.scanPast(rows)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return mapErr(rows.Err())
	})
	return out, err
}

// StatesAt calls fn, in order of key, with the state at t of every key
// that a write recorded in the history has changed since t: the earliest
// kept state whose Until is after t. Keys that no recorded write has
// changed since t are as c holds them now. Like ForEachItem, it reads in
// pages and does not hold the database between them, so it is not a
// snapshot: a write during the call may or may not be seen.
func (c *Collection) StatesAt(ctx context.Context, t int64, fn func(Past) error) error {
	q := `SELECT ` + pastColumns + ` FROM history h
		WHERE coll = ?1 AND tenant = ?2 AND key > ?4 AND until > ?3
		AND NOT EXISTS (SELECT 1 FROM history e WHERE e.coll = ?1 AND e.tenant = ?2 AND e.key = h.key AND e.until > ?3
			AND (e.until < h.until OR (e.until = h.until AND e.seq < h.seq)))
		ORDER BY key LIMIT ` + fmt.Sprint(forEachPage)
	after := ""
	for {
		page, err := c.queryPast(ctx, q, c.id, c.tenant, t, after)
		if err != nil {
			return fmt.Errorf("sqlitestore: states at %d: %w", t, err)
		}
		for _, p := range page {
			if err := fn(p); err != nil {
				return err
			}
		}
		if len(page) < forEachPage {
			return nil
		}
		after = page[len(page)-1].Item.Key
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// ForEachPast calls fn with every state c's history keeps, by Until (then
// in the order they were written), and stops at the first error fn
// returns, returning it. Like ForEachItem, it reads in pages (each a
// range of the history's index by time) and does not hold the database
// between them.
func (c *Collection) ForEachPast(ctx context.Context, fn func(Past) error) error {
	const q = "SELECT " + pastColumns + ", seq FROM history WHERE coll = ? AND tenant = ? AND (until, seq) > (?, ?) ORDER BY until, seq LIMIT ?"
	afterUntil, after := int64(math.MinInt64), int64(math.MinInt64)
	for {
		var page []Past
		err := c.db.withConn(func(conn *sql.Conn) error {
			if c.dropped {
				return vector.ErrClosed
			}
			rows, err := conn.QueryContext(ctx, q, c.id, c.tenant, afterUntil, after, forEachPage)
			if err != nil {
				return mapErr(err)
			}
			defer rows.Close()
			for rows.Next() {
				p, err := c.scanPast(rows, &after)
				if err != nil {
					return err
				}
				page, afterUntil = append(page, p), p.Until
			}
			return mapErr(rows.Err())
		})
		if err != nil {
			return fmt.Errorf("sqlitestore: history: %w", err)
		}
		for _, p := range page {
			if err := fn(p); err != nil {
				return err
			}
		}
		if len(page) < forEachPage {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// TrimHistory removes, in one transaction, the states of c's history
// whose Until is before before (math.MinInt64: none by age) and all but
// the keep latest states of each key (0: none by count), and moves
// HistorySince past every state it removed. It returns how many it
// removed.
func (c *Collection) TrimHistory(ctx context.Context, before int64, keep int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sqlitestore: trim history: %w", err)
	}
	// Once begun, the transaction runs to its end: a context cancelled
	// under a statement can leave it done yet reported failed.
	ctx = context.WithoutCancel(ctx)
	var removed int
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		if err := beginImmediate(ctx, conn); err != nil {
			return err
		}
		n, err := c.trimLocked(ctx, conn, before, keep)
		if err == nil {
			err = commit(ctx, conn)
		}
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return mapErr(err)
		}
		if removed = n; n > 0 {
			c.db.vacuumLocked(context.Background(), 0)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: trim history: %w", err)
	}
	return removed, nil
}

func (c *Collection) trimLocked(ctx context.Context, conn *sql.Conn, before int64, keep int) (int, error) {
	var seqs []int64
	last := int64(math.MinInt64)
	collect := func(q string, args ...any) error {
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq, until int64
			if err := rows.Scan(&seq, &until); err != nil {
				return err
			}
			seqs, last = append(seqs, seq), max(last, until)
		}
		return rows.Err()
	}
	if before != math.MinInt64 {
		if err := collect("SELECT seq, until FROM history WHERE coll = ? AND tenant = ? AND until < ?", c.id, c.tenant, before); err != nil {
			return 0, err
		}
	}
	if keep > 0 {
		if err := collect(`SELECT seq, until FROM (SELECT seq, until,
				ROW_NUMBER() OVER (PARTITION BY key ORDER BY until DESC, seq DESC) AS n
				FROM history WHERE coll = ? AND tenant = ? AND until >= ?) WHERE n > ?`, c.id, c.tenant, before, keep); err != nil {
			return 0, err
		}
	}
	if len(seqs) == 0 {
		return 0, nil
	}
	del, err := conn.PrepareContext(ctx, "DELETE FROM history WHERE seq = ?")
	if err != nil {
		return 0, err
	}
	defer del.Close()
	for _, s := range seqs {
		if _, err := del.ExecContext(ctx, s); err != nil {
			return 0, err
		}
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO history_since (coll, tenant, since) VALUES (?1, ?2, ?3)
		ON CONFLICT (coll, tenant) DO UPDATE SET since = max(since, ?3)`, c.id, c.tenant, last)
	return len(seqs), err
}

// forget closes the cached statements that name table, which is gone.
// The caller holds connMu.
func (db *DB) forget(table string) {
	for q, st := range db.stmts {
		if strings.Contains(q, " "+table+" ") {
			st.Close()
			delete(db.stmts, q)
		}
	}
}
