package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
)

// Item is one stored record of a collection. It is a plain value: writes
// copy what they need before returning, and reads return items the caller
// owns.
type Item struct {
	// ID is the numeric key of the item, unique in its collection.
	ID vector.ID
	// Key is the caller's external identifier; when not empty it is
	// unique in the collection.
	Key string
	// Vector is the embedding, stored exactly as given (not normalised);
	// the in-memory arena holds its prepared form.
	Vector vector.Vector
	// Text is free text, such as the content that was embedded.
	Text string
	// Metadata is JSON, or nil.
	Metadata []byte
	// Created, Updated and Expires are times owned by the caller, in Unix
	// nanoseconds; not Valid (stored as NULL) for none, so that 0, the
	// Unix epoch, is a time like any other. Items written before schema
	// version 2 have none. Earlier builds stored none as NULL too, never
	// as 0, so a stored 0 is the epoch.
	Created, Updated, Expires sql.NullInt64
}

// Collection is a named set of items of one dimension and metric, stored in
// a [DB]. It implements [vector.Store], [vector.BatchPutter],
// [vector.BlockViewer] and [vector.SlotStore]: its vectors are held in an in-memory arena (a
// [vector.MemStore]) loaded at Open, so reads and searches never touch
// SQLite; writes go to SQLite first and reach the arena once committed.
//
// Collection is safe for concurrent use: any number of goroutines may read
// while others write; a write is visible to readers all at once, after it
// is durable.
type Collection struct {
	db     *DB
	id     int64
	name   string
	table  string
	dim    int
	metric vector.Metric
	// tenant is the row id of a tenant (tenant.go) in the tenants table,
	// whose items are the rows of tenant_items with that tenant; 0 for a
	// collection, whose items are its own table.
	tenant int64

	changes atomic.Uint64 // committed transactions that changed the items

	mu       sync.RWMutex // makes each committed request visible at once
	arena    *vector.MemStore
	settings []byte
	dropped  bool // deleted, or a tenant unloaded; guarded by mu and db.connMu

	// Prepared statements on db.conn, used under db.connMu.
	insStmt, upsStmt, delStmt, getStmt *sql.Stmt
}

var (
	_ vector.Store       = (*Collection)(nil)
	_ vector.BatchPutter = (*Collection)(nil)
	_ vector.BlockViewer = (*Collection)(nil)
)

// newCollection returns the collection (or, for a tenant, the tenant of
// the collection) id; its arena is paged when db's options say so and
// paged is set.
func newCollection(db *DB, id int64, name string, cfg CollectionConfig, paged bool) (*Collection, error) {
	var arena *vector.MemStore
	var err error
	if dir := db.opts.PageVectorsIn; paged && dir != "" {
		arena, err = vector.NewPagedMemStore(cfg.Dim, cfg.Metric, dir)
	} else {
		arena, err = vector.NewMemStore(cfg.Dim, cfg.Metric)
	}
	if err != nil {
		return nil, err
	}
	return &Collection{
		db:       db,
		id:       id,
		name:     name,
		table:    itemsTable(id),
		dim:      cfg.Dim,
		metric:   cfg.Metric,
		arena:    arena,
		settings: clone(cfg.Settings),
	}, nil
}

