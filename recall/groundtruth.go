package recall

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/cairndb/cairn/vector"
)

// GroundTruthK is the depth of the ground truth vecbench computes and
// caches: the exact 100 nearest base vectors of every query.
const GroundTruthK = 100

// gtTile is the number of base vectors a ground-truth worker converts to
// float64 and holds at once: 64 vectors of 768 float64s are 384 KiB, which
// stays in a core's L2 cache while every query streams past them.
const gtTile = 64

// GroundTruth returns, for every query of ds, the positions in ds.Base of
// its k nearest base vectors, nearest first, under ds.Metric. Distances
// are computed in float64 from the float32 components (the products of two
// float32s are exact in float64), with exact ties broken by the smaller
// position, so the result does not depend on the order of the arithmetic of
// any index it judges. It uses every core, and returns ctx's error if ctx is
// cancelled.
//
// There is no tie tolerance: an index that returns a vector whose float64
// distance equals that of the k-th true neighbour but lies past it in
// position order is not credited. On the synthetic data sets such ties do
// not occur; on user data with exact duplicate vectors recall may read
// slightly low.
//
// It returns an error wrapping [vector.ErrInvalidK] if k <= 0 and
// [vector.ErrDimensionMismatch] if a vector's length is not ds.Dim. If k
// exceeds len(ds.Base), every row holds all len(ds.Base) positions.
func GroundTruth(ctx context.Context, ds *Dataset, k int) ([][]int32, error) {
	return groundTruth(ctx, ds, k, nil)
}

