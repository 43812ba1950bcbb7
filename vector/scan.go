// This file holds the exact scan of a store's arena: every live vector of
// a list of blocks scored with the batch kernels, split across cores.

package vector

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// minBlocksPerWorker keeps small scans on one goroutine: starting a worker
// costs about as much as scoring a few blocks.
const minBlocksPerWorker = 8

// ScanBlocks scores q (prepared for m) against every live vector of
// blocks with [Metric.BatchDistance] and leaves the best in top, which
// keeps its earlier contents. It splits the blocks among up to GOMAXPROCS
// goroutines when there are enough of them. filter (nil for none) is asked
// only about vectors close enough to enter top, so it is called about
// k·ln(n/k) times a worker, not once a vector. Vectors at equal distance
// are kept in id order, so the result does not depend on the split. It
// returns ctx's error, checked every 16 blocks of each worker from its
// first, if ctx ends first.
func ScanBlocks(ctx context.Context, m Metric, q Vector, blocks []Block, filter Filter, top *TopK) error {
	workers := min(runtime.GOMAXPROCS(0), len(blocks)/minBlocksPerWorker)
	if workers <= 1 {
		return scanRange(ctx, m, q, blocks, filter, top, nil)
	}
	var next atomic.Int64
	tops := make([]*TopK, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		tops[w] = NewTopK(top.K())
		wg.Go(func() { errs[w] = scanRange(ctx, m, q, blocks, filter, tops[w], &next) })
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

// scanRange scores the blocks taken from next (all of them, in order, if
// next is nil) into top.
func scanRange(ctx context.Context, m Metric, q Vector, blocks []Block, filter Filter, top *TopK, next *atomic.Int64) error {
	var buf [256]float32
	dim := len(q)
	for i := 0; ; i++ {
		b := i
		if next != nil {
			b = int(next.Add(1) - 1)
		}
		if b >= len(blocks) {
			return nil
		}
		// Blocks hold at most 256 vectors: every 4,096 vectors, from the
		// first.
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		blk := blocks[b]
		for lo := 0; lo < len(blk.IDs); lo += len(buf) {
			n := min(len(buf), len(blk.IDs)-lo)
			out := buf[:n]
			m.BatchDistance(q, blk.Data[lo*dim:(lo+n)*dim], out)
			ids, live := blk.IDs[lo:lo+n], blk.Live[lo:lo+n]
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
