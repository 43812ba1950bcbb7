// This file holds Collection, one cairn collection over one Weaviate
// class: items are objects whose UUID derives from the item's id, with the
// id, text and metadata as properties.

package weaviate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/metavalue"
	"github.com/cairndb/cairn/vector"
)

// Collection is a collection on the cluster; it satisfies
// [cairn.MemoryCollection]. Get one from [DB.CreateCollection] or
// [DB.Collection]. It is safe for concurrent use by multiple goroutines.
type Collection struct {
	db    *DB
	name  string
	class string
	cfg   cairn.CollectionConfig
	made  string // the class's Made: see Collection.same

	mu    sync.Mutex
	types map[string]string // metadata key → property data type, as last read
}

func (db *DB) newCollection(name, cls string, cfg cairn.CollectionConfig, made string, types map[string]string) *Collection {
	if types == nil {
		types = map[string]string{}
	}
	return &Collection{db: db, name: name, class: cls, cfg: cfg, made: made, types: types}
}

// same returns an error wrapping vector.ErrNotFound unless the class under
// the collection's name is the one the handle was made for: a collection
// deleted and made again under its name (with another dimension, say) is
// another collection, which the handle's writes must not reach. It reads
// the schema once; a class made before Made was kept passes.
func (c *Collection) same(ctx context.Context) error {
	return c.db.sameClass(ctx, c.class, "collection", c.made)
}

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// Config returns the collection's configuration, defaults filled in.
func (c *Collection) Config() cairn.CollectionConfig { return c.cfg }

// Class returns the name of the Weaviate class that holds the collection.
func (c *Collection) Class() string { return c.class }

