package cairn

// This file holds dedup on write: an upsert that merges each new item
// into a stored near-duplicate instead of adding it beside.

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/cairndb/cairn/vector"
)

// Dedup says when [Collection.UpsertDedup] merges a new item into a stored
// one.
//
// UpsertDedup only reads it, so one value may serve concurrent calls.
type Dedup struct {
	// MinSimilarity is the least [Result.Similarity] at which an item
	// counts as a near-duplicate (for Cosine, 0.95 merges rephrasings of
	// one fact with most embedding models; measure on your own data).
	// Required: above 0 (0 would merge nearly anything) and at most 1,
	// the most any similarity is.
	MinSimilarity float64
	// Scope lists metadata keys on which a near-duplicate must agree with
	// the new item (say "user"): items of different scopes are never
	// merged, and an item that lacks one of the keys is written as given.
	Scope []string
}

// Merge reports an item that [Collection.UpsertDedup] merged into another.
//
// It is a plain value, owned by the caller.
type Merge struct {
	ID         string  // the id the item was given
	Into       string  // the id of the item it updated
	Similarity float64 // their similarity, as Result.Similarity
}

// UpsertDedup stores items as [Collection.Upsert] does, except that an item
// whose id is not in the collection and that is a near-duplicate of an
// item that is (or of an earlier item of the same call), as d says,
// updates that item instead: its embedding, text, metadata and UpdatedAt
// become the new item's, its id and CreatedAt stay. It returns the merges
// it made, in the order of items. Each item merges into the most similar
// near-duplicate the index finds (with HNSW, as its recall allows).
//
// The write is one Upsert, all or nothing, as if items were written one
// after another: where an item merges into an item that another of the
// call names, the later of the two is written. Calls to UpsertDedup on a
// collection run one at a time, so concurrent calls end as if made in
// some order, and never both add near-duplicates of each other; a write
// by another method in flight meanwhile is looked at only once it is
// published. d's errors wrap [vector.ErrInvalidOptions]; the others are
// Upsert's.
func (c *Collection) UpsertDedup(ctx context.Context, d *Dedup, items ...Item) ([]Merge, error) {
	if d == nil || !(d.MinSimilarity > 0 && d.MinSimilarity <= 1) {
		return nil, fmt.Errorf("cairn: upsert dedup: %w: MinSimilarity must be above 0 and at most 1", vector.ErrInvalidOptions)
	}
	if err := c.writeErr(); err != nil {
		return nil, err
	}
	items = slices.Clone(items)
	if err := c.embedMissing(ctx, "upsert dedup", items); err != nil {
		return nil, err
	}
	c.dedupMu.Lock()
	defer c.dedupMu.Unlock()
	items, merged, err := c.mergeTargets(ctx, d, items)
	if err != nil {
		return nil, err
	}
	if err := c.Upsert(ctx, items...); err != nil {
		return nil, err
	}
	return merged, nil
}

