package hnsw

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/cairndb/cairn/vector"
)

// FilterCrossover sets when a search with an allow-list ([*vector.IDSet])
// of s ids scores those ids exactly instead of walking the graph: when
// s² ≤ FilterCrossover · ef · n, for n indexed vectors.
//
// Why that shape: a walk with a filter that keeps a fraction p = s/n of the
// nodes must expand about ef/p nodes before it has collected ef allowed
// ones, so its cost grows like ef·n/s, while the exact scan costs s; they
// meet at s² ∝ ef·n. The constant was measured with BenchmarkFilter
// (clustered 768-d, n = 10,000, M = 16, ef = 64): the walk takes 3.8 ms
// with 100 allowed ids, 0.77 ms with 2,000 and 0.44 ms with 4,000; the exact
// scan 0.013, 0.39 and 0.77 ms; they cross near s = 3,000, which gives
// 3000² / (64 · 10,000) ≈ 14. With the defaults that is every allow-list
// below about 30% of a 10,000-vector index and about 9% of a 100,000 one.
// Below the crossover the exact scan is also exact.
const FilterCrossover = 14

// filterCrossover is FilterCrossover, variable for the crossover benchmark.
var filterCrossover float64 = FilterCrossover

// exactFilter reports whether an allow-list of s ids is scored exactly.
func exactFilter(s, ef, n int) bool {
	return float64(s)*float64(s) <= filterCrossover*float64(ef)*float64(n)
}

// searchEf returns the beam width of a search for k results asked for
// with ef (0 for the index's EfSearch).
func (ix *Index) searchEf(ef, k int) int {
	if ef == 0 {
		ef = ix.opts.EfSearch
	}
	return max(ef, k)
}

// ScoresSetExactly reports whether a search for k results at beam width ef
// (0 for [Options].EfSearch) with an allow-list ([*vector.IDSet]) of s ids
// scores those ids exactly instead of walking the graph, by the rule of
// [FilterCrossover]. Callers that build allow-lists use it to choose their
// representation: a set only where the index will iterate it.
func (ix *Index) ScoresSetExactly(s, k, ef int) bool {
	return exactFilter(s, ix.searchEf(ef, k), ix.liveCount())
}

// checkEvery is the number of nodes a search expands between checks of its
// context.
const checkEvery = 256

// experiment selects a variant of the code under measurement: 0 always in
// the library. To compare a change, branch on experiment == 1 beside the
// current code and run BenchmarkExperiment or BenchmarkBuildExperiment,
// which alternate the two in one process; no code branches on it now.
var experiment int

// Search returns up to k stored vectors nearest to q, closest first (ties
// by ascending id), searching with [Options.EfSearch]; see [vector.Index].
// It is [Index.SearchWith] with the common options only.
func (ix *Index) Search(ctx context.Context, q vector.Vector, k int, opts *vector.SearchOptions) ([]vector.Result, error) {
	var o SearchOptions
	if opts != nil {
		o.SearchOptions = *opts
	}
	return ix.SearchWith(ctx, q, k, &o)
}

// SearchWith is Search with HNSW's options: o.Ef overrides EfSearch for this
// query. o may be nil. It returns an error wrapping [vector.ErrInvalidK] for
// k <= 0, [vector.ErrInvalidOptions] for an Ef out of range, the
// validation errors of [vector.Check] for q, and ctx's error if ctx is done
// before or during the search.
//
// With a filter, the walk goes on through nodes the filter rejects, so k
// results come back whenever k allowed vectors are reachable; a small
// [*vector.IDSet] is scored exactly instead (see [FilterCrossover]).
func (ix *Index) SearchWith(ctx context.Context, q vector.Vector, k int, o *SearchOptions) ([]vector.Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("hnsw: search: %w: k = %d", vector.ErrInvalidK, k)
	}
	var so SearchOptions
	if o != nil {
		so = *o
	}
	if so.Ef < 0 || so.Ef > MaxEf {
		return nil, fmt.Errorf("hnsw: search: %w: Ef = %d, want 0..%d", vector.ErrInvalidOptions, so.Ef, MaxEf)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	// No search returns more than the index holds: a k beyond it would
	// only size the beam, and the memory behind it, for nothing. (Up to
	// MaxEf, the beam's bound, it may.)
	if k > MaxEf {
		k = min(k, max(ix.liveCount(), 1))
	}
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	sc.walkDists = so.WalkDistances
	defer func() { sc.walkDists = false }()
	if cap(sc.q) < ix.dim {
		sc.q = make([]float32, ix.dim)
	}
	qv := sc.q[:ix.dim]
	if err := vector.PrepareInto(qv, q, ix.dim, ix.metric); err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	ef, exact := ix.searchEf(so.Ef, k), false
	if so.Ef == 0 && ix.opts.TargetRecall != 0 {
		ef, exact = ix.targetEf(k)
		if so.Filter == nil {
			ix.recordQuery(qv)
		}
	}

	ix.searching()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var res []vector.Result
	switch set, ok := so.Filter.(*vector.IDSet); {
	case exact:
		var err error
		if res, err = ix.searchAll(ctx, qv, k, so.Filter); err != nil {
			return nil, err
		}
	case ok && exactFilter(set.Len(), ef, ix.liveCount()):
		res = ix.searchExact(qv, k, set)
	default:
		res = ix.walk(sc, qv, k, ef, so.Filter, ctx.Done())
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hnsw: search: %w", err)
		}
	}
	if err := ix.storeOpen(res); err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	return res, nil
}

