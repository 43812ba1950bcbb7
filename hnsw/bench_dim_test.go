// This file holds the benchmarks of the graph at low dimension (100 and
// 384), where the work around the distance (visited set, heaps, reading
// links and vectors) weighs more than the distance itself.
package hnsw_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
)

// lowDims are the dimensions of BenchmarkBuildDim, BenchmarkSearchDim and
// the experiments: 100 and 384, or the comma-separated list in
// $HNSW_BENCH_DIMS (such as 768, to profile the build at high dimension).
var lowDims = benchDims()

func benchDims() []int {
	s := os.Getenv("HNSW_BENCH_DIMS")
	if s == "" {
		return []int{100, 384}
	}
	var dims []int
	for _, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			panic(fmt.Sprintf("HNSW_BENCH_DIMS=%q: want positive integers", s))
		}
		dims = append(dims, d)
	}
	return dims
}

// lowDimN is the base size of the low-dimensional benchmarks: 50,000, or
// $HNSW_BENCH_N.
func lowDimN(b *testing.B) int {
	if s := os.Getenv("HNSW_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("HNSW_BENCH_N=%q: want a positive integer", s)
		}
		return n
	}
	return 50000
}

// datasetDim is dataset for clustered data of any dimension.
func datasetDim(b *testing.B, n, dim int) (*recall.Dataset, [][]int32) {
	benchData.Lock()
	defer benchData.Unlock()
	key := fmt.Sprint("clustered", n, "d", dim)
	if ds, ok := benchData.ds[key]; ok {
		return ds, benchData.truth[key]
	}
	ds := recall.Clustered(n, 200, dim, 1)
	truth, err := recall.GroundTruth(context.Background(), ds, 10)
	if err != nil {
		b.Fatal(err)
	}
	benchData.ds[key], benchData.truth[key] = ds, truth
	return ds, truth
}

// BenchmarkBuildDim measures a bulk build (AddBatch, every core) of
// clustered data at low dimension, M=16, EfConstruction=200.
func BenchmarkBuildDim(b *testing.B) {
	for _, dim := range lowDims {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			ds, _ := datasetDim(b, lowDimN(b), dim)
			for b.Loop() {
				buildBench(b, ds)
			}
		})
	}
}

// BenchmarkSearchDim measures single queries at low dimension, reporting
// recall@10 and latency percentiles as BenchmarkSearch does.
func BenchmarkSearchDim(b *testing.B) {
	for _, dim := range lowDims {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			n := lowDimN(b)
			ds, truth := datasetDim(b, n, dim)
			ix := cachedBuild(b, ds)
			for _, ef := range []int{16, 64, 256} {
				b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
					searchLoop(b, ix, ds, truth, ef)
				})
			}
		})
	}
}

// BenchmarkLayout compares the two row layouts on the same graph: the
// graph of BenchmarkSearchDim, saved and loaded once with vectors inline
// and once with pointers to the store's vectors, queries alternating
// between them (see alternate); it reports pointer/inline, the time of the
// pointer layout over the inline one, and each one's median latency.
func BenchmarkLayout(b *testing.B) {
	dims := append(lowDims, 768)
	for _, dim := range dims {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			n := lowDimN(b)
			ds, _ := datasetDim(b, n, dim)
			alternateIndexes(b, ds, "pointer/inline", layoutPair(b, ds), nil)
		})
	}
}

// BenchmarkRowAlign compares rows rounded to 64 bytes with rows rounded
// to 16 (HNSW_BENCH_ALIGN uint32s, default 4) on the same graph (that of
// BenchmarkSearchDim, loaded twice), queries alternating between them,
// with float32 rows inline and, under HNSW_BENCH_QUANTIZE=int8, with int8
// rows; it reports the time of the shorter rows over the 64-byte ones,
// and each one's median latency.
func BenchmarkRowAlign(b *testing.B) {
	q := hnsw.QuantizeNone
	if os.Getenv("HNSW_BENCH_QUANTIZE") == "int8" {
		q = hnsw.QuantizeInt8
	}
	alt := 4
	if s := os.Getenv("HNSW_BENCH_ALIGN"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n&(n-1) != 0 {
			b.Fatalf("HNSW_BENCH_ALIGN=%q: want a power of two", s)
		}
		alt = n
	}
	for _, dim := range append(lowDims, 768) {
		b.Run(fmt.Sprintf("d=%d", dim), func(b *testing.B) {
			ds, _ := datasetDim(b, lowDimN(b), dim)
			built := cachedBuild(b, ds)
			var buf bytes.Buffer
			if _, err := built.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			load := func(align int) *hnsw.Index {
				oldA, oldD := hnsw.SetRowAlign(align), hnsw.SetInlineMaxDim(ds.Dim)
				defer hnsw.SetRowAlign(oldA)
				defer hnsw.SetInlineMaxDim(oldD)
				defer hnsw.SetUseSlots(hnsw.SetUseSlots(false))
				ix, err := hnsw.New(built.Store(), &hnsw.Options{Quantize: q})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
				return ix
			}
			alternateIndexes(b, ds, fmt.Sprintf("align%dB/align64B", 4*alt), [2]*hnsw.Index{load(16), load(alt)}, nil)
		})
	}
}