// Count returns the number of items, as the cluster counts them.
func (c *Collection) Count(ctx context.Context) (int, error) {
	if err := c.db.usable(); err != nil {
		return 0, err
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	n, err := c.db.count(ctx, c.class)
	if err != nil {
		return 0, fmt.Errorf("weaviate: count %q: %w", c.name, err)
	}
	return n, nil
}

// readProps are the properties every read returns.
var readProps = []string{propID, propText, propMeta}

// row is an item ready to be written.
type row struct {
	id   string
	uuid string
	vec  []float32
	text string
	md   map[string]any // normalised: string, float64 or bool
}

// Add stores items. It returns the errors of cairn's Collection.Add for
// the same bad input (vector.ErrDuplicateID for an id stored or repeated,
// vector.ErrEmptyID, the errors of vector.Check, vector.ErrInvalidOptions
// for bad metadata, cairn.ErrNoEmbedder), with nothing stored. A write
// that fails on the cluster (ErrUnavailable, or an *APIError for objects
// not written) is undone: the objects it did write are deleted again.
func (c *Collection) Add(ctx context.Context, items ...cairn.Item) error {
	return c.write(ctx, "add", items, false)
}

// Upsert stores items, replacing those whose ids are stored, with the
// errors of [Collection.Add] except vector.ErrDuplicateID for a stored id.
// A write that fails on the cluster is undone: the items it replaced are
// written back and the new ones deleted.
func (c *Collection) Upsert(ctx context.Context, items ...cairn.Item) error {
	return c.write(ctx, "upsert", items, true)
}

func (c *Collection) write(ctx context.Context, op string, items []cairn.Item, replace bool) error {
	if err := c.db.usable(); err != nil {
		return err
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	wctx, wcancel, undo := split(ctx)
	defer wcancel()
	rows, err := c.prepare(wctx, op, items)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	uuids := make([]string, len(rows))
	keys := make([]string, len(rows))
	for i, r := range rows {
		uuids[i], keys[i] = r.uuid, r.id
	}
	unlock, err := c.db.lockIDs(wctx, c.class, keys)
	if err != nil {
		return fmt.Errorf("weaviate: %s: %w", op, err)
	}
	defer unlock()
	if err := c.same(wctx); err != nil {
		return fmt.Errorf("weaviate: %s: %w", op, err)
	}
	olds, err := c.db.getByUUID(wctx, c.class, uuids, readProps, replace)
	if err != nil {
		return fmt.Errorf("weaviate: %s: %w", op, err)
	}
	if !replace && len(olds) > 0 {
		for _, r := range rows {
			if _, ok := olds[r.uuid]; ok {
				return fmt.Errorf("weaviate: %s %q: %w", op, r.id, vector.ErrDuplicateID)
			}
		}
	}
	if err := c.ensureTypes(wctx, op, rows); err != nil {
		return err
	}
	return c.commit(wctx, undo, op, rows, olds)
}

// commit writes rows, which replace the objects in olds. If the cluster
// fails, it undoes the write in the context undo returns and returns a
// *WriteError: a request that timed out may have written objects without
// saying so, so every object of the write is undone, not only those
// acknowledged.
func (c *Collection) commit(ctx context.Context, undo func() (context.Context, context.CancelFunc), op string, rows []row, olds map[string]fetched) error {
	objs := make([]object, len(rows))
	ids := make(map[string]string, len(rows))
	for i, r := range rows {
		objs[i] = c.object(r)
		ids[r.uuid] = r.id
	}
	done, err := c.db.putObjects(ctx, objs)
	if err == nil {
		return nil
	}
	uctx, ucancel := undo()
	defer ucancel()
	var fresh, bad []string
	var restore []object
	var uerr error
	for _, r := range rows {
		o, ok := olds[r.uuid]
		if !ok {
			fresh = append(fresh, r.uuid)
			continue
		}
		old, rerr := c.rowOf(o)
		if rerr != nil {
			bad, uerr = append(bad, r.uuid), rerr
			continue
		}
		restore = append(restore, c.object(old))
	}
	left, err2 := c.db.undoWrite(uctx, c.class, fresh, restore)
	if uerr == nil {
		uerr = err2
	}
	we := &WriteError{Op: op, Acked: len(done), Total: len(objs), Err: err, UndoErr: uerr}
	for _, u := range append(bad, left...) {
		we.NotUndone = append(we.NotUndone, ids[u])
	}
	slices.Sort(we.NotUndone)
	return we
}

// prepare validates items as the local store does and turns them into
// rows, embedding those given only as text.
func (c *Collection) prepare(ctx context.Context, op string, items []cairn.Item) ([]row, error) {
	rows := make([]row, len(items))
	seen := make(map[string]struct{}, len(items))
	var toEmbed []int
	for i, it := range items {
		if it.ID == "" {
			return nil, fmt.Errorf("weaviate: %s: item %d: %w", op, i, vector.ErrEmptyID)
		}
		if !utf8.ValidString(it.ID) || !utf8.ValidString(it.Text) {
			return nil, fmt.Errorf("weaviate: %s %q: %w: the id or the text is not valid UTF-8", op, it.ID, vector.ErrInvalidOptions)
		}
		if _, dup := seen[it.ID]; dup {
			return nil, fmt.Errorf("weaviate: %s %q: %w (repeated in the batch)", op, it.ID, vector.ErrDuplicateID)
		}
		seen[it.ID] = struct{}{}
		if !it.CreatedAt.IsZero() || !it.UpdatedAt.IsZero() || !it.ExpiresAt.IsZero() {
			return nil, fmt.Errorf("weaviate: %s %q: %w: item times (CreatedAt, UpdatedAt, ExpiresAt) are not supported by the cluster store", op, it.ID, vector.ErrInvalidOptions)
		}
		md, err := metavalue.Map(it.Metadata)
		if err != nil {
			return nil, fmt.Errorf("weaviate: %s %q: %w", op, it.ID, err)
		}
		for k, v := range md {
			if n, ok := v.(int64); ok { // the stored form of an integer no float64 holds
				return nil, fmt.Errorf("weaviate: %s %q: metadata %q: %w: Weaviate's numbers are float64s, which do not hold the integer %d exactly", op, it.ID, k, vector.ErrInvalidOptions, n)
			}
		}
		rows[i] = row{id: it.ID, uuid: itemUUID(c.class, it.ID), vec: it.Embedding, text: it.Text, md: md}
		if len(it.Embedding) == 0 && it.Text != "" {
			toEmbed = append(toEmbed, i)
		}
	}
	if len(toEmbed) > 0 {
		texts := make([]string, len(toEmbed))
		for j, i := range toEmbed {
			texts[j] = items[i].Text
		}
		vs, err := c.embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("weaviate: %s %q: %w", op, items[toEmbed[0]].ID, err)
		}
		for j, i := range toEmbed {
			rows[i].vec = vs[j]
		}
	}
	for i := range rows {
		v, err := prepare(rows[i].vec, c.cfg.Dim, c.cfg.Metric)
		if err != nil {
			return nil, fmt.Errorf("weaviate: %s %q: %w", op, rows[i].id, err)
		}
		rows[i].vec = v
	}
	return rows, nil
}

func (c *Collection) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.db.opt.Embedder == nil {
		return nil, cairn.ErrNoEmbedder
	}
	vs, err := c.db.opt.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("embedding: %w: %d vectors for %d texts", cairn.ErrWrongNumberOfVectors, len(vs), len(texts))
	}
	return vs, nil
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return typeText
	case bool:
		return typeBool
	}
	return typeNumber
}