// storeOpen returns the store's error if it was closed before or during a
// search that found res: the search reads the vectors' memory, not the
// store, and a closed store's memory reads as zeros or as it was. One
// read of the store after the search tells: if it finds the store open,
// every read of the search came before the store's Close.
func (ix *Index) storeOpen(res []vector.Result) error {
	if len(res) == 0 {
		return nil
	}
	if _, err := ix.store.Get(res[0].ID); errors.Is(err, vector.ErrClosed) {
		return err
	}
	return nil
}

// searchPrepared is a search for a prepared query at beam width ef, for
// the index's own measurements: it is not recorded as a query and cannot
// be cancelled; filter (nil for none) is the calibration's universe. It
// also returns the number of nodes the walk scored.
//
// With skipOn, the id skip is walked around as if it were not in the
// graph: never moved to on the upper layers, never expanded or returned on
// layer 0 (unless the walk has no other way in).
func (ix *Index) searchPrepared(q []float32, k, ef int, skip vector.ID, skipOn bool, filter vector.Filter) ([]vector.Result, int) {
	sc := ix.getScratch()
	defer func() {
		sc.skipOn = false
		ix.scratch.Put(sc)
	}()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if skipOn {
		ix.idMu.Lock()
		sc.skip, sc.skipOn = ix.idGet(skip)
		ix.idMu.Unlock()
	}
	res := ix.walk(sc, q, k, ef, filter, nil)
	return res, sc.vis.count()
}

// rescoreLimit returns the walk's distance beyond which no finalist can
// rank among the first k, when the k-th smallest walk distance is dk: the
// gather and single kernels each round a sum of dim products, each within
// γ = dim·u (u = 2⁻²⁴) of the exact sum of their magnitudes, so they differ
// by at most δ = 2γ·Σ|aᵢbᵢ|. Under Cosine the vectors are unit length
// and Σ|aᵢbᵢ| ≤ 1 (Cauchy–Schwarz), plus the rounding of 1 − a·b; under
// L2 every term is non-negative and δ ≤ 2γ·d (relative). A finalist c can
// rank among the first k only if its single-kernel distance, at least
// dc − δ, is at most the k-th one, at most dk + δ. Under Dot the sum's
// scale is unbounded: every finalist is scored again. The margin is
// doubled again for safety.
func (ix *Index) rescoreLimit(dk float32) float32 {
	const u = 1.0 / (1 << 24)
	g := 4 * float64(ix.dim+4) * u
	switch ix.metric {
	case vector.Cosine:
		return float32(float64(dk) + 2*(g+8*u))
	case vector.L2:
		return float32(float64(dk)*(1+g)/(1-g) + 1e-30)
	}
	return float32(math.Inf(1))
}

// searchExact scores the indexed ids of set one by one. mu is held.
func (ix *Index) searchExact(q []float32, k int, set *vector.IDSet) []vector.Result {
	t := vector.NewTopK(k)
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	set.All(func(id vector.ID) bool {
		if s, ok := ix.idGet(id); ok && ix.hasVec(s) {
			t.Push(id, ix.dist(q, ix.vec(s)))
		}
		return true
	})
	return t.Results()
}

// liveCount is Len for callers that may hold mu.
func (ix *Index) liveCount() int {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	return ix.live
}

// distances returns the distances from q to the vectors vs (dim floats
// each), in sc.dists, scored by one call of the pointer-gather kernel
// (four vectors a pass over q, the loop over them in assembly). Against a
// call of the four-row kernel per four neighbours it cut the instructions
// of a query by 6% (callgrind, clustered d = 100, n = 50,000, ef = 64:
// BenchmarkCountQueries). The callers gather the pointers once, for the
// prefetch and for this.
func (ix *Index) distances(sc *scratch, q []float32, vs []*float32) []float32 {
	if cap(sc.dists) < len(vs) {
		sc.dists = make([]float32, len(vs), 2*len(vs))
	}
	return ix.distancesInto(q, vs, sc.dists)
}

// distancesInto is distances writing into out, which must hold at least
// len(vs) floats; it returns out[:len(vs)].
func (ix *Index) distancesInto(q []float32, vs []*float32, out []float32) []float32 {
	out = out[:len(vs)]
	switch ix.metric {
	case vector.Cosine:
		// Unit vectors: 1 − a·b.
		vector.InnerProductGather(q, vs, out)
		for j, p := range out {
			out[j] = 1 - p
		}
	case vector.Dot:
		vector.InnerProductGather(q, vs, out)
		for j, p := range out {
			out[j] = -p
		}
	default:
		vector.SquaredL2Gather(q, vs, out)
	}
	return out
}
