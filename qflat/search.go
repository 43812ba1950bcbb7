// This file holds the search: the quantized scan of the code table and the
// exact rescoring of its best candidates.

package qflat

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// smallSet is the allow-list size at or below which a search scores the
// listed ids exactly, one by one, instead of scanning the codes: as in
// package flat, a lookup and a scattered read cost about as much as
// streaming 64 float32 vectors, so a quarter of that for codes.
func smallSet(n int) int { return max(n/256, 256) }

// ScoresSetExactly reports whether a search with an allow-list
// ([*vector.IDSet]) of s ids scores those ids exactly rather than scanning
// the codes; k and ef do not matter and are there so that callers can ask
// any index the same question.
func (x *Index) ScoresSetExactly(s, k, ef int) bool { return s <= smallSet(x.Len()) }

// SearchOptions are the per-query options of [Index.SearchWith]: the
// common ones and qflat's own.
//
// A search only reads it, so one value may serve many concurrent
// searches.
type SearchOptions struct {
	vector.SearchOptions
	// Rescore, if positive, replaces [Options.Rescore] for this query; at
	// most 1024.
	Rescore int
}

// Search returns the k indexed vectors nearest to q, closest first, ties
// broken by ascending id, with exact distances. See [vector.Index.Search].
func (x *Index) Search(ctx context.Context, q vector.Vector, k int, opts *vector.SearchOptions) ([]vector.Result, error) {
	var o SearchOptions
	if opts != nil {
		o.SearchOptions = *opts
	}
	return x.SearchWith(ctx, q, k, &o)
}

// SearchWith is [Index.Search] with qflat's own options; o may be nil. It
// returns an error wrapping [vector.ErrInvalidOptions] for a Rescore out of
// range.
func (x *Index) SearchWith(ctx context.Context, q vector.Vector, k int, o *SearchOptions) ([]vector.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("qflat: search: %w: %d", vector.ErrInvalidK, k)
	}
	if o == nil {
		o = &SearchOptions{}
	}
	rescore := x.rescore
	switch {
	case o.Rescore > 1024 || o.Rescore < 0:
		return nil, fmt.Errorf("qflat: search: %w: rescore %d must be in [0, 1024]", vector.ErrInvalidOptions, o.Rescore)
	case o.Rescore > 0:
		rescore = o.Rescore
	}
	pq, err := vector.Prepare(q, x.dim, x.m)
	if err != nil {
		return nil, fmt.Errorf("qflat: search: %w", err)
	}
	filter := o.Filter
	if set, ok := filter.(*vector.IDSet); ok && x.ScoresSetExactly(set.Len(), k, 0) {
		return x.searchSet(ctx, pq, k, set)
	}
	cands, err := x.candidates(ctx, pq, min(k, 1<<20)*rescore, filter)
	if err != nil {
		return nil, fmt.Errorf("qflat: search: %w", err)
	}
	res, err := x.rescoreTop(pq, k, cands)
	if err != nil {
		return nil, fmt.Errorf("qflat: search: %w", err)
	}
	return res, nil
}

// rescoreTop scores the candidates exactly from the store and returns the k
// best. It scores four at a time with the gather kernels, which give the
// bits of package flat's batch scan, so both indexes report the same
// distance for a vector. A candidate deleted since the scan is skipped;
// any other error of the store's (closed, say) ends the search.
func (x *Index) rescoreTop(q vector.Vector, k int, cands []vector.Result) ([]vector.Result, error) {
	top := vector.NewTopK(k)
	var ids [4]vector.ID
	var vs [4]vector.Vector
	n := 0
	flush := func() {
		for i := n; i < 4; i++ {
			vs[i] = q // padding, not pushed
		}
		var d [4]float32
		switch x.m {
		case vector.L2:
			d = vector.SquaredL2x4(q, vs[0], vs[1], vs[2], vs[3])
		case vector.Cosine:
			d = vector.InnerProduct4(q, vs[0], vs[1], vs[2], vs[3])
			for i := range d {
				d[i] = 1 - d[i]
			}
		default:
			d = vector.InnerProduct4(q, vs[0], vs[1], vs[2], vs[3])
			for i := range d {
				d[i] = -d[i]
			}
		}
		for i := range n {
			top.Push(ids[i], d[i])
		}
		n = 0
	}
	for _, c := range cands {
		v, err := x.s.Get(c.ID)
		if errors.Is(err, vector.ErrNotFound) {
			continue // deleted since the scan
		}
		if err != nil {
			return nil, err
		}
		ids[n], vs[n] = c.ID, v
		if n++; n == 4 {
			flush()
		}
	}
	if n > 0 {
		flush()
	}
	return top.Results(), nil
}

