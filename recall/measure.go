package recall

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/vector"
)

// MemoryReporter is an optional capability of an index: its own account of
// the bytes it holds. [Build] prefers it to a heap measurement, and calls
// it from the goroutine that called Build.
type MemoryReporter interface {
	MemoryBytes() int64
}

// BuildStats is what [Build] measured: a plain value, safe to copy and to
// read from any goroutine.
type BuildStats struct {
	// N is the number of vectors added.
	N int
	// Time is the wall time of the adds.
	Time time.Duration
	// Bytes is the index's own report ([MemoryReporter]) if it has one,
	// else the growth of the live Go heap across the build (measured after
	// a garbage collection on each side), which includes the store's copy
	// of the vectors, as hnswlib's resident-memory figure does.
	Bytes int64
	// RSS is the growth of the process's resident memory across the build
	// (VmRSS, after returning freed memory to the OS on each side), as the
	// C++ peers' harnesses measure theirs; 0 where it cannot be read.
	RSS int64
}

// Build adds vs to idx under the ids 0..len(vs)-1 (positions, as ground
// truth expects) and measures the time and memory it takes. An index with
// [vector.BatchAdder] gets the vectors in batches (about fifty, so progress
// can be reported and ctx observed between them); otherwise one Add per
// vector. An index with a Flush(context.Context) error method is flushed
// at the end, within the time measured: an hnsw index drops there the
// codes its batches walked on, as its first search would. progress, if
// non-nil, is called with the number added so far. On error (ctx's
// included) the index holds a prefix of vs.
func Build(ctx context.Context, idx vector.Index, vs []vector.Vector, progress func(done, total int)) (BuildStats, error) {
	var before runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	rss0 := rss()
	n := len(vs)
	ids := make([]vector.ID, n)
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	start := time.Now()
	if ba, ok := idx.(vector.BatchAdder); ok {
		step := max(1000, (n+49)/50)
		for lo := 0; lo < n; lo += step {
			if err := ctx.Err(); err != nil {
				return BuildStats{}, fmt.Errorf("recall: build: %w", err)
			}
			hi := min(lo+step, n)
			if err := ba.AddBatch(ctx, ids[lo:hi], vs[lo:hi]); err != nil {
				return BuildStats{}, fmt.Errorf("recall: build: %w", err)
			}
			if progress != nil {
				progress(hi, n)
			}
		}
	} else {
		every := max(1, n/100)
		for i, v := range vs {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return BuildStats{}, fmt.Errorf("recall: build: %w", err)
				}
			}
			if err := idx.Add(ctx, ids[i], v); err != nil {
				return BuildStats{}, fmt.Errorf("recall: build: %w", err)
			}
			if progress != nil && ((i+1)%every == 0 || i+1 == n) {
				progress(i+1, n)
			}
		}
	}
	if f, ok := idx.(interface{ Flush(context.Context) error }); ok {
		// The index as it will serve queries: hnsw drops the codes its
		// batches walked on, which the first search would drop.
		if err := f.Flush(ctx); err != nil {
			return BuildStats{}, fmt.Errorf("recall: build: %w", err)
		}
	}
	st := BuildStats{N: n, Time: time.Since(start)}
	if r := rss(); r > 0 && rss0 > 0 {
		st.RSS = r - rss0
	}
	if mr, ok := idx.(MemoryReporter); ok {
		st.Bytes = mr.MemoryBytes()
	} else {
		var after runtime.MemStats
		settle()
		runtime.ReadMemStats(&after)
		st.Bytes = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	return st, nil
}

// rss returns the process's resident memory after the garbage is collected
// and freed memory returned to the OS, 0 if /proc/self/status cannot be
// read (outside Linux).
func rss() int64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// settle collects garbage until the heap holds only reachable objects. One
// collection is not enough: a sync.Pool inside an index that is no longer
// used keeps the whole index reachable (through the runtime's list of
// pools) until a second collection drops the pool's victim cache.
func settle() {
	runtime.GC()
	runtime.GC()
}

// SearchFunc is one k-nearest-neighbour query; [Measure] times it, and
// calls it from several goroutines at once in its throughput pass. Wrap a
// concrete index's own search to measure it with its knobs, for example an
// HNSW index at a given ef.
type SearchFunc func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error)

// MeasureOptions tune [Measure]. The zero value of each field means its
// default. Measure copies the options, so one value may serve concurrent
// calls (Search and Progress must then be safe for concurrent use).
type MeasureOptions struct {
	// K is the number of results asked of each query. Default 10.
	K int
	// Warmup is the number of queries run, untimed, before the timed pass.
	// Default 50 (as the C++ harnesses cairn is compared with); never more
	// than there are queries. Negative means none.
	Warmup int
	// Threads is the number of goroutines of the throughput pass. Default
	// runtime.GOMAXPROCS(0); negative skips the pass.
	Threads int
	// Recall100 asks for an extra, untimed pass at k = 100 when K is
	// smaller, to report recall@100.
	Recall100 bool
	// Search is the query to measure. Default: the index's Search with nil
	// options.
	Search SearchFunc
	// Progress, if non-nil, is called after each query of every pass with
	// the number done and the total over all passes.
	Progress func(done, total int)
}

// Latency summarises the wall times of single queries; a plain value.
type Latency struct {
	P50, P95, P99, Mean, Max time.Duration
}

