// Package baseline wraps other Go vector-search libraries as
// [vector.Index]es, so that vecbench measures them in the same run, on the
// same data and through the same code as cairn's own indexes.
//
// [CoderHNSW] is github.com/coder/hnsw, the HNSW package the design names
// as the baseline to beat.
package baseline

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"

	coder "github.com/coder/hnsw"

	"github.com/cairndb/cairn/vector"
)

// The defaults of coder/hnsw's NewGraph, which [CoderOptions] fall back to.
const (
	CoderDefaultM        = 16
	CoderDefaultMl       = 0.25
	CoderDefaultEfSearch = 20
	CoderDefaultSeed     = 1
)

// CoderOptions configure a [CoderHNSW]. A zero field takes coder/hnsw's
// own default, so the zero value measures the library as its users get it.
// It is a plain value, copied by NewCoderHNSW.
type CoderOptions struct {
	// M is the most neighbours a node keeps on every layer. Default 16.
	M int
	// Ml is the level generation factor: each layer holds about Ml times
	// the nodes of the one below. Default 0.25.
	Ml float64
	// EfSearch is the beam width of searches and, in coder/hnsw, of
	// inserts too. Default 20.
	EfSearch int
	// Seed seeds the level generator (coder/hnsw seeds from the clock by
	// default; a fixed seed makes runs comparable). Default 1.
	Seed int64
	// Overfetch asks coder/hnsw for max(k, EfSearch) results and keeps the
	// best k. In v0.6.1 a layer search keeps only k results and stops as
	// soon as an expansion fails to beat the best one, so EfSearch alone
	// barely moves recall (fixed upstream in coder/hnsw pull request 22);
	// asking for more results is the workaround open to its users.
	Overfetch bool
}

// CoderHNSW is github.com/coder/hnsw as a [vector.Index] over a
// [vector.Store]. Vectors are validated and stored by the store; the graph
// holds the store's slices, so they are not copied twice. coder/hnsw is not
// safe for concurrent use, so a lock serialises writers (and SetEfSearch)
// against searches.
//
// CoderHNSW is safe for concurrent use: searches run in parallel with each
// other; Add, Delete and SetEfSearch run alone.
type CoderHNSW struct {
	s      vector.Store
	dim    int
	metric vector.Metric
	dist   func(a, b vector.Vector) float32

	overfetch bool

	mu sync.RWMutex
	g  *coder.Graph[vector.ID]
}

// NewCoderHNSW returns an empty coder/hnsw graph over s, which must be
// empty: the graph only knows vectors added through it. It returns an error
// wrapping [vector.ErrInvalidOptions] for negative options or a non-empty
// store.
func NewCoderHNSW(s vector.Store, o *CoderOptions) (*CoderHNSW, error) {
	var opt CoderOptions
	if o != nil {
		opt = *o
	}
	if opt.M < 0 || opt.Ml < 0 || opt.Ml >= 1 || opt.EfSearch < 0 {
		return nil, fmt.Errorf("baseline: coder/hnsw: %w: %+v", vector.ErrInvalidOptions, opt)
	}
	if s.Len() != 0 {
		return nil, fmt.Errorf("baseline: coder/hnsw: %w: store already holds %d vectors", vector.ErrInvalidOptions, s.Len())
	}
	g := coder.NewGraph[vector.ID]()
	if opt.M != 0 {
		g.M = opt.M
	}
	if opt.Ml != 0 {
		g.Ml = opt.Ml
	}
	if opt.EfSearch != 0 {
		g.EfSearch = opt.EfSearch
	}
	if opt.Seed == 0 {
		opt.Seed = CoderDefaultSeed
	}
	g.Rng = rand.New(rand.NewSource(opt.Seed))
	m := s.Metric()
	switch m {
	case vector.Cosine:
		g.Distance = coder.CosineDistance
	case vector.L2:
		g.Distance = coder.EuclideanDistance
	case vector.Dot:
		g.Distance = func(a, b []float32) float32 { return -vector.InnerProduct(a, b) }
	}
	return &CoderHNSW{s: s, dim: s.Dim(), metric: m, dist: m.DistanceFunc(), g: g, overfetch: opt.Overfetch}, nil
}

// Params returns the graph's M, Ml and EfSearch.
func (x *CoderHNSW) Params() (m int, ml float64, efSearch int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.g.M, x.g.Ml, x.g.EfSearch
}

