package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/cairndb/cairn/internal/crashpoint"
	"github.com/cairndb/cairn/vector"
	sqlite3 "modernc.org/sqlite/lib"
)

type opKind uint8

const (
	opPut opKind = iota
	opUpsert
	opDelete
	opReplace // delete ids, then put items; the arena keeps the deleted vectors (see WriteItems)
)

// request is one validated write waiting for the committer.
type request struct {
	ctx   context.Context
	c     *Collection
	kind  opKind
	items []Item      // opPut, opUpsert, opReplace
	blobs [][]byte    // encoded vectors of items
	ids   []vector.ID // opDelete, opReplace
	prior []Prior     // opReplace: the history it records (history.go)
	err   error
	done  chan error
}

// submit validates a write in the caller's goroutine (so that validation
// and encoding run in parallel across callers), queues it for the
// committer and waits for its group's commit.
func (c *Collection) submit(ctx context.Context, kind opKind, items []Item, ids []vector.ID) error {
	return c.submitKeeping(ctx, kind, items, ids, nil)
}

// submitKeeping is submit for a write that records prior in the history.
func (c *Collection) submitKeeping(ctx context.Context, kind opKind, items []Item, ids []vector.ID, prior []Prior) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.db.writable(); err != nil {
		return err
	}
	r := &request{ctx: ctx, c: c, kind: kind, items: items, ids: ids, prior: prior, done: make(chan error, 1)}
	var err error
	if kind == opDelete || kind == opReplace {
		err = checkIDs(ids)
	}
	if err == nil && kind != opDelete {
		r.blobs, err = c.encode(items)
	}
	if err != nil {
		return err
	}
	if len(items) == 0 && len(ids) == 0 && len(prior) == 0 {
		return c.closedErr()
	}
	db := c.db
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return vector.ErrClosed
	}
	db.reqs <- r // the committer keeps draining until Close holds mu
	db.mu.RUnlock()
	return <-r.done
}

func (c *Collection) closedErr() error {
	c.db.mu.RLock()
	defer c.db.mu.RUnlock()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db.closed || c.dropped {
		return vector.ErrClosed
	}
	return nil
}

// timeArg is t as a statement argument: NULL or the int64 itself, which
// the driver takes without the sql.Valuer round trip (and its boxing) of
// a sql.NullInt64.
func timeArg(t sql.NullInt64) any {
	if !t.Valid {
		return nil
	}
	return t.Int64
}

func checkIDs(ids []vector.ID) error {
	if len(ids) <= 1 {
		return nil
	}
	seen := make(map[vector.ID]struct{}, len(ids))
	for i, id := range ids {
		if _, dup := seen[id]; dup {
			return fmt.Errorf("item %d (id %d): %w (repeated)", i, id, vector.ErrInvalidOptions)
		}
		seen[id] = struct{}{}
	}
	return nil
}

// encode validates items and returns their vectors in on-disk form, all
// slices of one allocation.
func (c *Collection) encode(items []Item) ([][]byte, error) {
	var ids map[vector.ID]struct{}
	var keys map[string]struct{}
	if len(items) > 1 {
		ids = make(map[vector.ID]struct{}, len(items))
		keys = make(map[string]struct{})
	}
	for i := range items {
		it := &items[i]
		if err := vector.Check(it.Vector, c.dim, c.metric); err != nil {
			return nil, fmt.Errorf("item %d (id %d): %w", i, it.ID, err)
		}
		if err := checkJSON(it.Metadata); err != nil {
			return nil, fmt.Errorf("item %d (id %d): %w: metadata %w", i, it.ID, vector.ErrInvalidOptions, err)
		}
		if ids != nil {
			if _, dup := ids[it.ID]; dup {
				return nil, fmt.Errorf("item %d (id %d): %w (repeated in batch)", i, it.ID, vector.ErrDuplicateID)
			}
			ids[it.ID] = struct{}{}
			if it.Key != "" {
				if _, dup := keys[it.Key]; dup {
					return nil, fmt.Errorf("item %d (key %q): %w (key repeated in batch)", i, it.Key, vector.ErrDuplicateID)
				}
				keys[it.Key] = struct{}{}
			}
		}
	}
	size := 4 * c.dim
	buf := make([]byte, 0, size*len(items))
	blobs := make([][]byte, len(items))
	for i := range items {
		buf = appendVector(buf, items[i].Vector)
		blobs[i] = buf[i*size : (i+1)*size : (i+1)*size]
	}
	return blobs, nil
}

