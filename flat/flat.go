package flat

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// Index is an exact k-nearest-neighbour index over a [vector.Store]. Its
// methods are safe to call concurrently as far as the store's are; see the
// package documentation.
type Index struct {
	s vector.Store
	m vector.Metric
}

// New returns an exact index over s. Every vector in s, present or future,
// is searchable: there is nothing to build.
func New(s vector.Store) *Index {
	return &Index{s: s, m: s.Metric()}
}

// Store returns the store the index searches.
func (x *Index) Store() vector.Store { return x.s }

// Len returns the number of vectors in the store.
func (x *Index) Len() int { return x.s.Len() }

// Add stores v under id. See [vector.Index.Add].
func (x *Index) Add(ctx context.Context, id vector.ID, v vector.Vector) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := x.s.Put(ctx, id, v); err != nil {
		return fmt.Errorf("flat: add: %w", err)
	}
	return nil
}

// AddBatch stores vs under ids, all or nothing if the store supports batch
// writes ([vector.BatchPutter]); otherwise the vectors are validated first and
// then put one by one, and only a failing store can leave a batch half done.
func (x *Index) AddBatch(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if bp, ok := x.s.(vector.BatchPutter); ok {
		if err := bp.PutBatch(ctx, ids, vs); err != nil {
			return fmt.Errorf("flat: add batch: %w", err)
		}
		return nil
	}
	if len(ids) != len(vs) {
		return fmt.Errorf("flat: add batch: %w: %d ids for %d vectors", vector.ErrInvalidOptions, len(ids), len(vs))
	}
	seen := make(map[vector.ID]bool, len(ids))
	for i, v := range vs {
		if err := vector.Check(v, x.s.Dim(), x.m); err != nil {
			return fmt.Errorf("flat: add batch: item %d: %w", i, err)
		}
		if _, err := x.s.Get(ids[i]); err == nil || seen[ids[i]] {
			return fmt.Errorf("flat: add batch: item %d (id %d): %w", i, ids[i], vector.ErrDuplicateID)
		}
		seen[ids[i]] = true
	}
	for i, v := range vs {
		if err := x.s.Put(ctx, ids[i], v); err != nil {
			return fmt.Errorf("flat: add batch: item %d: %w", i, err)
		}
	}
	return nil
}

// Delete removes id from the store. See [vector.Index.Delete].
func (x *Index) Delete(ctx context.Context, id vector.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := x.s.Delete(ctx, id); err != nil {
		return fmt.Errorf("flat: delete: %w", err)
	}
	return nil
}

// smallSet is the allow-list size at or below which a search scores the
// listed ids one by one instead of scanning the arena. A lookup and a
// scattered read cost about as much as streaming 64 vectors, so below
// Len/64 the list is the shorter road.
func smallSet(n int) int { return max(n/64, 256) }

// ScoresSetExactly reports whether a search with an allow-list
// ([*vector.IDSet]) of s ids scores those ids one by one rather than
// scanning the whole store; k and ef do not matter to flat and are there so
// that callers can ask any index the same question. Callers that build
// allow-lists use it to choose their representation: a set only where the
// index will iterate it, something cheaper to build elsewhere.
func (x *Index) ScoresSetExactly(s, k, ef int) bool { return s <= smallSet(x.s.Len()) }

// Search returns the k vectors of the store nearest to q, closest first,
// ties broken by ascending id. See [vector.Index.Search].
func (x *Index) Search(ctx context.Context, q vector.Vector, k int, opts *vector.SearchOptions) ([]vector.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("flat: search: %w: %d", vector.ErrInvalidK, k)
	}
	pq, err := vector.Prepare(q, x.s.Dim(), x.m)
	if err != nil {
		return nil, fmt.Errorf("flat: search: %w", err)
	}
	var filter vector.Filter
	if opts != nil {
		filter = opts.Filter
	}
	if set, ok := filter.(*vector.IDSet); ok && x.ScoresSetExactly(set.Len(), k, 0) {
		return x.searchSet(ctx, pq, k, set)
	}
	top := vector.NewTopK(k)
	if bv, ok := x.s.(vector.BlockViewer); ok {
		err = bv.ViewBlocks(func(blocks []vector.Block) error {
			return vector.ScanBlocks(ctx, x.m, pq, blocks, filter, top)
		})
	} else {
		err = x.scanEach(ctx, pq, filter, top)
	}
	if err != nil {
		return nil, fmt.Errorf("flat: search: %w", err)
	}
	return top.Results(), nil
}

// searchSet scores the ids of a small allow-list directly.
func (x *Index) searchSet(ctx context.Context, q vector.Vector, k int, set *vector.IDSet) ([]vector.Result, error) {
	dist := x.m.DistanceFunc()
	top := vector.NewTopK(k)
	n := 0
	var err error
	set.All(func(id vector.ID) bool {
		if n++; n%4096 == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		v, gerr := x.s.Get(id)
		if errors.Is(gerr, vector.ErrNotFound) {
			return true // allowed but not stored
		}
		if err = gerr; err != nil {
			return false // the store's own error: closed, say
		}
		top.Push(id, dist(q, v))
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("flat: search: %w", err)
	}
	return top.Results(), nil
}

func (x *Index) scanEach(ctx context.Context, q vector.Vector, filter vector.Filter, top *vector.TopK) error {
	dist := x.m.DistanceFunc()
	n := 0
	return x.s.ForEach(func(id vector.ID, v vector.Vector) error {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if filter != nil && !filter.Allow(id) {
			return nil
		}
		top.Push(id, dist(q, v))
		return nil
	})
}
