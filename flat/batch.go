package flat

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
)

// tileRows is how many stored vectors a batch search scores against every
// query before moving on: 64 rows of 768 float32s are 192 KiB, which stay in
// a core's L2 cache while all the queries stream past them, so each vector
// is read from memory once per batch instead of once per query.
const tileRows = 64

// SearchBatch answers many queries in one pass over the store: for each
// tile of stored vectors it scores every query, so memory is read once for
// the whole batch rather than once per query. The result for qs[i] is what
// Search(ctx, qs[i], k, opts) returns. It is the method to use for ground
// truth and other bulk work; it validates every query before it starts.
func (x *Index) SearchBatch(ctx context.Context, qs []vector.Vector, k int, opts *vector.SearchOptions) ([][]vector.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, fmt.Errorf("flat: search batch: %w: %d", vector.ErrInvalidK, k)
	}
	if len(qs) == 0 {
		return [][]vector.Result{}, nil
	}
	dim := x.s.Dim()
	pqs := make([]vector.Vector, len(qs))
	arena := make([]float32, len(qs)*dim)
	for i, q := range qs {
		pqs[i] = arena[i*dim : (i+1)*dim : (i+1)*dim]
		if err := vector.PrepareInto(pqs[i], q, dim, x.m); err != nil {
			return nil, fmt.Errorf("flat: search batch: query %d: %w", i, err)
		}
	}
	var filter vector.Filter
	if opts != nil {
		filter = opts.Filter
	}
	bv, ok := x.s.(vector.BlockViewer)
	if !ok {
		out := make([][]vector.Result, len(qs))
		for i, q := range pqs {
			top := vector.NewTopK(k)
			if err := x.scanEach(ctx, q, filter, top); err != nil {
				return nil, fmt.Errorf("flat: search batch: %w", err)
			}
			out[i] = top.Results()
		}
		return out, nil
	}
	var out [][]vector.Result
	err := bv.ViewBlocks(func(blocks []vector.Block) error {
		var err error
		out, err = batchBlocks(ctx, x.m, pqs, k, blocks, filter)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("flat: search batch: %w", err)
	}
	return out, nil
}

func batchBlocks(ctx context.Context, m vector.Metric, qs []vector.Vector, k int, blocks []vector.Block, filter vector.Filter) ([][]vector.Result, error) {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(blocks)))
	var next atomic.Int64
	tops := make([][]*vector.TopK, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		tops[w] = make([]*vector.TopK, len(qs))
		for i := range qs {
			tops[w][i] = vector.NewTopK(k)
		}
		wg.Go(func() { errs[w] = batchWorker(ctx, m, qs, blocks, filter, tops[w], &next) })
	}
	wg.Wait()
	out := make([][]vector.Result, len(qs))
	for i := range qs {
		for w := range workers {
			if errs[w] != nil {
				return nil, errs[w]
			}
			if w > 0 {
				tops[0][i].Merge(tops[w][i])
			}
		}
		out[i] = tops[0][i].Results()
	}
	return out, nil
}

func batchWorker(ctx context.Context, m vector.Metric, qs []vector.Vector, blocks []vector.Block, filter vector.Filter, tops []*vector.TopK, next *atomic.Int64) error {
	var dist [tileRows]float32
	var ok [tileRows]bool
	dim := len(qs[0])
	for {
		b := int(next.Add(1) - 1)
		if b >= len(blocks) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		blk := blocks[b]
		for lo := 0; lo < len(blk.IDs); lo += tileRows {
			n := min(tileRows, len(blk.IDs)-lo)
			ids := blk.IDs[lo : lo+n]
			any := false
			for j := range n {
				ok[j] = blk.Live[lo+j] && (filter == nil || filter.Allow(ids[j]))
				any = any || ok[j]
			}
			if !any {
				continue
			}
			rows := blk.Data[lo*dim : (lo+n)*dim]
			for qi, q := range qs {
				out := dist[:n]
				m.BatchDistance(q, rows, out)
				top := tops[qi]
				for j, d := range out {
					if ok[j] && (!top.Full() || d <= top.Worst()) {
						top.Push(ids[j], d)
					}
				}
			}
		}
	}
}