// txStmts are the committer's statements, prepared once: preparing
// "BEGIN" and "COMMIT" on every group cost a quarter of its CPU time.
type txStmts struct {
	begin, commit, rollback, savepoint, release, rollbackTo, bump, bumpTenant *sql.Stmt
	// reclaim is set while the log needs the checkpoint that a group
	// failing on a full disk could not run (see reclaimLocked).
	reclaim bool
}

func (t *txStmts) prepare(ctx context.Context, conn *sql.Conn) error {
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = conn.PrepareContext(ctx, q)
		return s
	}
	t.begin = p("BEGIN IMMEDIATE")
	t.commit = p("COMMIT")
	t.rollback = p("ROLLBACK")
	t.savepoint = p("SAVEPOINT w")
	t.release = p("RELEASE w")
	t.rollbackTo = p("ROLLBACK TO w")
	t.bump = p("UPDATE collections SET changes = changes + 1 WHERE id = ?")
	t.bumpTenant = p("UPDATE tenants SET changes = changes + 1 WHERE id = ?")
	return err
}

func (t *txStmts) close() {
	for _, s := range []*sql.Stmt{t.begin, t.commit, t.rollback, t.savepoint, t.release, t.rollbackTo, t.bump, t.bumpTenant} {
		if s != nil {
			s.Close()
		}
	}
}

func (t *txStmts) exec(ctx context.Context, s *sql.Stmt) error {
	_, err := s.ExecContext(ctx)
	return err
}

// run is the committer: it takes the first pending request, gathers every
// other request already queued (up to MaxGroup) and commits them together.
// A lone writer therefore never waits for company, and many writers share
// each fsync.
func (db *DB) run() {
	defer close(db.done)
	group := make([]*request, 0, db.opts.MaxGroup)
	for {
		select {
		case r := <-db.reqs:
			group = append(group[:0], r)
		gather:
			for len(group) < db.opts.MaxGroup {
				select {
				case r := <-db.reqs:
					group = append(group, r)
				default:
					break gather
				}
			}
			db.commit(group)
		case <-db.quit:
			// Close holds mu: nothing more can be queued.
			for {
				group = group[:0]
				for len(group) < db.opts.MaxGroup {
					select {
					case r := <-db.reqs:
						group = append(group, r)
						continue
					default:
					}
					break
				}
				if len(group) == 0 {
					return
				}
				db.commit(group)
			}
		}
	}
}

