// This file holds the index's exact search, used when its recall target is
// met more cheaply by scoring every vector than by walking the graph: the
// store's arena streamed through the batch kernels and split across cores,
// as package flat scans it.

package hnsw

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
)

// minExactBlocks is the number of store blocks (of up to 256 vectors) a
// worker of the exact search must have to itself before the search splits:
// below it, starting a goroutine costs about what scoring the blocks does
// (vector.ScanBlocks uses the same bound). minExactPages is the same bound in pages of
// slots, four blocks each.
const (
	minExactBlocks = 8
	minExactPages  = minExactBlocks * 256 / pageSize
)

// searchAll returns the k indexed vectors nearest to the prepared query q
// that filter allows, by scoring every one: the exact search of an index
// whose recall target no beam width meets more cheaply. With a store that
// lends its arena ([vector.BlockViewer]) it scores the arena as
// [flat.Index.Search] does, with the same kernels in the same order, so the
// two return the same results, ties included; vectors of the store the
// graph does not index (untracked, or still being inserted) are left out.
// Otherwise it scores the graph's own vectors, slot page by slot page. It
// returns ctx's error if ctx ends first. mu is held for reading.
func (ix *Index) searchAll(ctx context.Context, q []float32, k int, filter vector.Filter) ([]vector.Result, error) {
	top := vector.NewTopK(k)
	var err error
	if bv, ok := ix.store.(vector.BlockViewer); ok {
		err = bv.ViewBlocks(func(blocks []vector.Block) error {
			return ix.scanBlocks(ctx, q, blocks, filter, top)
		})
	} else {
		err = ix.scanSlots(ctx, q, filter, top)
	}
	if err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	return top.Results(), nil
}

// indexedID reports whether id is a vector of the graph: inserted (or
// being inserted, its vector recorded) and not deleted. mu is held.
func (ix *Index) indexedID(id vector.ID) bool {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	s, ok := ix.idGet(id)
	return ok && ix.indexed(s)
}

// scanBlocks scores q against every live vector of blocks that the graph
// indexes and filter allows, as flat does ([vector.ScanBlocks]), and
// leaves the k best in top. Only a vector close enough to enter top is
// looked up in the graph's id table, so the lookups cost about k·ln(n/k)
// a worker, not one a vector.
func (ix *Index) scanBlocks(ctx context.Context, q []float32, blocks []vector.Block, filter vector.Filter, top *vector.TopK) error {
	indexed := vector.FilterFunc(func(id vector.ID) bool {
		return (filter == nil || filter.Allow(id)) && ix.indexedID(id)
	})
	return vector.ScanBlocks(ctx, ix.metric, q, blocks, indexed, top)
}

// scanSlots scores q against the graph's own vectors, for a store without
// an arena to lend: workers take pages of slots in turn, gather each
// page's indexed vectors under idMu, and score them with the kernels the
// walk uses. mu is held.
func (ix *Index) scanSlots(ctx context.Context, q []float32, filter vector.Filter, top *vector.TopK) error {
	ix.idMu.Lock()
	pages := int((ix.next + pageSize - 1) / pageSize)
	ix.idMu.Unlock()
	workers := max(1, min(runtime.GOMAXPROCS(0), pages/minExactPages))
	var next atomic.Int64
	tops := make([]*vector.TopK, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		tops[w] = vector.NewTopK(top.K())
		wg.Go(func() { errs[w] = ix.scanSlotRange(ctx, q, pages, filter, tops[w], &next) })
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			return errs[w]
		}
		top.Merge(tops[w])
	}
	return nil
}

// scanSlotRange scores the pages of slots taken from next into top.
func (ix *Index) scanSlotRange(ctx context.Context, q []float32, pages int, filter vector.Filter, top *vector.TopK, next *atomic.Int64) error {
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	var ids []vector.ID
	for {
		p := int(next.Add(1) - 1)
		if p >= pages {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ids, sc.vs = ids[:0], sc.vs[:0]
		ix.idMu.Lock()
		for s := node(p * pageSize); s < min(node((p+1)*pageSize), ix.next); s++ {
			if ix.indexed(s) {
				ids, sc.vs = append(ids, ix.idOf(s)), append(sc.vs, ix.vecp(s))
			}
		}
		ix.idMu.Unlock()
		for j, d := range ix.distances(sc, q, sc.vs) {
			if top.Full() && d > top.Worst() {
				continue
			}
			if filter != nil && !filter.Allow(ids[j]) {
				continue
			}
			top.Push(ids[j], d)
		}
	}
}