// alternateIndexes runs alternate on two indexes of ds at ef 16, 64 and
// 256, k = 10, and then, if not nil, then at each ef.
func alternateIndexes(b *testing.B, ds *recall.Dataset, ratio string, ixs [2]*hnsw.Index, then func(b *testing.B, ef int)) {
	for _, ef := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
			o := &hnsw.SearchOptions{Ef: ef}
			on := func(ix *hnsw.Index) func([]float32) error {
				return func(q []float32) error {
					_, err := ix.SearchWith(context.Background(), q, 10, o)
					return err
				}
			}
			alternate(b, ds, ef, ratio, [2]func([]float32) error{on(ixs[0]), on(ixs[1])})
			if then != nil {
				then(b, ef)
			}
		})
	}
}

// alternate runs the queries of ds at beam width ef on the two variants
// in alternating blocks of altBlock queries (each block the same queries
// on both, first on one and then on the other, the order alternating, so
// that noise from other work and warm caches fall on both alike), and reports the ratio of their total times, variant 1 over
// variant 0, under the name ratio, and the median latency of each. set
// selects a variant before its block.
func alternate(b *testing.B, ds *recall.Dataset, ef int, ratio string, search [2]func(q []float32) error) {
	var total [2]time.Duration
	lat := [2][]time.Duration{}
	i := 0
	for b.Loop() {
		// Which variant runs a block of queries first alternates too:
		// the second run of the same queries finds their nodes in cache,
		// which made the second variant look 15% faster at ef = 16
		// (d = 100, n = 50,000) when it always came second.
		v := (i/altBlock)%2 ^ (i/(2*altBlock))%2
		q := ds.Queries[(i/(2*altBlock)*altBlock+i%altBlock)%len(ds.Queries)]
		start := time.Now()
		if err := search[v](q); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		total[v] += d
		lat[v] = append(lat[v], d)
		i++
	}
	for v := range 2 {
		if len(lat[v]) == 0 {
			return
		}
		slices.Sort(lat[v])
		b.ReportMetric(float64(lat[v][len(lat[v])/2].Nanoseconds()), fmt.Sprintf("p50-ns-%d", v))
	}
	b.ReportMetric(float64(total[1])/float64(total[0]), ratio)
}

// altBlock is the number of queries alternate runs on one variant before
// switching.
const altBlock = 50

// layoutPair returns the graph of ds (built once per process) loaded with
// vectors inline and with pointers, in that order.
func layoutPair(b *testing.B, ds *recall.Dataset) [2]*hnsw.Index {
	benchData.Lock()
	ix, ok := benchData.ix[ds.Name+"/inline"]
	benchData.Unlock()
	if ok {
		return [2]*hnsw.Index{ix, benchData.ix[ds.Name+"/pointer"]}
	}
	inline, pointer := loadLayout(b, ds, ds.Dim, false), loadLayout(b, ds, 0, false)
	if !inline.Inline() || pointer.Inline() {
		b.Fatal("layouts not as asked")
	}
	benchData.Lock()
	defer benchData.Unlock()
	benchData.ix[ds.Name+"/inline"], benchData.ix[ds.Name+"/pointer"] = inline, pointer
	return [2]*hnsw.Index{inline, pointer}
}