// groundTruth is GroundTruth reporting progress, in tiles of base vectors.
func groundTruth(ctx context.Context, ds *Dataset, k int, progress func(done, total int)) ([][]int32, error) {
	if k <= 0 {
		return nil, fmt.Errorf("recall: ground truth: %w", vector.ErrInvalidK)
	}
	if !ds.Metric.Valid() {
		return nil, fmt.Errorf("recall: ground truth: %w: metric %v", vector.ErrInvalidOptions, ds.Metric)
	}
	if len(ds.Base) > math.MaxInt32 {
		return nil, fmt.Errorf("recall: ground truth: %w: %d base vectors do not fit int32 ids", vector.ErrInvalidOptions, len(ds.Base))
	}
	dim := ds.Dim
	for i, v := range ds.Base {
		if len(v) != dim {
			return nil, fmt.Errorf("recall: ground truth: base %d: %w: got %d, want %d", i, vector.ErrDimensionMismatch, len(v), dim)
		}
	}
	nq := len(ds.Queries)
	qs := make([]float64, nq*dim)
	qnorm := make([]float64, nq)
	for i, v := range ds.Queries {
		if len(v) != dim {
			return nil, fmt.Errorf("recall: ground truth: query %d: %w: got %d, want %d", i, vector.ErrDimensionMismatch, len(v), dim)
		}
		row := qs[i*dim : (i+1)*dim]
		for j, x := range v {
			row[j] = float64(x)
		}
		qnorm[i] = dot64(row, row)
	}
	k = min(k, len(ds.Base))
	if k == 0 || nq == 0 {
		return make([][]int32, nq), nil
	}

	tiles := (len(ds.Base) + gtTile - 1) / gtTile
	workers := min(runtime.GOMAXPROCS(0), tiles)
	next := make(chan int, tiles)
	for t := range tiles {
		next <- t
	}
	close(next)
	var progMu sync.Mutex
	tilesDone := 0
	tileDone := func() {
		if progress == nil {
			return
		}
		progMu.Lock()
		tilesDone++
		progress(tilesDone, tiles)
		progMu.Unlock()
	}
	heaps := make([][]heap64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		hs := make([]heap64, nq)
		for i := range hs {
			hs[i] = heap64{k: k, h: make([]item64, 0, k)}
		}
		heaps[w] = hs
		wg.Go(func() {
			errs[w] = gtWorker(ctx, ds, qs, qnorm, hs, next, tileDone)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := make([][]int32, nq)
	for q := range out {
		all := heaps[0][q].h
		for w := 1; w < workers; w++ {
			all = append(all, heaps[w][q].h...)
		}
		slices.SortFunc(all, cmpItem)
		row := make([]int32, k)
		for i := range row {
			row[i] = all[i].pos
		}
		out[q] = row
	}
	return out, nil
}

// gtWorker scores every query against the tiles of base vectors it takes
// from next, keeping each query's k best in hs.
func gtWorker(ctx context.Context, ds *Dataset, qs, qnorm []float64, hs []heap64, next <-chan int, tileDone func()) error {
	dim := ds.Dim
	tile := make([]float64, gtTile*dim)
	tnorm := make([]float64, gtTile)
	var dots [4]float64
	for t := range next {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("recall: ground truth: %w", err)
		}
		lo := t * gtTile
		hi := min(lo+gtTile, len(ds.Base))
		nb := hi - lo
		for i := range nb {
			row := tile[i*dim : (i+1)*dim]
			for j, x := range ds.Base[lo+i] {
				row[j] = float64(x)
			}
			tnorm[i] = dot64(row, row)
		}
		for q := range hs {
			qv := qs[q*dim : (q+1)*dim]
			h := &hs[q]
			for i := 0; i < nb; i += 4 {
				m := min(4, nb-i)
				if m == 4 {
					dot64x4(qv, tile[i*dim:(i+4)*dim], &dots)
				} else {
					for j := range m {
						dots[j] = dot64(qv, tile[(i+j)*dim:(i+j+1)*dim])
					}
				}
				for j := range m {
					h.push(distance64(ds.Metric, dots[j], qnorm[q], tnorm[i+j]), int32(lo+i+j))
				}
			}
		}
		tileDone()
	}
	return nil
}

// distance64 turns an inner product and two squared norms into a distance
// under m, smaller is closer, as vector.Metric defines them.
func distance64(m vector.Metric, dot, qq, bb float64) float64 {
	switch m {
	case vector.Cosine:
		if qq == 0 || bb == 0 {
			return 1
		}
		return 1 - dot/math.Sqrt(qq*bb)
	case vector.Dot:
		return -dot
	default: // L2
		return qq + bb - 2*dot
	}
}

// dot64 is the float64 inner product of a and b.
func dot64(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot64x4 writes the inner products of q with the four consecutive rows of
// rows into out: each component of q is loaded once for four products.
func dot64x4(q, rows []float64, out *[4]float64) {
	d := len(q)
	r0, r1, r2, r3 := rows[:d], rows[d:2*d], rows[2*d:3*d], rows[3*d:4*d]
	var s0, s1, s2, s3 float64
	for i, x := range q {
		s0 += x * r0[i]
		s1 += x * r1[i]
		s2 += x * r2[i]
		s3 += x * r3[i]
	}
	out[0], out[1], out[2], out[3] = s0, s1, s2, s3
}

// item64 is a candidate of the ground truth: a float64 distance and a
// position in the base.
type item64 struct {
	dist float64
	pos  int32
}

func (a item64) less(b item64) bool {
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	return a.pos < b.pos
}

func cmpItem(a, b item64) int {
	if a.less(b) {
		return -1
	}
	if b.less(a) {
		return 1
	}
	return 0
}

// heap64 keeps the k best item64s: a max-heap with the worst at the root.
type heap64 struct {
	k int
	h []item64
}

func (t *heap64) push(dist float64, pos int32) {
	it := item64{dist, pos}
	h := t.h
	if len(h) < t.k {
		h = append(h, it)
		j := len(h) - 1
		for j > 0 {
			i := (j - 1) / 2
			if !h[i].less(h[j]) {
				break
			}
			h[i], h[j] = h[j], h[i]
			j = i
		}
		t.h = h
		return
	}
	if !it.less(h[0]) {
		return
	}
	h[0] = it
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h[l].less(h[r]) {
			j = r
		}
		if !h[i].less(h[j]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