// SetEfSearch sets the beam width of later searches (and, as coder/hnsw
// uses one width for both, of later inserts). It returns an error wrapping
// [vector.ErrInvalidOptions] if ef is not positive.
func (x *CoderHNSW) SetEfSearch(ef int) error {
	if ef <= 0 {
		return fmt.Errorf("baseline: coder/hnsw: %w: ef = %d", vector.ErrInvalidOptions, ef)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.g.EfSearch = ef
	return nil
}

// SetOverfetch turns [CoderOptions.Overfetch] on or off for later
// searches.
func (x *CoderHNSW) SetOverfetch(on bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.overfetch = on
}

// Len returns the number of indexed vectors.
func (x *CoderHNSW) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.g.Len()
}

// Add stores v under id and inserts it into the graph; see [vector.Index].
func (x *CoderHNSW) Add(ctx context.Context, id vector.ID, v vector.Vector) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.s.Put(ctx, id, v); err != nil {
		return fmt.Errorf("baseline: coder/hnsw: add: %w", err)
	}
	stored, err := x.s.Get(id)
	if err != nil {
		return fmt.Errorf("baseline: coder/hnsw: add: %w", err)
	}
	x.g.Add(coder.MakeNode(id, stored))
	return nil
}

// Delete removes id from the store and rebuilds the graph from what
// remains (O(n log n); see the comment inside); see [vector.Index].
func (x *CoderHNSW) Delete(ctx context.Context, id vector.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, err := x.s.Get(id); err != nil {
		return fmt.Errorf("baseline: coder/hnsw: delete: %w", err)
	}
	if err := x.s.Delete(ctx, id); err != nil {
		return fmt.Errorf("baseline: coder/hnsw: delete: %w", err)
	}
	// coder/hnsw's own Delete leaves graphs that its Add and Search then
	// dereference nil in (an emptied layer keeps a nil entry node), so the
	// graph is rebuilt from the store instead: slow, but a baseline is
	// measured on inserts and searches, and it must never crash.
	g := coder.NewGraph[vector.ID]()
	g.M, g.Ml, g.EfSearch, g.Distance, g.Rng = x.g.M, x.g.Ml, x.g.EfSearch, x.g.Distance, x.g.Rng
	err := x.s.ForEach(func(id vector.ID, v vector.Vector) error {
		g.Add(coder.MakeNode(id, v))
		return nil
	})
	x.g = g
	if err != nil {
		return fmt.Errorf("baseline: coder/hnsw: delete: rebuild: %w", err)
	}
	return nil
}

// Search returns up to k nearest vectors to q; see [vector.Index]. The
// distances are recomputed under the store's metric (coder/hnsw's
// Euclidean distance is the square root of cairn's L2), and results are
// sorted by distance, then id. coder/hnsw has no filters: with
// opts.Filter set, Search scans the store exactly instead.
func (x *CoderHNSW) Search(ctx context.Context, q vector.Vector, k int, opts *vector.SearchOptions) (res []vector.Result, err error) {
	if k <= 0 {
		return nil, fmt.Errorf("baseline: coder/hnsw: search: %w: k = %d", vector.ErrInvalidK, k)
	}
	qv, err := vector.Prepare(q, x.dim, x.metric)
	if err != nil {
		return nil, fmt.Errorf("baseline: coder/hnsw: search: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts != nil && opts.Filter != nil {
		return x.scan(qv, k, opts.Filter)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.g.Len() == 0 {
		return []vector.Result{}, nil
	}
	defer func() {
		// coder/hnsw panics on states its deletes can leave behind (an
		// upper layer emptied while the base is not); report it instead.
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("baseline: coder/hnsw: search panicked: %v", p)
		}
	}()
	ask := min(k, x.g.Len()) // coder/hnsw sizes its search by what it is asked
	if x.overfetch {
		ask = max(ask, x.g.EfSearch)
	}
	nodes := x.g.Search(qv, ask)
	top := vector.NewTopK(k)
	for _, n := range nodes {
		top.Push(n.Key, x.dist(qv, n.Value))
	}
	res = top.Results()
	// The graph keeps its own copies of the vectors: a closed store is
	// seen only by asking it.
	if len(res) > 0 {
		if _, err := x.s.Get(res[0].ID); errors.Is(err, vector.ErrClosed) {
			return nil, fmt.Errorf("baseline: coder/hnsw: search: %w", err)
		}
	}
	return res, nil
}

// scan is the exact search of filtered queries.
func (x *CoderHNSW) scan(q vector.Vector, k int, f vector.Filter) ([]vector.Result, error) {
	top := vector.NewTopK(k)
	err := x.s.ForEach(func(id vector.ID, v vector.Vector) error {
		if f.Allow(id) {
			top.Push(id, x.dist(q, v))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("baseline: coder/hnsw: search: %w", err)
	}
	return top.Results(), nil
}
