package hnsw_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// benchSizes are the base sizes of the 768-d clustered benchmarks; the
// 100,000 one is the target (run it with -bench 'n=100000').
var benchSizes = []int{10000, 100000}

// benchData caches data sets, ground truth and built indexes across
// benchmarks in one process, keyed by size.
var benchData = struct {
	sync.Mutex
	ds    map[string]*recall.Dataset
	truth map[string][][]int32
	ix    map[string]*hnsw.Index
}{ds: map[string]*recall.Dataset{}, truth: map[string][][]int32{}, ix: map[string]*hnsw.Index{}}

// dataset returns the 768-d data set of the family ("clustered" or
// "uniform") and size, with 200 queries and their exact top 10.
func dataset(b *testing.B, family string, n int) (*recall.Dataset, [][]int32) {
	benchData.Lock()
	defer benchData.Unlock()
	key := fmt.Sprint(family, n)
	if ds, ok := benchData.ds[key]; ok {
		return ds, benchData.truth[key]
	}
	ds := recall.Clustered(n, 200, recall.DefaultDim, 1)
	if family == "uniform" {
		ds = recall.Uniform(n, 200, recall.DefaultDim, 1)
	}
	truth, err := recall.GroundTruth(context.Background(), ds, 10)
	if err != nil {
		b.Fatal(err)
	}
	benchData.ds[key], benchData.truth[key] = ds, truth
	return ds, truth
}

func buildBench(b *testing.B, ds *recall.Dataset) *hnsw.Index {
	s, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := hnsw.New(s, nil)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := ix.AddBatch(context.Background(), ids, ds.Base); err != nil {
		b.Fatal(err)
	}
	return ix
}

// builtIndex returns the index of the n-vector data set, built once per
// process. If $HNSW_BENCH_CACHE names a directory, the graph is saved there
// after a build and loaded from there by later runs (it is rebuilt if the
// file does not load), which saves minutes when profiling searches at
// n=100000.
func builtIndex(b *testing.B, family string, n int) (*hnsw.Index, *recall.Dataset, [][]int32) {
	ds, truth := dataset(b, family, n)
	return cachedBuild(b, ds), ds, truth
}

// cachedBuild returns the index of ds, built once per process, or loaded
// from $HNSW_BENCH_CACHE (see builtIndex).
func cachedBuild(b *testing.B, ds *recall.Dataset) *hnsw.Index {
	benchData.Lock()
	defer benchData.Unlock()
	if ix, ok := benchData.ix[ds.Name]; ok {
		return ix
	}
	dir := os.Getenv("HNSW_BENCH_CACHE")
	path := filepath.Join(dir, ds.Name+".hnsw")
	if dir != "" {
		if ix := loadCached(b, ds, path); ix != nil {
			benchData.ix[ds.Name] = ix
			return ix
		}
	}
	ix := buildBench(b, ds)
	if dir != "" {
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			b.Logf("cache graph: %v", err)
		}
	}
	benchData.ix[ds.Name] = ix
	return ix
}

func loadCached(b *testing.B, ds *recall.Dataset, path string) *hnsw.Index {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s, err := vector.NewMemStore(ds.Dim, ds.Metric)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]vector.ID, len(ds.Base))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := s.PutBatch(context.Background(), ids, ds.Base); err != nil {
		b.Fatal(err)
	}
	ix, err := hnsw.New(s, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.ReadFrom(bytes.NewReader(data)); err != nil {
		b.Logf("cached graph %s: %v; rebuilding", path, err)
		return nil
	}
	return ix
}

// BenchmarkBuild measures a bulk build (AddBatch with every core) of
// clustered 768-d data, M=16, EfConstruction=200, and reports the memory
// the graph adds per vector.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ds, _ := dataset(b, "clustered", n)
			b.ReportAllocs()
			var ix *hnsw.Index
			for b.Loop() {
				ix = buildBench(b, ds)
			}
			st := ix.Stats()
			b.ReportMetric(st.BytesPerVector, "graph-B/vec")
		})
	}
}

// BenchmarkSearch measures single queries, one at a time, at several ef on
// clustered 768-d data, reporting recall@10 and latency percentiles.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchSearch(b, "clustered", n, []int{16, 32, 64, 128, 256})
		})
	}
}

// BenchmarkSearchUniform is BenchmarkSearch on the worst case, uniform
// 768-d data, where a high ef is needed (hnswlib needs ef=640 for recall@10
// 0.94 at n=10000).
func BenchmarkSearchUniform(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchSearch(b, "uniform", n, []int{64, 160, 320, 640})
		})
	}
}

func benchSearch(b *testing.B, family string, n int, efs []int) {
	for _, ef := range efs {
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
			ix, ds, truth := builtIndex(b, family, n)
			searchLoop(b, ix, ds, truth, ef)
		})
	}
}