// commit writes a group of requests in one transaction, then applies the
// ones that succeeded to the arenas and answers every caller.
//
// The rule for failure: a request fails alone only on a constraint (a
// duplicate id or key, a missing id on delete), which SQLite undoes by
// rolling back that statement and nothing else. Any other error (a full
// disk, an I/O error, no memory) may have rolled back the whole
// transaction, after which SQLite would run later statements, SAVEPOINT
// included, each in a transaction of its own, durable at once. So at the
// first such error the committer stops issuing statements, rolls back
// whatever is left and fails every request of the group: nothing of it is
// durable, and each may be retried as it was.
func (db *DB) commit(group []*request) {
	db.connMu.Lock()
	defer db.connMu.Unlock()
	ctx := context.Background()
	live := group[:0:0]
	for _, r := range group {
		switch {
		case r.ctx.Err() != nil:
			r.done <- r.ctx.Err()
		case r.c.dropped:
			r.done <- vector.ErrClosed
		default:
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	db.reclaimLocked(ctx, nil)
	touched, err := db.commitGroup(ctx, live)
	if err != nil {
		db.rollbackLocked(ctx)
		db.reclaimLocked(ctx, err)
		for _, r := range live {
			switch {
			case r.err != nil && (isRequestErr(r.err) || r.err == err):
				r.done <- r.err // its own failure
			default:
				r.done <- fmt.Errorf("group commit failed: %w", err)
			}
		}
		return
	}
	db.groups.Add(1)
	// Durable: make it visible, one request at a time.
	freed := false
	for _, r := range live {
		if r.err == nil {
			r.c.applyArena(r)
			freed = freed || r.kind != opPut
		}
	}
	for c := range touched {
		c.changes.Add(1)
	}
	for _, r := range live {
		r.done <- r.err
	}
	if freed {
		db.vacuumLocked(ctx, 0)
	}
}

// commitGroup runs the group's transaction. It leaves r.err set on each
// request that failed alone and returns the collections changed by the
// others, committed; or an error that fails the whole group, with the
// transaction possibly still open.
func (db *DB) commitGroup(ctx context.Context, live []*request) (map[*Collection]bool, error) {
	if err := db.beginLocked(ctx); err != nil {
		return nil, err
	}
	// Optimistic pass: every request straight into the transaction. A
	// request fails alone only on a constraint, which is rare; then the
	// group is rolled back and replayed with a savepoint around each
	// request, so that only the failing one fails.
	failed := false
	for _, r := range live {
		if r.err = db.apply(ctx, r); r.err != nil {
			if !isRequestErr(r.err) {
				return nil, r.err
			}
			failed = true
			break
		}
	}
	if failed && len(live) > 1 {
		if err := db.tx.exec(ctx, db.tx.rollback); err != nil {
			return nil, fmt.Errorf("rollback: %w", mapErr(err))
		}
		if err := db.beginLocked(ctx); err != nil {
			return nil, err
		}
		for _, r := range live {
			if err := db.tx.exec(ctx, db.tx.savepoint); err != nil {
				return nil, fmt.Errorf("savepoint: %w", mapErr(err))
			}
			if r.err = db.apply(ctx, r); r.err != nil {
				if !isRequestErr(r.err) {
					return nil, r.err
				}
				if err := db.tx.exec(ctx, db.tx.rollbackTo); err != nil {
					return nil, fmt.Errorf("rollback to savepoint: %w", mapErr(err))
				}
			}
			if err := db.tx.exec(ctx, db.tx.release); err != nil {
				return nil, fmt.Errorf("release savepoint: %w", mapErr(err))
			}
		}
	}
	touched := map[*Collection]bool{}
	for _, r := range live {
		if r.err == nil {
			touched[r.c] = true
		}
	}
	if len(touched) == 0 {
		db.rollbackLocked(ctx)
		return nil, nil
	}
	for c := range touched {
		bump, id := db.tx.bump, c.id
		if c.tenant != 0 {
			bump, id = db.tx.bumpTenant, c.tenant
		}
		if _, err := bump.ExecContext(ctx, id); err != nil {
			return nil, mapErr(err)
		}
	}
	if err := db.tx.exec(ctx, db.tx.commit); err != nil {
		db.rollbackLocked(ctx)
		db.eraseFailedCommitLocked(ctx, err)
		return nil, fmt.Errorf("commit: %w", mapErr(err))
	}
	crashpoint.Hit(crashpoint.Commit)
	return touched, nil
}

// eraseFailedCommitLocked removes from the write-ahead log what a failed
// COMMIT may have left there. When the fsync of a commit fails, its frames
// were already written, whole and with valid checksums: SQLite forgets
// them, but the next Open would find them and take the commit as done. A
// TRUNCATE checkpoint copies only the commits that succeeded into the file
// and empties the log, frames beyond them included. If it cannot, the
// outcome of the failed writes stays unknown until the next Open.
func (db *DB) eraseFailedCommitLocked(ctx context.Context, cause error) {
	var busy, logged, done int64
	err := db.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done)
	if err == nil && busy != 0 {
		err = errors.New("checkpoint blocked")
	}
	if err != nil {
		db.log.Error("sqlitestore: a commit failed and its log frames could not be erased: the failed writes may reappear at the next Open",
			"path", db.path, "commit", cause, "err", err)
	}
}

// isRequestErr reports whether err is a request's own failure (a
// constraint, after which SQLite has undone only that statement) rather
// than one of the transaction.
func isRequestErr(err error) bool {
	return errors.Is(err, vector.ErrDuplicateID) || errors.Is(err, vector.ErrNotFound)
}

// beginLocked starts the committer's transaction. A transaction left open
// by a failure that even ROLLBACK could not end is rolled back first.
func (db *DB) beginLocked(ctx context.Context) error {
	err := db.tx.exec(ctx, db.tx.begin)
	if err != nil {
		db.rollbackLocked(ctx)
		err = db.tx.exec(ctx, db.tx.begin)
	}
	if err != nil {
		// Busy or locked: the write lock is held elsewhere (ErrLocked).
		return fmt.Errorf("begin: %w", lockErr(err))
	}
	return nil
}

// rollbackLocked ends the open transaction, if any. It fails harmlessly
// when SQLite has already rolled back; any other failure is logged, and
// the next beginLocked tries again.
func (db *DB) rollbackLocked(ctx context.Context) {
	if err := db.tx.exec(ctx, db.tx.rollback); err != nil && !strings.Contains(err.Error(), "no transaction is active") {
		db.log.Warn("sqlitestore: rollback failed", "path", db.path, "err", err)
	}
}

// apply runs the SQL of one request inside the open transaction.
func (db *DB) apply(ctx context.Context, r *request) error {
	c := r.c
	// The history first, which copies rows the deletes remove; then the
	// deletes, so that an opReplace frees the keys its items take.
	if err := db.keepPriors(ctx, r); err != nil {
		return err
	}
	for _, id := range r.ids {
		res, err := c.delStmt.ExecContext(ctx, c.args(int64(id))...)
		if err != nil {
			return mapErr(err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("id %d: %w", id, vector.ErrNotFound)
		}
	}
	stmt := c.insStmt
	if r.kind == opUpsert {
		stmt = c.upsStmt
	}
	for i := range r.items {
		it := &r.items[i]
		if _, err := stmt.ExecContext(ctx, c.args(int64(it.ID), r.blobs[i], nullString(it.Key), nullString(it.Text), nullJSON(it.Metadata),
			timeArg(it.Created), timeArg(it.Updated), timeArg(it.Expires))...); err != nil {
			return itemErr(it, err)
		}
	}
	return nil
}

func itemErr(it *Item, err error) error {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("id %d: %w", it.ID, vector.ErrDuplicateID)
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return fmt.Errorf("id %d: key %q: %w (key used by another item)", it.ID, it.Key, vector.ErrDuplicateID)
	}
	return fmt.Errorf("id %d: %w", it.ID, mapErr(err))
}

// applyArena mirrors a committed request into the arena, under the
// collection's lock so that readers see all of it or none.
func (c *Collection) applyArena(r *request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx := context.Background()
	var err error
	switch r.kind {
	case opPut, opReplace: // opReplace leaves the deleted vectors to Evict
		for i := range r.items {
			if err = c.arena.Put(ctx, r.items[i].ID, r.items[i].Vector); err != nil {
				break
			}
		}
	case opUpsert:
		for i := range r.items {
			id := r.items[i].ID
			if _, gerr := c.arena.Get(id); gerr == nil {
				c.arena.Delete(ctx, id)
			}
			if err = c.arena.Put(ctx, id, r.items[i].Vector); err != nil {
				break
			}
		}
	case opDelete:
		for _, id := range r.ids {
			if err = c.arena.Delete(ctx, id); err != nil {
				break
			}
		}
	}
	if err != nil {
		// SQLite and the arena agreed before the commit and the request was
		// validated, so this is a bug; the file is right, and reopening
		// reloads the arena from it.
		c.db.log.Error("sqlitestore: arena out of step with the database; reopen to reload", "collection", c.name, "err", err)
	}
}
