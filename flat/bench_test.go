package flat_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// benchIndex builds a flat index over n uniform 768-d vectors (the data
// does not matter to an exact scan, only its size).
func benchIndex(b *testing.B, n, nq int) (*flat.Index, *vector.MemStore, []vector.Vector) {
	b.Helper()
	ds := recall.Uniform(n, nq, 768, 1)
	s, err := vector.NewMemStore(768, vector.Cosine)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := s.PutBatch(context.Background(), ids, ds.Base); err != nil {
		b.Fatal(err)
	}
	return flat.New(s), s, ds.Queries
}

// reportLatency reports the median and p95 of per-call times.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
}

// scanFloor streams every byte of the arena (a copy into a small buffer
// that stays in L1) on the given number of goroutines: the least time any
// exact scan of this store can take on this machine.
func scanFloor(s *vector.MemStore, workers int) {
	_ = s.ViewBlocks(func(blocks []vector.Block) error {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				var buf [4096]float32
				for i := w; i < len(blocks); i += workers {
					d := blocks[i].Data
					for len(d) > 0 {
						d = d[copy(buf[:], d):]
					}
				}
			})
		}
		wg.Wait()
		return nil
	})
}

// BenchmarkScan puts flat's single-query search beside the scan floor, on
// one core and on all of them, at 10,000 and 100,000 × 768. The figure to
// watch is search ns/op divided by floor ns/op at the same core count.
func BenchmarkScan(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		idx, s, qs := benchIndex(b, n, 200)
		bytes := int64(n) * 768 * 4
		for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("n=%d/procs=%d/floor", n, procs), func(b *testing.B) {
				b.SetBytes(bytes)
				var lat []time.Duration
				for b.Loop() {
					t0 := time.Now()
					scanFloor(s, procs)
					lat = append(lat, time.Since(t0))
				}
				reportLatency(b, lat)
			})
			b.Run(fmt.Sprintf("n=%d/procs=%d/search", n, procs), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				b.SetBytes(bytes)
				b.ReportAllocs()
				ctx := context.Background()
				var lat []time.Duration
				i := 0
				for b.Loop() {
					t0 := time.Now()
					if _, err := idx.Search(ctx, qs[i%len(qs)], 10, nil); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					i++
				}
				reportLatency(b, lat)
			})
		}
		s.Close()
	}
}

// BenchmarkSearchBatch answers 1,000 queries over 100,000 × 768 in one
// SearchBatch call and reports queries per second, beside the same queries
// answered one Search at a time. gonum's Sgemm on the same work is in the
// internal/baseline module.
func BenchmarkSearchBatch(b *testing.B) {
	const n, nq = 100000, 1000
	idx, s, qs := benchIndex(b, n, nq)
	defer s.Close()
	ctx := context.Background()
	b.Run("batch", func(b *testing.B) {
		for b.Loop() {
			if _, err := idx.SearchBatch(ctx, qs, 10, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
	})
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			for _, q := range qs[:100] {
				if _, err := idx.Search(ctx, q, 10, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "queries/s")
	})
}