// loadLayout returns the graph of ds (built once per process) loaded into
// a new index over the same store, with vectors inline up to dimension
// maxDim, and over the store's slots if slots is set.
func loadLayout(b *testing.B, ds *recall.Dataset, maxDim int, slots bool) *hnsw.Index {
	built := cachedBuild(b, ds)
	var buf bytes.Buffer
	if _, err := built.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	oldD, oldS := hnsw.SetInlineMaxDim(maxDim), hnsw.SetUseSlots(slots)
	defer hnsw.SetInlineMaxDim(oldD)
	defer hnsw.SetUseSlots(oldS)
	ix, err := hnsw.New(built.Store(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkExperiment alternates queries between two variants of the
// search (hnsw's experiment knob, 0 and 1) on one graph (of clustered
// 100-d and 768-d data, or of $HNSW_BENCH_SET) and reports the ratio of
// their times, variant 1 over variant 0.
func BenchmarkExperiment(b *testing.B) {
	for _, set := range walkSets(b, false) {
		b.Run(set.name, func(b *testing.B) {
			ds := set.ds
			ix := cachedBuild(b, ds)
			for _, ef := range []int{16, 64, 256} {
				b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
					defer hnsw.SetExperiment(0)
					o := &hnsw.SearchOptions{Ef: ef}
					on := func(v int) func([]float32) error {
						return func(q []float32) error {
							hnsw.SetExperiment(v)
							_, err := ix.SearchWith(context.Background(), q, 10, o)
							return err
						}
					}
					alternate(b, ds, ef, "v1/v0", [2]func([]float32) error{on(0), on(1)})
				})
			}
		})
	}
}

// BenchmarkBuildExperiment alternates builds between the two variants of
// hnsw's experiment knob (0 and 1) and reports the ratio of their times,
// variant 1 over variant 0, in wall time and in the process's CPU time
// (which other work on the machine disturbs less), and each variant's
// mean recall@10 at ef = 64. Run it with an even -benchtime, such as 6x.
func BenchmarkBuildExperiment(b *testing.B) {
	alternateBuilds(b, func(v int) { hnsw.SetExperiment(v) })
	hnsw.SetExperiment(0)
}

// BenchmarkBuildCodes alternates builds in one batch walking int8 codes
// (variant 1) and walking the float32 vectors (variant 0), as
// BenchmarkBuildExperiment reports them.
func BenchmarkBuildCodes(b *testing.B) {
	od, ob := hnsw.SetBuildCodes(1<<30, 0) // to read the defaults
	defer hnsw.SetBuildCodes(od, ob)
	alternateBuilds(b, func(v int) {
		if v == 1 {
			hnsw.SetBuildCodes(od, ob)
		} else {
			hnsw.SetBuildCodes(1<<30, ob)
		}
	})
}

// alternateBuilds builds each data set again and again, calling set(0)
// and set(1) before alternate builds, and reports the ratio of the two
// variants' wall and CPU times and their mean recall@10 at ef = 64. The
// sets are clustered ones of the dimensions lowDims, or the real set
// $HNSW_BENCH_SET names (as walkSets reads it).
func alternateBuilds(b *testing.B, set func(v int)) {
	var sets []walkSet
	if os.Getenv("HNSW_BENCH_SET") != "" {
		sets = walkSets(b, true)
	} else {
		for _, dim := range lowDims {
			ds, truth := datasetDim(b, lowDimN(b), dim)
			sets = append(sets, walkSet{fmt.Sprintf("d=%d", dim), ds, truth})
		}
	}
	for _, ws := range sets {
		b.Run(ws.name, func(b *testing.B) {
			ds, truth := ws.ds, ws.truth
			var total, cpu [2]time.Duration
			var rec [2]float64
			i := 0
			for b.Loop() {
				v := i % 2
				set(v)
				start, cpu0 := time.Now(), cpuTime(b)
				ix := buildBench(b, ds)
				total[v] += time.Since(start)
				cpu[v] += cpuTime(b) - cpu0
				rec[v] += buildRecall(b, ix, ds, truth)
				i++
			}
			if total[0] > 0 && total[1] > 0 {
				b.ReportMetric(float64(total[1])/float64(total[0]), "v1/v0")
				b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-v1/v0")
				n := float64(i / 2)
				b.ReportMetric(rec[0]/n, "recall-v0")
				b.ReportMetric(rec[1]/n, "recall-v1")
			}
		})
	}
}

// buildRecall returns the mean recall@10 of ix over the queries of ds at
// ef = 64: the graph quality of a build, for the build experiments.
func buildRecall(b *testing.B, ix *hnsw.Index, ds *recall.Dataset, truth [][]int32) float64 {
	o := &hnsw.SearchOptions{Ef: 64}
	var sum float64
	for qi, q := range ds.Queries {
		got, err := ix.SearchWith(context.Background(), q, 10, o)
		if err != nil {
			b.Fatal(err)
		}
		sum += recall.At(got, truth[qi], 10)
	}
	return sum / float64(len(ds.Queries))
}

// BenchmarkSlotted compares the layout over the store's slots (vectors
// found from the node's number, lists alone in the rows) with vectors
// inline, on the same graph (that of BenchmarkSearchDim, or of
// $HNSW_BENCH_SET), queries alternating between them; it reports
// slots/inline, the time of the first over the second, and each one's
// median latency.
func BenchmarkSlotted(b *testing.B) {
	for _, set := range walkSets(b, false) {
		b.Run(set.name, func(b *testing.B) {
			pair := layoutPair(b, set.ds)
			slotted := loadLayout(b, set.ds, set.ds.Dim, true)
			if !slotted.Slotted() {
				b.Fatal("layout not as asked")
			}
			alternateIndexes(b, set.ds, "slots/inline", [2]*hnsw.Index{pair[0], slotted}, nil)
		})
	}
}

// BenchmarkReachable builds each set of walkSets (clustered 100-d and
// 768-d, or $HNSW_BENCH_SET) without and with the pass that links the
// nodes no search can reach (connect.go), and reports how many such
// nodes each graph has, how long a Flush (a pass with nothing left to
// link) takes, and each graph's mean recall@10 at ef = 64.
func BenchmarkReachable(b *testing.B) {
	defer hnsw.SetConnect(hnsw.SetConnect(true))
	for _, set := range walkSets(b, true) {
		b.Run(set.name, func(b *testing.B) {
			for b.Loop() {
				for _, on := range []bool{false, true} {
					hnsw.SetConnect(on)
					ix := buildBench(b, set.ds)
					name := "off"
					if on {
						name = "on"
						start := time.Now()
						if err := ix.Flush(context.Background()); err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(time.Since(start).Microseconds()), "flush-µs")
					}
					b.ReportMetric(float64(ix.Unreachable()), "unreachable-"+name)
					b.ReportMetric(buildRecall(b, ix, set.ds, set.truth), "recall-"+name)
				}
			}
		})
	}
}
