package cairn

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// ItemsOptions refine [Collection.Items]. A nil *ItemsOptions means the
// zero value: every item, without embeddings. It is a plain value.
type ItemsOptions struct {
	// Filter, if non-nil, restricts the items to those whose metadata it
	// matches.
	Filter *Filter
	// IDs, if non-nil, restricts the items to those of these ids; an id
	// the collection does not hold is left out.
	IDs []string
	// Embeddings, if set, fills each Item's Embedding with a copy of its
	// vector; otherwise it is nil and no vector is copied. A collection
	// kept in a file gives the vector as it was written, read back from
	// the file, so that writing it again stores the same bytes; one kept
	// in memory gives its stored form (unit length under Cosine), as
	// [Collection.Get] does.
	Embeddings bool
}

// itemsPage is the number of items Items reads under one hold of the
// collection's lock: writes wait at most for that many copies.
const itemsPage = 256

// Items returns an iterator over the collection's items that match
// o.Filter, in the order they were last written (the order of
// [Collection.Find]), with a nil error for each, or a single non-nil error
// that ends the iteration: a malformed filter (wrapping
// [vector.ErrInvalidOptions]), a closed or deleted collection, or ctx's
// error.
//
// It reads the items a page of a few hundred at a time, so memory stays
// small however large the collection (beyond 8 bytes per matching item
// for the list of ids taken when the iteration starts), and writes go on
// between pages. It is not a snapshot: it gives the items published when
// it starts (never an expired one), each as its page is read; an item
// deleted, replaced or expired before its page is read is left out (a replaced item's new version,
// like an added item, was written after the start). Items is safe to
// call concurrently with any other method.
func (c *Collection) Items(ctx context.Context, o *ItemsOptions) iter.Seq2[Item, error] {
	var opts ItemsOptions
	if o != nil {
		opts = *o
	}
	return func(yield func(Item, error) bool) {
		var m matcher
		if opts.Filter != nil {
			var err error
			if m, err = opts.Filter.compile(); err != nil {
				yield(Item{}, fmt.Errorf("cairn: items: %w", err))
				return
			}
		}
		ids, err := c.itemIDs(opts.Filter, m, opts.IDs)
		if err != nil {
			yield(Item{}, err)
			return
		}
		if f := c.be.file(); f != nil && opts.Embeddings {
			if opts.IDs != nil {
				c.itemsAsWrittenByID(ctx, f, ids, yield)
			} else {
				c.itemsAsWritten(ctx, f, ids, yield)
			}
			return
		}
		for len(ids) > 0 {
			if err := ctx.Err(); err != nil {
				yield(Item{}, fmt.Errorf("cairn: items: %w", err))
				return
			}
			n := min(itemsPage, len(ids))
			page, err := c.itemsOf(ids[:n], opts.Embeddings)
			if err != nil {
				yield(Item{}, err)
				return
			}
			ids = ids[n:]
			for _, it := range page {
				if !yield(it, nil) {
					return
				}
			}
		}
	}
}

// itemIDs returns the sorted ids of the items m (f compiled) matches, or
// of every item if m is nil; only of those of keys if keys is not nil.
func (c *Collection) itemIDs(f *Filter, m matcher, keys []string) ([]vector.ID, error) {
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	var ids []vector.ID
	if keys == nil {
		ids = c.cat.visible(f, m, c.view(now))
	} else {
		view := c.view(now)
		for _, key := range keys {
			if r := c.cat.lookup(key); r != nil && view.Allow(r.id) && (m == nil || m(r)) {
				ids = append(ids, r.id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// itemsOf returns the items of ids still in the collection.
func (c *Collection) itemsOf(ids []vector.ID, embeddings bool) ([]Item, error) {
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return nil, c.err
	}
	view := c.view(now)
	out := make([]Item, 0, len(ids))
	for _, id := range ids {
		if !view.Allow(id) {
			continue // replaced, deleted or expired since the iteration started
		}
		r := c.cat.recs.get(id)
		it := r.item(nil)
		if embeddings {
			v, err := c.st.Get(id)
			if err != nil {
				return nil, fmt.Errorf("cairn: items: %q: %w", r.key, err)
			}
			it.Embedding = slices.Clone(v)
		}
		out = append(out, it)
	}
	return out, nil
}

// errStopped ends a walk of the file when the consumer of Items stops.
var errStopped = errors.New("cairn: items: stopped")

// itemsAsWritten yields the items of ids (sorted) with their vectors as
// written, read from the file in id order alongside the ids. A version's
// row never changes (a write stores a new version under a new id), so the
// row of a version still published is its vector as written.
func (c *Collection) itemsAsWritten(ctx context.Context, f *sqlitestore.Collection, ids []vector.ID, yield func(Item, error) bool) {
	err := f.ForEachItem(ctx, func(row sqlitestore.Item) error {
		for len(ids) > 0 && ids[0] < row.ID {
			ids = ids[1:] // gone from the file: replaced or deleted since the start
		}
		if len(ids) == 0 {
			return errStopped
		}
		if ids[0] != row.ID {
			return nil // not matched, or written since the start
		}
		ids = ids[1:]
		it, ok, err := c.itemWith(row)
		if err != nil {
			return err
		}
		if ok && !yield(it, nil) {
			return errStopped
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopped) {
		yield(Item{}, fmt.Errorf("cairn: items: %w", c.orClosed(err)))
	}
}

// itemsAsWrittenByID is itemsAsWritten for a few ids: it reads their
// rows one by one rather than walk the file.
func (c *Collection) itemsAsWrittenByID(ctx context.Context, f *sqlitestore.Collection, ids []vector.ID, yield func(Item, error) bool) {
	for _, id := range ids {
		row, err := f.GetItem(ctx, id)
		if errors.Is(err, vector.ErrNotFound) {
			continue // replaced or deleted since the start
		}
		var it Item
		ok := false
		if err == nil {
			it, ok, err = c.itemWith(row)
		}
		if err != nil {
			yield(Item{}, fmt.Errorf("cairn: items: %w", c.orClosed(err)))
			return
		}
		if ok && !yield(it, nil) {
			return
		}
	}
}

// itemWith returns the item whose version row holds, with row's vector,
// or false if that version is no longer published.
func (c *Collection) itemWith(row sqlitestore.Item) (Item, bool, error) {
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		return Item{}, false, c.err
	}
	if !c.view(now).Allow(row.ID) {
		return Item{}, false, nil
	}
	return c.cat.recs.get(row.ID).item(row.Vector), true, nil
}