// searchLoop runs the queries of ds one at a time at beam width ef and
// reports recall@10 and latency percentiles.
func searchLoop(b *testing.B, ix *hnsw.Index, ds *recall.Dataset, truth [][]int32, ef int) {
	ctx := context.Background()
	o := &hnsw.SearchOptions{Ef: ef}
	var sum float64
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		qi := i % len(ds.Queries)
		start := time.Now()
		got, err := ix.SearchWith(ctx, ds.Queries[qi], 10, o)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		sum += recall.At(got, truth[qi], 10)
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(sum/float64(i), "recall@10")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
}

// BenchmarkLoad measures ReadFrom of a saved graph, to compare with
// BenchmarkBuild at the same n (the issue asks for at least 20× faster).
func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ix, _, _ := builtIndex(b, "clustered", n)
			var buf bytes.Buffer
			if _, err := ix.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			s := ix.Store()
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				ix2, err := hnsw.New(s, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix2.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFilter measures filtered searches with an allow-list of s random
// ids on clustered 768-d data, n=10000, k=10, through the graph walk and
// through the exact scoring of the allowed ids; the sizes where the two
// meet set hnsw.FilterCrossover.
func BenchmarkFilter(b *testing.B) {
	ix, ds, _ := builtIndex(b, "clustered", 10000)
	ctx := context.Background()
	for _, size := range []int{100, 300, 1000, 2000, 4000} {
		set := vector.NewIDSet()
		for i := 0; i < size; i++ {
			set.Add(vector.ID((i * 7919) % len(ds.Base)))
		}
		for _, mode := range []string{"graph", "exact"} {
			b.Run(fmt.Sprintf("ids=%d/%s", size, mode), func(b *testing.B) {
				f := 0.0
				if mode == "exact" {
					f = math.Inf(1)
				}
				old := hnsw.SetFilterCrossover(f)
				defer hnsw.SetFilterCrossover(old)
				o := &vector.SearchOptions{Filter: set}
				i := 0
				for b.Loop() {
					if _, err := ix.Search(ctx, ds.Queries[i%len(ds.Queries)], 10, o); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkDeleteHalf builds clustered 768-d n=10000, deletes half of it at
// random (one Delete at a time, or one Untrack of them all), and reports
// the mean cost per deleted vector and recall@10 (at ef=16 and
// the default ef) of the remaining set beside a fresh build of the same
// vectors; the issue asks that they stay within 0.02. Deletes still
// waiting for their batch are not flushed first: they count in both the
// cost and the recall. Run it with -benchtime=1x.
func BenchmarkDeleteHalf(b *testing.B) {
	b.Run("Delete", func(b *testing.B) { benchDeleteHalf(b, false) })
	b.Run("Untrack", func(b *testing.B) { benchDeleteHalf(b, true) })
}

func benchDeleteHalf(b *testing.B, untrack bool) {
	const n = 10000
	ds, _ := dataset(b, "clustered", n)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	perm := r.Perm(n)
	keep, gone := perm[:n/2], perm[n/2:]
	slices.Sort(keep)
	rest := &recall.Dataset{Name: "rest", Dim: ds.Dim, Metric: ds.Metric, Queries: ds.Queries}
	pos := make(map[vector.ID]vector.ID, len(keep))
	for j, i := range keep {
		rest.Base = append(rest.Base, ds.Base[i])
		pos[vector.ID(i)] = vector.ID(j)
	}
	truth, err := recall.GroundTruth(ctx, rest, 10)
	if err != nil {
		b.Fatal(err)
	}
	fresh := buildBench(b, rest)
	var perDelete time.Duration
	var ix *hnsw.Index
	for b.Loop() {
		ix = buildBench(b, ds)
		start := time.Now()
		if untrack {
			ids := make([]vector.ID, len(gone))
			for j, i := range gone {
				ids[j] = vector.ID(i)
			}
			if err := ix.Untrack(ctx, ids); err != nil {
				b.Fatal(err)
			}
		} else {
			for _, i := range gone {
				if err := ix.Delete(ctx, vector.ID(i)); err != nil {
					b.Fatal(err)
				}
			}
		}
		perDelete = time.Since(start) / time.Duration(len(gone))
	}
	if err := ix.Verify(); err != nil {
		b.Fatal(err)
	}
	for _, ef := range []int{16, hnsw.DefaultEfSearch} {
		var after, want float64
		for qi, q := range ds.Queries {
			got, err := ix.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: ef})
			if err != nil {
				b.Fatal(err)
			}
			for i := range got {
				got[i].ID = pos[got[i].ID]
			}
			after += recall.At(got, truth[qi], 10)
			got, err = fresh.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: ef})
			if err != nil {
				b.Fatal(err)
			}
			want += recall.At(got, truth[qi], 10)
		}
		nq := float64(len(ds.Queries))
		b.ReportMetric(after/nq, fmt.Sprintf("recall@10-ef%d-after", ef))
		b.ReportMetric(want/nq, fmt.Sprintf("recall@10-ef%d-fresh", ef))
	}
	b.ReportMetric(float64(perDelete.Nanoseconds()), "ns/delete")
}