// ensureTypes makes sure the class has a property for every metadata key
// of rows, of the type of its values, adding those it lacks. A key whose
// values differ in type from the property's (or within rows) is an error
// wrapping vector.ErrInvalidOptions: in Weaviate a property has one type.
func (c *Collection) ensureTypes(ctx context.Context, op string, rows []row) error {
	want := map[string]string{}
	for _, r := range rows {
		for k, v := range r.md {
			t := typeName(v)
			if prev, ok := want[k]; ok && prev != t {
				return fmt.Errorf("weaviate: %s %q: %w: metadata %q holds both %s and %s values in one batch", op, r.id, vector.ErrInvalidOptions, k, prev, t)
			}
			want[k] = t
			if _, err := propName(k); err != nil {
				return fmt.Errorf("weaviate: %s %q: %w", op, r.id, err)
			}
		}
	}
	missing := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []string
		for k := range want {
			if _, ok := c.types[k]; !ok {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	if len(missing()) > 0 {
		if err := c.refresh(ctx); err != nil {
			return fmt.Errorf("weaviate: %s: %w", op, err)
		}
		for _, k := range missing() {
			if err := c.db.addProperty(ctx, c.class, k, want[k]); err != nil {
				return fmt.Errorf("weaviate: %s: adding metadata %q: %w", op, k, err)
			}
		}
		if len(missing()) > 0 {
			if err := c.refresh(ctx); err != nil {
				return fmt.Errorf("weaviate: %s: %w", op, err)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, t := range want {
		got, ok := c.types[k]
		if !ok {
			return fmt.Errorf("weaviate: %s: metadata %q: property not created", op, k)
		}
		if got != t {
			return fmt.Errorf("weaviate: %s: %w: metadata %q holds %s values in this collection, not %s (a Weaviate property has one type)", op, vector.ErrInvalidOptions, k, got, t)
		}
	}
	return nil
}

// refresh reads the class's metadata properties again.
func (c *Collection) refresh(ctx context.Context) error {
	cl, err := c.db.getClass(ctx, c.class)
	if err != nil {
		return err
	}
	types := metaTypes(cl)
	c.mu.Lock()
	c.types = types
	c.mu.Unlock()
	return nil
}

// typeOf returns the data type of metadata key k's property, reading the
// schema again (once per call of where) if the key is not known yet.
func (c *Collection) typeOf(ctx context.Context) typeOf {
	refreshed := false
	return func(k string) (string, bool) {
		c.mu.Lock()
		t, ok := c.types[k]
		c.mu.Unlock()
		if !ok && !refreshed {
			refreshed = true
			if c.refresh(ctx) == nil {
				c.mu.Lock()
				t, ok = c.types[k]
				c.mu.Unlock()
			}
		}
		return t, ok
	}
}

// where translates f (nil: no filter) for this collection.
func (c *Collection) where(ctx context.Context, f *cairn.Filter) (cond, error) {
	if f == nil {
		return condTrue, nil
	}
	return translate(f, c.typeOf(ctx))
}

func (c *Collection) object(r row) object {
	props := map[string]any{propID: r.id, propText: r.text}
	md := r.md
	if md == nil {
		md = map[string]any{}
	}
	enc, _ := json.Marshal(md)
	props[propMeta] = string(enc)
	for k, v := range r.md {
		p, _ := propName(k)
		props[p] = v
	}
	return object{Class: c.class, ID: r.uuid, Vector: r.vec, Properties: props}
}

// rowOf turns a fetched object back into a row.
func (c *Collection) rowOf(f fetched) (row, error) {
	it, err := c.itemOf(f)
	if err != nil {
		return row{}, err
	}
	return row{id: it.ID, uuid: f.UUID, vec: it.Embedding, text: it.Text, md: it.Metadata}, nil
}

// itemOf decodes a fetched object of the collection into an item: a
// vector of another dimension than the collection's is damage.
func (c *Collection) itemOf(f fetched) (cairn.Item, error) {
	it, err := itemOf(f)
	if err == nil && f.HasVector && len(f.Vector) != c.cfg.Dim {
		err = fmt.Errorf("%w: object %s: a vector of %d dimensions, the collection's have %d", vector.ErrCorrupt, f.UUID, len(f.Vector), c.cfg.Dim)
	}
	return it, err
}

// itemOf decodes a fetched object into an item.
func itemOf(f fetched) (cairn.Item, error) {
	id, _ := f.Props[propID].(string)
	text, _ := f.Props[propText].(string)
	it := cairn.Item{ID: id, Text: text, Embedding: f.Vector}
	if s, _ := f.Props[propMeta].(string); s != "" && s != "{}" {
		if err := json.Unmarshal([]byte(s), &it.Metadata); err != nil {
			return it, fmt.Errorf("%w: metadata of %q: %v", vector.ErrCorrupt, id, err)
		}
		// What object writes holds scalars only; anything else (a list,
		// an object, a null) was written by another program, and would
		// fail a write of the item back.
		for k, v := range it.Metadata {
			switch v.(type) {
			case string, float64, bool:
			default:
				return it, fmt.Errorf("%w: metadata of %q: %q is a %s, not a string, number or bool", vector.ErrCorrupt, id, k, jsonKind(v))
			}
		}
	}
	if id == "" {
		return it, fmt.Errorf("%w: object %s has no cairn id", vector.ErrCorrupt, f.UUID)
	}
	return it, nil
}

// jsonKind names the JSON kind of v, a value decoded into an any.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "list"
	}
	return "object"
}

// Get returns the items with the given ids, in order, read at the read
// consistency, or an error wrapping vector.ErrNotFound naming the first id
// not in the collection.
func (c *Collection) Get(ctx context.Context, ids ...string) ([]cairn.Item, error) {
	if err := c.db.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	uuids := make([]string, len(ids))
	for i, id := range ids {
		uuids[i] = itemUUID(c.class, id)
	}
	found, err := c.db.getByUUID(ctx, c.class, uuids, readProps, true)
	if err == nil {
		err = c.db.confirmMissing(ctx, c.class, uuids, found, readProps, true)
	}
	if err != nil {
		return nil, fmt.Errorf("weaviate: get: %w", err)
	}
	out := make([]cairn.Item, len(ids))
	for i, id := range ids {
		f, ok := found[uuids[i]]
		if !ok {
			return nil, fmt.Errorf("weaviate: get %q: %w", id, vector.ErrNotFound)
		}
		if out[i], err = c.itemOf(f); err != nil {
			return nil, fmt.Errorf("weaviate: get %q: %w", id, err)
		}
	}
	return out, nil
}

// Delete removes the items with the given ids, all or nothing: it returns
// an error wrapping vector.ErrNotFound if any id is not in the collection.
// If the cluster fails midway, the items already deleted are written back.
func (c *Collection) Delete(ctx context.Context, ids ...string) error {
	if err := c.db.usable(); err != nil {
		return err
	}
	var keys, uuids []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, id)
			uuids = append(uuids, itemUUID(c.class, id))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	wctx, wcancel, undo := split(ctx)
	defer wcancel()
	unlock, err := c.db.lockIDs(wctx, c.class, keys)
	if err != nil {
		return fmt.Errorf("weaviate: delete: %w", err)
	}
	defer unlock()
	if err := c.same(wctx); err != nil {
		return fmt.Errorf("weaviate: delete: %w", err)
	}
	olds, err := c.db.getByUUID(wctx, c.class, uuids, readProps, true)
	if err == nil {
		err = c.db.confirmMissing(wctx, c.class, uuids, olds, readProps, true)
	}
	if err != nil {
		return fmt.Errorf("weaviate: delete: %w", err)
	}
	for i, u := range uuids {
		if _, ok := olds[u]; !ok {
			return fmt.Errorf("weaviate: delete %q: %w", keys[i], vector.ErrNotFound)
		}
	}
	acked := 0
	for start := 0; start < len(uuids) && err == nil; start += batchChunk {
		chunk := uuids[start:min(start+batchChunk, len(uuids))]
		var n int
		n, err = c.db.deleteWhere(wctx, c.class, idsWhere(chunk))
		acked += n
	}
	if err == nil {
		// A delete by filter skips a shard whose replicas died since
		// the read above.
		err = c.db.reach(wctx, c.class)
	}
	if err == nil {
		return nil
	}
	// Put back what was deleted: the items read before that are gone now,
	// or all of them if that cannot be read (writing back one that was
	// not deleted changes nothing but its times).
	uctx, ucancel := undo()
	defer ucancel()
	gone, gerr := c.db.getByUUID(uctx, c.class, uuids, nil, false)
	we := &WriteError{Op: "delete", Acked: acked, Total: len(uuids), Err: err}
	var restore []object
	for i, u := range uuids {
		if _, ok := gone[u]; ok && gerr == nil {
			continue
		}
		r, rerr := c.rowOf(olds[u])
		if rerr != nil {
			we.NotUndone, we.UndoErr = append(we.NotUndone, keys[i]), rerr
			continue
		}
		restore = append(restore, c.object(r))
	}
	left, uerr := c.db.undoWrite(uctx, c.class, nil, restore)
	for _, u := range left {
		we.NotUndone = append(we.NotUndone, keys[slices.Index(uuids, u)])
	}
	if we.UndoErr == nil {
		we.UndoErr = uerr
	}
	slices.Sort(we.NotUndone)
	return we
}

// matchAll is a where-filter that every item matches.
var matchAll = &where{Operator: "Like", Path: []string{propID}, Text: new("*")}

// DeleteWhere removes every item that f matches and returns how many it
// removed. A nil or malformed filter is an error wrapping
// vector.ErrInvalidOptions; And() matches everything. Unlike Delete it is
// not undone if the cluster fails midway: the count says how many went.
func (c *Collection) DeleteWhere(ctx context.Context, f *cairn.Filter) (int, error) {
	if f == nil {
		return 0, fmt.Errorf("weaviate: delete where: %w: nil filter", vector.ErrInvalidOptions)
	}
	if err := c.db.usable(); err != nil {
		return 0, err
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	w, err := c.where(ctx, f)
	if err != nil {
		return 0, fmt.Errorf("weaviate: delete where: %w", err)
	}
	if w.w == nil && !w.val {
		return 0, nil
	}
	ww := w.w
	if ww == nil {
		ww = matchAll
	}
	if err := c.same(ctx); err != nil {
		return 0, fmt.Errorf("weaviate: delete where: %w", err)
	}
	n, err := c.db.deleteWhere(ctx, c.class, ww)
	if err == nil {
		// A delete by filter skips, as a search does, a shard without a
		// live replica.
		err = c.db.reach(ctx, c.class)
	}
	if err != nil {
		return n, fmt.Errorf("weaviate: delete where (%d deleted): %w", n, err)
	}
	return n, nil
}

// findPage is the number of items a Find reads per request.
const findPage = 1000

// Find returns the items that f matches, or every item if f is nil, in the
// order of their creation time (milliseconds; items created in the same
// millisecond in id order); at most limit of them if limit > 0. It reads
// in pages, each the items after the last one read in that order (not an
// offset, which writes between two pages would shift): an item that no
// write touches while Find runs is returned once, whatever else is
// written meanwhile.
func (c *Collection) Find(ctx context.Context, f *cairn.Filter, limit int) ([]cairn.Item, error) {
	if err := c.db.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	w, err := c.where(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("weaviate: find: %w", err)
	}
	if w.w == nil && !w.val {
		return []cairn.Item{}, nil
	}
	var (
		out  []cairn.Item
		seen = map[string]bool{} // an item whose creation time an upsert moved may come again
		from *where              // after the last item read
	)
	for limit <= 0 || len(out) < limit {
		page := findPage
		if limit > 0 {
			page = min(page, limit-len(out))
		}
		ww := w
		if from != nil {
			ww = and([]cond{w, {w: from}})
		}
		got, err := c.db.read(ctx, c.class, func(level Consistency) ([]fetched, error) {
			args := fmt.Sprintf("limit: %d, sort: [{path: [\"_creationTimeUnix\"], order: asc}, {path: [\"%s\"], order: asc}]", page, propID)
			if level != "" {
				args += ", consistencyLevel: " + string(level)
			}
			if ww.w != nil {
				args += ", where: " + ww.w.gql()
			}
			return c.db.runGet(ctx, c.class, args, getFields(readProps, true, false), readProps)
		})
		if err != nil {
			return nil, fmt.Errorf("weaviate: find: %w", err)
		}
		for _, r := range got {
			it, err := c.itemOf(r)
			if err != nil {
				return nil, fmt.Errorf("weaviate: find: %w", err)
			}
			if !seen[it.ID] {
				seen[it.ID] = true
				out = append(out, it)
			}
		}
		if len(got) < page {
			break
		}
		last := got[len(got)-1]
		id, _ := last.Props[propID].(string)
		from = after(last.Created, id)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// after is the where-filter of the items after the one created at ms with
// id, in Find's order: created later, or in the same millisecond with a
// greater id.
func after(ms int64, id string) *where {
	t := strconv.FormatInt(ms, 10)
	created := []string{"_creationTimeUnix"}
	return &where{Operator: "Or", Operands: []*where{
		{Operator: "GreaterThan", Path: created, Text: &t},
		{Operator: "And", Operands: []*where{
			{Operator: "Equal", Path: created, Text: &t},
			{Operator: "GreaterThan", Path: []string{propID}, Text: &id},
		}},
	}}
}

// Query returns up to k items nearest to embedding, closest first (ties in
// creation order), at most Options.MaxResults of them (as far as the
// cluster lets a search reach), with the errors of cairn's
// Collection.Query for the same bad input. o.Ef is checked but not used: Weaviate sets ef per collection
// (CollectionConfig.HNSW.EfSearch, or its own dynamic ef). Distances and
// similarities are cairn's, computed from Weaviate's distance. Only vector
// mode is served: o.Mode other than cairn.VectorMode, o.Keywords, Fusion,
// MMR, Rerank and Recency are errors wrapping vector.ErrInvalidOptions;
// WithEmbeddings is honoured.
func (c *Collection) Query(ctx context.Context, embedding []float32, k int, o *cairn.QueryOptions) ([]cairn.Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("weaviate: query: %w: %d", vector.ErrInvalidK, k)
	}
	if err := c.db.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := c.db.bound(ctx)
	defer cancel()
	var opts cairn.QueryOptions
	if o != nil {
		opts = *o
	}
	w, err := c.where(ctx, opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("weaviate: query: %w", err)
	}
	if opts.Ef < 0 || opts.Ef > hnsw.MaxEf {
		return nil, fmt.Errorf("weaviate: query: %w: Ef = %d, want 0..%d", vector.ErrInvalidOptions, opts.Ef, hnsw.MaxEf)
	}
	if opts.MinSimilarity != nil && math.IsNaN(*opts.MinSimilarity) {
		return nil, fmt.Errorf("weaviate: query: %w: MinSimilarity is NaN", vector.ErrInvalidOptions)
	}
	if opts.Mode != cairn.VectorMode || opts.Keywords != "" || opts.Fusion != nil || opts.MMR != nil || opts.Rerank != nil || opts.Recency != nil {
		return nil, fmt.Errorf("weaviate: query: %w: keyword and hybrid modes, Keywords, Fusion, MMR, Rerank and Recency are not served by the cluster backend", vector.ErrInvalidOptions)
	}
	q, err := prepare(embedding, c.cfg.Dim, c.cfg.Metric)
	if err != nil {
		return nil, fmt.Errorf("weaviate: query: %w", err)
	}
	if w.w == nil && !w.val {
		return []cairn.Result{}, nil
	}
	rows, err := c.db.nearVector(ctx, c.class, q, min(k, c.db.opt.MaxResults), w.w, readProps, opts.WithEmbeddings)
	if err != nil {
		return nil, fmt.Errorf("weaviate: query: %w", err)
	}
	slices.SortStableFunc(rows, func(a, b fetched) int {
		switch {
		case a.Distance < b.Distance:
			return -1
		case a.Distance > b.Distance:
			return 1
		case a.Created < b.Created:
			return -1
		case a.Created > b.Created:
			return 1
		}
		return 0
	})
	out := make([]cairn.Result, 0, len(rows))
	for _, r := range rows {
		sim := similarity(c.cfg.Metric, r.Distance)
		if opts.MinSimilarity != nil && sim < *opts.MinSimilarity {
			break
		}
		it, err := c.itemOf(r)
		if err != nil {
			return nil, fmt.Errorf("weaviate: query: %w", err)
		}
		res := cairn.Result{ID: it.ID, Text: it.Text, Metadata: it.Metadata, Distance: float64(r.Distance),
			Similarity: sim, Score: sim, VectorRank: len(out) + 1}
		if opts.WithEmbeddings {
			res.Embedding = r.Vector
		}
		out = append(out, res)
	}
	return out, nil
}

// similarity converts a distance under m into cairn's similarity.
func similarity(m vector.Metric, d float32) float64 {
	switch m {
	case vector.Cosine:
		return min(max(1-float64(d), -1), 1)
	case vector.Dot:
		return -float64(d)
	}
	return 1 / (1 + math.Sqrt(max(float64(d), 0)))
}

// QueryText is [Collection.Query] for a text, embedded with the DB's
// Embedder; without one it returns cairn.ErrNoEmbedder.
func (c *Collection) QueryText(ctx context.Context, text string, k int, o *cairn.QueryOptions) ([]cairn.Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("weaviate: query: %w: %d", vector.ErrInvalidK, k)
	}
	if err := c.db.usable(); err != nil {
		return nil, err
	}
	vs, err := c.embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("weaviate: query: %w", err)
	}
	return c.Query(ctx, vs[0], k, o)
}

var _ cairn.MemoryCollection = (*Collection)(nil)
var _ cairn.MemoryStore = (*DB)(nil)