// embedMissing sets the embedding of the items given only as text, in
// one call to the embedder.
func (c *Collection) embedMissing(ctx context.Context, op string, items []Item) error {
	var idx []int
	var texts []string
	for i, it := range items {
		if len(it.Embedding) == 0 && it.Text != "" {
			idx, texts = append(idx, i), append(texts, it.Text)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	vs, err := c.embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("cairn: %s %q: %w", op, items[idx[0]].ID, err)
	}
	for j, i := range idx {
		items[i].Embedding = vs[j]
	}
	return nil
}

// mergeTargets returns items with their ids set to the items they merge
// into, and the merges. It changes items. Where a merge leaves two items
// of the call with one id, the later takes the place of the earlier in
// the write, as if the call's items were written one after another; an
// id the caller gives twice is refused, as Upsert refuses it. dedupMu is
// held.
func (c *Collection) mergeTargets(ctx context.Context, d *Dedup, items []Item) ([]Item, []Merge, error) {
	var merged []Merge
	type placed struct {
		id    string
		q     vector.Vector // its embedding as the index prepares it
		scope []value       // nil if it lacks a key of the scope
	}
	given := make(map[string]struct{}, len(items))
	for _, it := range items {
		if _, dup := given[it.ID]; dup {
			return nil, nil, fmt.Errorf("cairn: upsert dedup %q: %w (repeated in the batch)", it.ID, vector.ErrDuplicateID)
		}
		given[it.ID] = struct{}{}
	}
	var batch []placed // the items of the call so far, by their final ids
	// replaced holds the stored ids that items of the call so far replace.
	replaced := make(map[string]struct{})
	drop := make([]bool, len(items))
	// giveWay drops the earlier item of the call written as id, if any
	// (a merge gave one of the two that id).
	giveWay := func(i int, id string) {
		for j := range i {
			if !drop[j] && items[j].ID == id {
				drop[j] = true
			}
		}
	}
	// place records an item of the call as id, in place of any earlier
	// item written as id: only the latest is what a later item meets.
	place := func(id string, q vector.Vector, scope []value) {
		batch = slices.DeleteFunc(batch, func(p placed) bool { return p.id == id })
		batch = append(batch, placed{id, q, scope})
	}
	for i := range items {
		it := &items[i]
		if it.ID == "" {
			return nil, nil, fmt.Errorf("cairn: upsert dedup: item %d: %w", i, vector.ErrEmptyID)
		}
		q, err := vector.Prepare(it.Embedding, c.cfg.Dim, c.cfg.Metric)
		if err != nil {
			return nil, nil, fmt.Errorf("cairn: upsert dedup %q: %w", it.ID, err)
		}
		scope, ok, err := scopeOf(it.Metadata, d.Scope)
		if err != nil {
			return nil, nil, fmt.Errorf("cairn: upsert dedup %q: %w", it.ID, err)
		}
		if held := c.holds(it.ID); !ok || held {
			if held {
				replaced[it.ID] = struct{}{}
			}
			giveWay(i, it.ID)
			place(it.ID, q, scope)
			continue
		}
		best, bestSim := "", math.Inf(-1)
		f := scopeFilter(d.Scope, it.Metadata)
		// A stored item that an earlier item of the call replaces is
		// that item now (in batch), not what the store holds: skip it.
		rs, err := c.Query(ctx, it.Embedding, 1+len(replaced), &QueryOptions{Filter: f, MinSimilarity: &d.MinSimilarity})
		if err != nil {
			return nil, nil, fmt.Errorf("cairn: upsert dedup %q: %w", it.ID, err)
		}
		for _, r := range rs {
			if _, ok := replaced[r.ID]; !ok {
				best, bestSim = r.ID, r.Similarity
				break
			}
		}
		for _, p := range batch {
			if p.id == it.ID || !slices.Equal(p.scope, scope) || p.scope == nil {
				continue
			}
			if sim := similarity(c.cfg.Metric, c.distance(q, p.q)); sim >= d.MinSimilarity && sim > bestSim {
				best, bestSim = p.id, sim
			}
		}
		if best == "" {
			giveWay(i, it.ID)
			place(it.ID, q, scope)
			continue
		}
		if c.holds(best) {
			replaced[best] = struct{}{}
		}
		merged = append(merged, Merge{ID: it.ID, Into: best, Similarity: bestSim})
		it.ID = best
		giveWay(i, best)
		place(best, q, scope)
	}
	kept := items[:0]
	for i := range items {
		if !drop[i] {
			kept = append(kept, items[i])
		}
	}
	return kept, merged, nil
}

// holds reports whether id is an item a reader sees now.
func (c *Collection) holds(id string) bool {
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	r := c.cat.lookup(id)
	return r != nil && c.view(now).Allow(r.id)
}

// scopeOf returns the values of md under keys, in their stored form
// (equal numbers are equal values), and false if md lacks one.
func scopeOf(md map[string]any, keys []string) ([]value, bool, error) {
	vals := make([]value, len(keys))
	for i, k := range keys {
		v, ok := md[k]
		if !ok {
			return nil, false, nil
		}
		var err error
		if vals[i], err = toValue(v); err != nil {
			return nil, false, err
		}
	}
	return vals, true, nil
}

// scopeFilter returns the filter of the items whose metadata agrees with
// md on keys; nil for no keys.
func scopeFilter(keys []string, md map[string]any) *Filter {
	if len(keys) == 0 {
		return nil
	}
	fs := make([]*Filter, len(keys))
	for i, k := range keys {
		fs[i] = Eq(k, md[k])
	}
	return And(fs...)
}