// searchSet scores the indexed ids of a small allow-list exactly.
func (x *Index) searchSet(ctx context.Context, q vector.Vector, k int, set *vector.IDSet) ([]vector.Result, error) {
	var ids []vector.ID
	x.mu.RLock()
	set.All(func(id vector.ID) bool {
		if _, ok := x.t.slot[id]; ok {
			ids = append(ids, id)
		}
		return true
	})
	x.mu.RUnlock()
	dist := x.m.DistanceFunc()
	top := vector.NewTopK(k)
	for i, id := range ids {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("qflat: search: %w", err)
			}
		}
		v, err := x.s.Get(id)
		if errors.Is(err, vector.ErrNotFound) {
			continue // deleted since the set was read
		}
		if err != nil {
			return nil, fmt.Errorf("qflat: search: %w", err)
		}
		top.Push(id, dist(q, v))
	}
	return top.Results(), nil
}

// minChunksPerWorker keeps small scans on one goroutine.
const minChunksPerWorker = 4

// candidates scans every code and returns the n best estimates that the
// filter allows, in no particular order.
func (x *Index) candidates(ctx context.Context, pq vector.Vector, n int, filter vector.Filter) ([]vector.Result, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := x.t
	if t.q == nil {
		return nil, nil
	}
	qq, err := t.q.Prepare(pq)
	if err != nil {
		return nil, err
	}
	top := vector.NewTopK(n)
	workers := min(runtime.GOMAXPROCS(0), len(t.chunks)/minChunksPerWorker)
	if workers <= 1 {
		err = t.scan(ctx, qq, filter, top, nil)
	} else {
		var next atomic.Int64
		tops := make([]*vector.TopK, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			tops[w] = vector.NewTopK(n)
			wg.Go(func() { errs[w] = t.scan(ctx, qq, filter, tops[w], &next) })
		}
		wg.Wait()
		for w := range workers {
			if errs[w] != nil {
				return nil, errs[w]
			}
			top.Merge(tops[w])
		}
	}
	if err != nil {
		return nil, err
	}
	return top.Results(), nil
}

// scanRows is how many codes one call of the distance kernel scores.
const scanRows = 256

// scan scores the chunks taken from next (all of them, in order, if next
// is nil) into top.
func (t *table) scan(ctx context.Context, qq *quant.Query, filter vector.Filter, top *vector.TopK, next *atomic.Int64) error {
	var buf [scanRows]float32
	used := len(t.ids)
	for i := 0; ; i++ {
		c := i
		if next != nil {
			c = int(next.Add(1) - 1)
		}
		if c >= len(t.chunks) {
			return nil
		}
		if i%4 == 3 { // every 4,096 codes
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		first := c * chunkSlots
		rows := min(chunkSlots, used-first)
		chunk := t.chunks[c]
		for lo := 0; lo < rows; lo += scanRows {
			m := min(scanRows, rows-lo)
			out := buf[:m]
			qq.Distances(chunk[lo*t.size:(lo+m)*t.size], out)
			ids, live := t.ids[first+lo:first+lo+m], t.live[first+lo:first+lo+m]
			for j, d := range out {
				if !live[j] || (top.Full() && d > top.Worst()) {
					continue
				}
				if filter != nil && !filter.Allow(ids[j]) {
					continue
				}
				top.Push(ids[j], d)
			}
		}
	}
}