// QueryStats is what [Measure] measured. Recall is a map: treat a
// QueryStats as read-only once returned, and it is safe to read from any
// goroutine.
type QueryStats struct {
	// Queries is the number of queries in each pass; K the results asked.
	Queries, K int
	// Recall maps k to the mean recall@k over the queries, for k = 1, K,
	// and 100 when measured (MeasureOptions.Recall100 or K >= 100). A k
	// deeper than the ground truth is left out, unless the truth holds the
	// whole (smaller) base.
	Recall map[int]float64
	// Latency is the distribution of one query at a time on one goroutine,
	// after the warm-up.
	Latency Latency
	// QPS is queries per second on one goroutine: Queries divided by the
	// sum of the single-query times.
	QPS float64
	// QPSParallel is queries per second with Threads goroutines taking
	// queries from a shared counter; 0 if the pass was skipped.
	QPSParallel float64
	// Threads is the number of goroutines of the parallel pass.
	Threads int
}

// Measure runs every query of ds against idx and reports recall against
// truth (from [GroundTruth]; row i belongs to query i), the latency of one
// query at a time on one goroutine after a warm-up, and throughput on one
// goroutine and on Threads. The ids idx returns must be positions in
// ds.Base, as [Build] adds them. It returns ctx's error if ctx is done,
// and the first search error otherwise.
func Measure(ctx context.Context, idx vector.Index, ds *Dataset, truth [][]int32, o *MeasureOptions) (QueryStats, error) {
	var opt MeasureOptions
	if o != nil {
		opt = *o
	}
	if opt.K == 0 {
		opt.K = 10
	}
	if opt.K < 0 {
		return QueryStats{}, fmt.Errorf("recall: measure: %w: K = %d", vector.ErrInvalidK, opt.K)
	}
	nq := len(ds.Queries)
	if len(truth) != nq {
		return QueryStats{}, fmt.Errorf("recall: measure: %w: %d ground-truth rows for %d queries", vector.ErrInvalidOptions, len(truth), nq)
	}
	if opt.Warmup == 0 {
		opt.Warmup = 50
	}
	opt.Warmup = min(max(opt.Warmup, 0), nq)
	if opt.Threads == 0 {
		opt.Threads = runtime.GOMAXPROCS(0)
	}
	search := opt.Search
	if search == nil {
		search = func(ctx context.Context, q vector.Vector, k int) ([]vector.Result, error) {
			return idx.Search(ctx, q, k, nil)
		}
	}
	depth := math.MaxInt
	for _, row := range truth {
		depth = min(depth, len(row))
	}
	// Truth shallower than k is complete when the base itself is smaller.
	deepEnough := func(k int) bool { return depth >= min(k, len(ds.Base)) }
	extra := opt.Recall100 && opt.K < 100 && deepEnough(100)
	total := opt.Warmup + nq
	if opt.Threads > 0 {
		total += nq
	}
	if extra {
		total += nq
	}
	done := 0
	tick := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	st := QueryStats{Queries: nq, K: opt.K, Recall: map[int]float64{}}
	if nq == 0 {
		return st, nil
	}

	for _, q := range ds.Queries[:opt.Warmup] {
		if _, err := search(ctx, q, opt.K); err != nil {
			return st, fmt.Errorf("recall: measure: warm-up: %w", err)
		}
		tick()
	}

	// The timed pass: one goroutine pinned to its thread, one query at a
	// time. Scoring happens after the clock stops.
	lat := make([]time.Duration, nq)
	var sum1, sumK float64
	runtime.LockOSThread()
	for i, q := range ds.Queries {
		t0 := time.Now()
		res, err := search(ctx, q, opt.K)
		lat[i] = time.Since(t0)
		if err != nil {
			runtime.UnlockOSThread()
			return st, fmt.Errorf("recall: measure: query %d: %w", i, err)
		}
		sum1 += At(res, truth[i], 1)
		sumK += At(res, truth[i], opt.K)
		tick()
	}
	runtime.UnlockOSThread()
	st.Recall[1] = sum1 / float64(nq)
	if deepEnough(opt.K) {
		st.Recall[opt.K] = sumK / float64(nq)
	}
	st.Latency = Summarise(lat)
	var busy time.Duration
	for _, d := range lat {
		busy += d
	}
	st.QPS = float64(nq) / busy.Seconds()

	if opt.Threads > 0 {
		st.Threads = opt.Threads
		qps, err := throughput(ctx, ds.Queries, opt.K, opt.Threads, search)
		if err != nil {
			return st, err
		}
		st.QPSParallel = qps
		// Progress is reported once for the whole pass, so that the
		// callback does not contend with the goroutines being timed.
		done += nq - 1
		tick()
	}

	if extra {
		var s float64
		for i, q := range ds.Queries {
			res, err := search(ctx, q, 100)
			if err != nil {
				return st, fmt.Errorf("recall: measure: query %d at k=100: %w", i, err)
			}
			s += At(res, truth[i], 100)
			tick()
		}
		st.Recall[100] = s / float64(nq)
	}
	return st, nil
}

// throughput runs every query once on threads goroutines that share a
// counter, and returns queries per second of wall time.
func throughput(ctx context.Context, qs []vector.Vector, k, threads int, search SearchFunc) (float64, error) {
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range threads {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(qs) {
					return
				}
				if _, err := search(ctx, qs[i], k); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("recall: measure: parallel query %d: %w", i, err) })
					next.Store(int64(len(qs)))
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(len(qs)) / elapsed.Seconds(), nil
}

// Summarise returns the percentiles of lat (not empty), indexed as the
// C++ harnesses cairn is compared with index them (the element at ⌊n·p⌋
// of the sorted times), so they report the same statistic.
func Summarise(lat []time.Duration) Latency {
	s := slices.Clone(lat)
	slices.Sort(s)
	n := len(s)
	at := func(p float64) time.Duration { return s[min(int(float64(n)*p), n-1)] }
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{P50: s[n/2], P95: at(0.95), P99: at(0.99), Mean: sum / time.Duration(n), Max: s[n-1]}
}