// prepare prepares the collection's statements; the caller holds connMu
// or is still opening the DB. A tenant uses the statements its DB
// prepared for every tenant (tenant.go).
func (c *Collection) prepare(ctx context.Context) error {
	if c.tenant != 0 {
		return c.db.bindTenant(ctx, c)
	}
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = c.db.conn.PrepareContext(ctx, fmt.Sprintf(q, c.table))
		return s
	}
	c.insStmt = p("INSERT INTO %s (id, vec, key, text, meta, created, updated, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	c.upsStmt = p(`INSERT INTO %s (id, vec, key, text, meta, created, updated, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET vec = excluded.vec, key = excluded.key, text = excluded.text, meta = excluded.meta,
			created = excluded.created, updated = excluded.updated, expires = excluded.expires`)
	c.delStmt = p("DELETE FROM %s WHERE id = ?")
	c.getStmt = p("SELECT vec, key, text, meta, created, updated, expires FROM %s WHERE id = ?")
	if err != nil {
		c.closeStmts()
		return mapErr(err)
	}
	return nil
}

func (c *Collection) closeStmts() {
	if c.tenant != 0 {
		c.insStmt, c.upsStmt, c.delStmt, c.getStmt = nil, nil, nil, nil // the DB's
		return
	}
	for _, s := range []**sql.Stmt{&c.insStmt, &c.upsStmt, &c.delStmt, &c.getStmt} {
		if *s != nil {
			(*s).Close()
			*s = nil
		}
	}
}

// loadBatch is the number of vectors handed at a time from the goroutine
// that reads SQLite to the one that fills the arena.
const loadBatch = 256

type batch struct {
	ids  []vector.ID
	data []float32
}

// load streams the collection's vectors into the arena. One goroutine
// steps through the rows and decodes each BLOB into a batch buffer; a
// second validates, normalises and copies the batches into the arena, so
// that on two cores the two halves (each about half of the work) overlap.
// Three batch buffers are recycled: nothing is allocated per row beyond
// what the driver does. Last, it checks the key index against the table
// (checkKeyIndex).
func (c *Collection) load(ctx context.Context) error {
	rows, err := c.db.conn.QueryContext(ctx, c.loadQuery())
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	free := make(chan *batch, 3)
	full := make(chan *batch, 3)
	for range 3 {
		free <- &batch{ids: make([]vector.ID, 0, loadBatch), data: make([]float32, loadBatch*c.dim)}
	}
	var (
		keys    keyDigest // of the table, for checkKeyIndex
		putErr  error
		failed  atomic.Bool
		drained = make(chan struct{})
	)
	go func() {
		defer close(drained)
		for b := range full {
			for i, id := range b.ids {
				if putErr != nil {
					break
				}
				if err := c.arena.Put(ctx, id, b.data[i*c.dim:(i+1)*c.dim]); err != nil {
					putErr = fmt.Errorf("%w: item %d: %w", vector.ErrCorrupt, uint64(id), err)
					failed.Store(true)
				}
			}
			b.ids = b.ids[:0]
			free <- b
		}
	}()
	readErr := func() error {
		var (
			id     int64
			raw    sql.RawBytes
			keyLen sql.NullInt64
			n      int
		)
		b := <-free
		for rows.Next() {
			if err := rows.Scan(&id, &raw, &keyLen); err != nil {
				return scanErr(err)
			}
			if keyLen.Valid {
				keys.add(id, keyLen.Int64)
			}
			i := len(b.ids)
			if err := decodeVector(b.data[i*c.dim:(i+1)*c.dim], raw); err != nil {
				return fmt.Errorf("item %d: %w", uint64(id), err)
			}
			b.ids = append(b.ids, vector.ID(id))
			if len(b.ids) == loadBatch {
				full <- b
				b = <-free
			}
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if failed.Load() {
					return nil
				}
			}
		}
		full <- b
		return mapErr(rows.Err())
	}()
	close(full)
	<-drained
	if readErr != nil {
		return readErr
	}
	if putErr != nil {
		return putErr
	}
	return c.checkKeyIndex(ctx, keys)
}

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// Dim returns the dimension of the collection's vectors.
func (c *Collection) Dim() int { return c.dim }

// Metric returns the metric the collection's vectors are prepared for.
func (c *Collection) Metric() vector.Metric { return c.metric }

// Len returns the number of items.
func (c *Collection) Len() int { return c.arena.Len() }

// Changes returns the number of committed transactions that changed the
// items since the collection was created.
func (c *Collection) Changes() uint64 { return c.changes.Load() }

// Settings returns a copy of the collection's settings JSON.
func (c *Collection) Settings() []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return clone(c.settings)
}

// Info describes the collection.
func (c *Collection) Info() CollectionInfo {
	return CollectionInfo{
		Name:     c.name,
		Dim:      c.dim,
		Metric:   c.metric,
		Settings: c.Settings(),
		Len:      c.Len(),
		Changes:  c.Changes(),
	}
}

// SetSettings replaces the collection's settings JSON durably. It returns
// an error wrapping [vector.ErrInvalidOptions] if settings is not JSON.
func (c *Collection) SetSettings(ctx context.Context, settings []byte) error {
	if err := checkJSON(settings); err != nil {
		return fmt.Errorf("sqlitestore: set settings: %w: %w", vector.ErrInvalidOptions, err)
	}
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		if _, err := execCommitting(ctx, conn, "UPDATE collections SET settings = ? WHERE id = ?", nullJSON(settings), c.id); err != nil {
			return mapErr(err)
		}
		c.mu.Lock()
		c.settings = clone(settings)
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: set settings: %w", err)
	}
	return nil
}

// Get returns the prepared vector of id from the arena; see
// [vector.Store]. The slice is read-only and valid until id is deleted or
// replaced, or the collection closed.
func (c *Collection) Get(id vector.ID) (vector.Vector, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.arena.Get(id)
}

// Memory returns the bytes the collection's arena of vectors holds (see
// [vector.StoreMemory]; Paged is set under [Options.PageVectorsIn]).
func (c *Collection) Memory() vector.StoreMemory { return c.arena.Memory() }

// PageOut drops the collection's vectors from memory when they are paged
// ([Options.PageVectorsIn]; see [vector.MemStore.PageOut]), and does
// nothing otherwise. It never writes the SQLite file.
func (c *Collection) PageOut() error { return c.arena.PageOut() }

// Put stores v under id durably, with no key, text or metadata; see
// [vector.Store] and [Collection.PutItems].
func (c *Collection) Put(ctx context.Context, id vector.ID, v vector.Vector) error {
	return c.PutItems(ctx, []Item{{ID: id, Vector: v}})
}

// PutBatch stores vs under ids durably in one transaction, all or nothing;
// see [vector.BatchPutter].
func (c *Collection) PutBatch(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
	if len(ids) != len(vs) {
		return fmt.Errorf("sqlitestore: put batch: %w: %d ids for %d vectors", vector.ErrInvalidOptions, len(ids), len(vs))
	}
	items := make([]Item, len(ids))
	for i := range ids {
		items[i] = Item{ID: ids[i], Vector: vs[i]}
	}
	return c.PutItems(ctx, items)
}

// Delete removes id durably, or returns an error wrapping
// [vector.ErrNotFound]; see [vector.Store].
func (c *Collection) Delete(ctx context.Context, id vector.ID) error {
	return c.DeleteItems(ctx, []vector.ID{id})
}

// ForEach calls fn with every vector of the arena (prepared form); see
// [vector.Store]. fn may call Get.
func (c *Collection) ForEach(fn func(vector.ID, vector.Vector) error) error {
	return c.arena.ForEach(fn)
}

// ViewBlocks calls fn with the arena's blocks; see [vector.BlockViewer].
// No write becomes visible while fn runs.
func (c *Collection) ViewBlocks(fn func([]vector.Block) error) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.arena.ViewBlocks(fn)
}

// Slot returns the arena slot of id's vector; see [vector.SlotStore].
func (c *Collection) Slot(id vector.ID) (uint32, bool) { return c.arena.Slot(id) }

// SlotBlock returns block b of the arena; see [vector.SlotStore].
func (c *Collection) SlotBlock(b int) []float32 { return c.arena.SlotBlock(b) }

// Hold keeps arena slot s from reuse; see [vector.SlotStore].
func (c *Collection) Hold(s uint32) { c.arena.Hold(s) }

// Release undoes a Hold of arena slot s; see [vector.SlotStore].
func (c *Collection) Release(s uint32) { c.arena.Release(s) }

// PutItems stores items in one transaction, all or nothing, and returns
// once they are durable (see [Options.Sync]). It returns an error wrapping
// [vector.ErrDuplicateID] if an ID is already stored or repeated, or a
// non-empty Key is already used by another item or repeated;
// [vector.ErrInvalidOptions] if Metadata is not JSON; and the errors of
// [vector.Check] for a bad vector. On error nothing is stored.
//
// Concurrent calls share transactions: a committer goroutine gathers the
// requests pending when it becomes free into one transaction and one
// fsync, each request in its own savepoint so that one failing does not
// fail the others. The call waits for its group's commit even if ctx is
// cancelled after the request was queued, so that its result is always
// the truth; a request whose ctx is cancelled before its group starts is
// not written.
func (c *Collection) PutItems(ctx context.Context, items []Item) error {
	if err := c.submit(ctx, opPut, items, nil); err != nil {
		return fmt.Errorf("sqlitestore: put items: %w", err)
	}
	return nil
}

// UpsertItems stores items in one transaction, replacing any item with
// the same ID (vector, key, text and metadata together), all or nothing.
// Its errors are those of [Collection.PutItems], except that an existing ID
// is replaced rather than refused.
func (c *Collection) UpsertItems(ctx context.Context, items []Item) error {
	if err := c.submit(ctx, opUpsert, items, nil); err != nil {
		return fmt.Errorf("sqlitestore: upsert items: %w", err)
	}
	return nil
}

// DeleteItems deletes ids in one transaction, all or nothing, and returns
// once that is durable. It returns an error wrapping [vector.ErrNotFound]
// if an id is not stored (and then deletes nothing). The space of deleted
// items is reused by later writes, and returned to the file system when
// free pages exceed a quarter of the file.
func (c *Collection) DeleteItems(ctx context.Context, ids []vector.ID) error {
	if err := c.submit(ctx, opDelete, nil, ids); err != nil {
		return fmt.Errorf("sqlitestore: delete items: %w", err)
	}
	return nil
}

// WriteItems deletes the items drop and stores items, in one transaction,
// all or nothing, and returns once that is durable. Unlike
// [Collection.DeleteItems], it leaves the vectors of drop in memory, where
// Get, ForEach and ViewBlocks (and so the indexes that read the
// collection) still find them, until [Collection.Evict] removes them;
// Len counts them until then. An owner that keeps versions of its items
// under distinct ids (package cairn) uses it to replace a version by the
// next in one transaction while readers still use the old one.
//
// Its errors are those of [Collection.PutItems], and
// [vector.ErrNotFound] if an id of drop is not stored; an id both in drop
// and in items is an error wrapping [vector.ErrInvalidOptions].
func (c *Collection) WriteItems(ctx context.Context, items []Item, drop []vector.ID) error {
	if len(drop) > 0 && len(items) > 0 {
		dropped := make(map[vector.ID]struct{}, len(drop))
		for _, id := range drop {
			dropped[id] = struct{}{}
		}
		for i := range items {
			if _, ok := dropped[items[i].ID]; ok {
				return fmt.Errorf("sqlitestore: write items: %w: id %d both written and deleted", vector.ErrInvalidOptions, items[i].ID)
			}
		}
	}
	return c.writeItems(ctx, items, drop, nil)
}

func (c *Collection) writeItems(ctx context.Context, items []Item, drop []vector.ID, prior []Prior) error {
	if err := c.submitKeeping(ctx, opReplace, items, drop, prior); err != nil {
		return fmt.Errorf("sqlitestore: write items: %w", err)
	}
	return nil
}

// Evict removes from memory the vectors of ids, items that
// [Collection.WriteItems] has deleted. It returns an error wrapping
// [vector.ErrNotFound] for an id whose vector is not in memory, after
// evicting the others.
func (c *Collection) Evict(ids []vector.ID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for _, id := range ids {
		if err := c.arena.Delete(context.Background(), id); err != nil && first == nil {
			first = fmt.Errorf("sqlitestore: evict: %w", err)
		}
	}
	return first
}

// GetItem returns the stored item id, with its vector as it was written
// (not normalised) in a new slice, or an error wrapping
// [vector.ErrNotFound]. It reads SQLite, so it waits for a commit in
// progress.
func (c *Collection) GetItem(ctx context.Context, id vector.ID) (Item, error) {
	var it Item
	err := c.db.withConn(func(*sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		var (
			vec       []byte
			key, text sql.NullString
			meta      []byte
			times     [3]sql.NullInt64
		)
		err := scanErr(c.getStmt.QueryRowContext(ctx, c.args(int64(id))...).Scan(&vec, &key, &text, &meta, &times[0], &times[1], &times[2]))
		if errors.Is(err, sql.ErrNoRows) {
			return vector.ErrNotFound
		}
		if err != nil {
			return mapErr(err)
		}
		it, err = c.makeItem(int64(id), vec, key, text, meta)
		it.Created, it.Updated, it.Expires = times[0], times[1], times[2]
		return err
	})
	if err != nil {
		return Item{}, fmt.Errorf("sqlitestore: get item %d: %w", id, err)
	}
	return it, nil
}

func (c *Collection) makeItem(id int64, vec []byte, key, text sql.NullString, meta []byte) (Item, error) {
	it := Item{ID: vector.ID(id), Key: key.String, Text: text.String, Vector: make(vector.Vector, c.dim)}
	if len(meta) > 0 {
		it.Metadata = meta // Scan into []byte copies already
	}
	if err := decodeVector(it.Vector, vec); err != nil {
		return Item{}, err
	}
	return it, nil
}

// forEachPage is the number of rows ForEachItem reads per query.
const forEachPage = 256

// ForEachItem calls fn for every item, in ascending order of ID as a signed
// 64-bit integer, and stops at the first error fn returns, returning it.
// Each Item.Vector is a new slice holding the vector as it was written.
// It reads SQLite in pages of a few hundred rows and does not hold the
// database between pages, so fn may call any method, writes included; it
// is not a snapshot: items written during the walk may or may not be seen.
func (c *Collection) ForEachItem(ctx context.Context, fn func(Item) error) error {
	return c.walk(ctx, true, fn)
}

// ForEachPayload is [Collection.ForEachItem] without the vectors: each
// Item has a nil Vector, which saves decoding and allocating them when
// only keys, text and metadata are wanted (the vectors are in the arena).
func (c *Collection) ForEachPayload(ctx context.Context, fn func(Item) error) error {
	return c.walk(ctx, false, fn)
}

func (c *Collection) walk(ctx context.Context, withVec bool, fn func(Item) error) error {
	cols := "id, NULL, key, text, meta, created, updated, expires"
	if withVec {
		cols = "id, vec, key, text, meta, created, updated, expires"
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %sid > ? ORDER BY id LIMIT %d", cols, c.table, c.scope(), forEachPage)
	first := fmt.Sprintf("SELECT %s FROM %s WHERE %sid >= ? ORDER BY id LIMIT %d", cols, c.table, c.scope(), forEachPage)
	after := int64(math.MinInt64)
	for page := 0; ; page++ {
		var items []Item
		err := c.db.withConn(func(conn *sql.Conn) error {
			if c.dropped {
				return vector.ErrClosed
			}
			query := q
			if page == 0 {
				query = first
			}
			rows, err := conn.QueryContext(ctx, query, after)
			if err != nil {
				return mapErr(err)
			}
			defer rows.Close()
			for rows.Next() {
				var (
					id        int64
					vec, meta []byte
					key, text sql.NullString
					times     [3]sql.NullInt64
				)
				if err := rows.Scan(&id, &vec, &key, &text, &meta, &times[0], &times[1], &times[2]); err != nil {
					return scanErr(err)
				}
				var it Item
				if withVec {
					if it, err = c.makeItem(id, vec, key, text, meta); err != nil {
						return err
					}
				} else {
					it = Item{ID: vector.ID(id), Key: key.String, Text: text.String}
					if len(meta) > 0 {
						it.Metadata = meta
					}
				}
				it.Created, it.Updated, it.Expires = times[0], times[1], times[2]
				items = append(items, it)
				after = id
			}
			return mapErr(rows.Err())
		})
		if err != nil {
			return fmt.Errorf("sqlitestore: for each item: %w", err)
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if len(items) < forEachPage {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func checkJSON(b []byte) error {
	if len(b) > 0 && !json.Valid(b) {
		return errors.New("not valid JSON")
	}
	return nil
}

// nullJSON is the column value of optional JSON: NULL when empty.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
