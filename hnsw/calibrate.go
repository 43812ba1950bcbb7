// This file holds recall targets: an index given Options.TargetRecall
// measures its own recall on a sample of queries and searches with the
// smallest beam width that meets the target.

package hnsw

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/pace"
	"github.com/cairndb/cairn/internal/reservoir"
	"github.com/cairndb/cairn/vector"
)

const (
	// DefaultTargetK is the k of [Options.TargetRecall] when TargetK is 0.
	DefaultTargetK = 10
	// MinCalibrationLen is the smallest index that calibrates: below it a
	// query with a recall target is scored exactly, which at this size
	// costs about what a graph search does.
	MinCalibrationLen = 500
	// CalibrationQueries is the smallest sample a calibration aims for,
	// and the reservoir of recent queries the index keeps for it on large
	// indexes: with 10 neighbours a query, the standard error of a recall
	// near 0.95 is about 0.004 over this many distinct queries. After a
	// calibration on held-out vectors, in all or in part, the index checks
	// at each CalibrationQueries queries answered whether the reservoir's
	// distinct queries measure better ([Calibration.RecalibratesOn]), and
	// if so recalibrates on them.
	CalibrationQueries = reservoir.Min
	// MaxCalibrationQueries is the largest sample: smaller indexes, whose
	// exact neighbours cost less, keep a reservoir of up to this many
	// recent queries, as many as cost what CalibrationQueries do at
	// 100,000 × 768 (at 768-d, up to 20,000 vectors). Near 0.99 the recall rises so
	// slowly with ef that the error of 400 queries moves the ef chosen by a
	// tenth (MiniLM, 1,580 vectors: ef 37.9 ± 3.5 over ten samples of
	// 400, 37.7 ± 1.7 over samples of 500).
	MaxCalibrationQueries = reservoir.Max
	// MinRealQueries is how many distinct recent queries the index must
	// have kept before it calibrates on them alone rather than on held-out
	// vectors (with fewer, it measures on them topped up with held-out
	// vectors: [SourceMixed]). A query asked again counts once: 400 copies
	// of 50 queries measure no better than the 50 do (the standard error
	// of the recall is that of 50 queries, about 0.01 near 0.95), and
	// would pass for a sample of 400. Half the reservoir keeps the error
	// of a calibration on real queries within √2 of a full sample's.
	MinRealQueries = CalibrationQueries / 2
	// MinMixedQueries is how many distinct recent queries make a
	// calibration on held-out vectors alone worth redoing as one topped up
	// with them ([SourceMixed]). The held-out vectors' bias is systematic
	// (on Cohere 0.950 where real queries reached 0.970, which moved the
	// beam chosen for 0.99 from 16 to 25); the standard error of this
	// many real queries near 0.95 is about 0.01, half that, and the blend
	// weights them by it.
	MinMixedQueries = CalibrationQueries / 8
	// maxScoredShare is the share of the indexed vectors past which a
	// graph search (scoring that many nodes a query) is taken to cost more
	// than an exact scan, and the calibration chooses exact search.
	maxScoredShare = 0.5
	// efTolerance is how close, relative to the beam width chosen, the
	// calibration's bisection gets to the smallest beam that meets the
	// target: a step more than 5% took, for a beam about 2% narrower on
	// average.
	efTolerance = 0.02
)

// CalibrationSource says where the sample of a [Calibration] came from.
//
// It is a plain value.
type CalibrationSource string

const (
	// SourceQueries is a sample of the queries the index answered since its
	// previous calibration (unfiltered ones only).
	SourceQueries CalibrationSource = "queries"
	// SourceHeldOut is a sample of the indexed vectors, each searched for
	// as if it were not in the graph (the walk never steps on its node):
	// used until [MinMixedQueries] distinct real queries have been seen.
	SourceHeldOut CalibrationSource = "held-out"
	// SourceCaller is a sample passed to [Index.Calibrate].
	SourceCaller CalibrationSource = "caller"
	// SourceMixed is the distinct queries the index kept since its
	// previous calibration, fewer than [MinRealQueries], topped up with
	// held-out vectors to [CalibrationQueries]: the real queries count for
	// what they are worth, the held-out vectors steady the estimate. The
	// recall is the two groups' means weighted by how far each can be
	// trusted (see blend): the real queries' by their standard error, the
	// held-out vectors' by theirs and by how far their mean is from the
	// real one's beyond what both errors explain. It is replaced by a
	// calibration on real queries alone once the index has kept
	// MinRealQueries distinct ones.
	SourceMixed CalibrationSource = "queries+held-out"
)

// Calibration is the outcome of one measurement of an index's recall: what
// it aimed at, what it chose, what it measured. A snapshot value.
type Calibration struct {
	// Target and K are the recall@K aimed at ([Options.TargetRecall],
	// [Options.TargetK]).
	Target float64
	K      int
	// Ef is the beam width chosen, 0 when Exact: the smallest, to within
	// 2%, whose Recall reached Target and whose Recall less 1.645 StdErr
	// (a one-sided 95% bound) reached Target − [RecallSlack]. The second
	// condition matters only for a sample of few real queries: with
	// hundreds, StdErr is a few thousandths.
	Ef int
	// Exact reports that queries are scored exactly instead: the index is
	// smaller than [MinCalibrationLen], no beam width up to the index's
	// size reached Target, or the beam width that does makes each query
	// score half of the vectors or more, which costs more than scoring all
	// of them in order (Reason says which).
	Exact  bool
	Reason string
	// Recall is the recall@K measured at Ef on the sample (1 when Exact),
	// as an estimate of the recall of real queries, and StdErr its
	// standard error: from the spread of the sample's per-query recalls
	// (for SourceMixed, of the blend of its two groups). For SourceHeldOut
	// it is the error of the held-out vectors as a sample of all indexed
	// vectors, and says nothing of how far those are from real queries.
	Recall float64
	StdErr float64
	// Queries is the size of the sample (distinct vectors: a recorded
	// query asked more than once counts once), Source where it came from,
	// and RealQueries how many of them were recorded queries: all for
	// SourceQueries, some for SourceMixed, none for SourceHeldOut and
	// SourceCaller.
	Queries     int
	RealQueries int
	Source      CalibrationSource
	// Len is the number of indexed vectors when the calibration ran, and
	// Took how long it took (exact neighbours of the sample included).
	Len  int
	Took time.Duration
}

// calibrator is the recall-target state of an Index.
type calibrator struct {
	cur atomic.Pointer[Calibration]
	// queries is the reservoir of recent unfiltered queries, restarted
	// by each calibration and sized by it for the index.
	queries reservoir.Reservoir
	mu      sync.Mutex // guards running, deletes, done
	running bool
	deletes int           // nodes deleted since the last calibration
	done    chan struct{} // closed when the running calibration ends
	// graph and exact count the searches under the target by the way
	// they went (TargetSearches).
	graph, exact atomic.Int64
}

// TargetSearches counts the searches an index with a recall target has
// answered under it (those given no [SearchOptions.Ef]) since it was
// created or loaded, by the way each went: Graph searched with the
// calibrated beam width (or EfSearch before the first calibration), Exact
// scored every vector. A snapshot value.
type TargetSearches struct {
	Graph, Exact int64
}

// TargetSearches returns how many searches under the recall target went
// each way: the evidence of which route real queries took, beside
// [Index.Calibration], which says which one they should take. It costs two
// atomic loads.
func (ix *Index) TargetSearches() TargetSearches {
	return TargetSearches{Graph: ix.cal.graph.Load(), Exact: ix.cal.exact.Load()}
}

// recordQuery keeps q in the reservoir of recent queries, and
// each time another CalibrationQueries queries have come in, recalibrates
// on the reservoir if its distinct queries measure better than the
// current calibration's sample.
func (ix *Index) recordQuery(q []float32) {
	if c := ix.cal.queries.Add(q); c > CalibrationQueries && c%CalibrationQueries == 1 {
		ix.recalibrateOnQueries()
	}
}

// RecordQueries keeps qs in the reservoir of recent queries that
// calibrations measure on, as if the index had answered them (unfiltered,
// under its target): for queries answered another way, such as by an exact
// scan that served them before this index was built. The next calibration
// without a caller's sample then measures on them, or on them topped up
// with held-out vectors (see [SourceMixed]), as it would on queries the
// index answered. It returns an error wrapping [vector.ErrInvalidOptions]
// if the index has no TargetRecall, and the errors of [vector.Check] for a
// bad query (the queries before it are kept). It waits for a calibration
// that is running to end. Safe to call beside queries and writes.
func (ix *Index) RecordQueries(qs []vector.Vector) error {
	if ix.opts.TargetRecall == 0 {
		return fmt.Errorf("hnsw: record queries: %w: the index has no TargetRecall", vector.ErrInvalidOptions)
	}
	// A running calibration would empty the reservoir partway (it takes
	// the sample when it starts): it is let finish first. The reservoir
	// then takes the size a calibration would give it now, so that the
	// next one, finding it sized, keeps these queries.
	_, _, _ = ix.WaitCalibration(context.Background()) // no error: the context never ends
	ix.cal.queries.Resize(reservoir.Size(ix.liveCount(), ix.dim))
	// The batch is kept whole before the reservoir is looked at: a
	// recalibration started partway (as one query in CalibrationQueries
	// starts one) could take part of it, and the queries after would then
	// replace some of those it took.
	defer func() {
		if ix.cal.queries.Seen() > CalibrationQueries {
			ix.recalibrateOnQueries()
		}
	}()
	for i, q := range qs {
		p, err := vector.Prepare(q, ix.dim, ix.metric)
		if err != nil {
			return fmt.Errorf("hnsw: record queries: query %d: %w", i, err)
		}
		ix.cal.queries.Add(p)
	}
	return nil
}

// Calibration returns the index's latest calibration, and false if it has
// none (no TargetRecall, or none has finished yet).
func (ix *Index) Calibration() (Calibration, bool) {
	if c := ix.cal.cur.Load(); c != nil {
		return *c, true
	}
	return Calibration{}, false
}

// targetEf returns the beam width a query for k results uses under the
// recall target, and whether it must be scored exactly instead. Before the
// first calibration, a small index is scored exactly and a larger one
// searched with EfSearch. For k above the calibrated K the beam grows in
// proportion, k·Ef/K: recall@k at a fixed beam falls as k grows, and the
// beam needed grows about linearly with it.
func (ix *Index) targetEf(k int) (ef int, exact bool) {
	defer func() {
		if exact {
			ix.cal.exact.Add(1)
		} else {
			ix.cal.graph.Add(1)
		}
	}()
	c := ix.cal.cur.Load()
	if c == nil {
		if ix.liveCount() < MinCalibrationLen {
			return 0, true
		}
		return max(k, ix.opts.EfSearch), false
	}
	if c.Exact {
		return 0, true
	}
	ef = c.Ef
	if k > c.K {
		ef = int(min(int64(MaxEf), (int64(c.Ef)*int64(k)+int64(c.K)-1)/int64(c.K)))
	}
	return max(ef, k), false
}

// noteChange starts a background calibration when the index has changed
// enough since the last one: it has doubled or halved, lost a quarter of
// its nodes to deletes, or reached [MinCalibrationLen] for the first time.
func (ix *Index) noteChange(deleted int) {
	if ix.opts.TargetRecall == 0 {
		return
	}
	n := ix.liveCount()
	ix.cal.mu.Lock()
	defer ix.cal.mu.Unlock()
	ix.cal.deletes += deleted
	if ix.cal.running || n < MinCalibrationLen {
		return
	}
	if c := ix.cal.cur.Load(); c != nil && c.Len >= MinCalibrationLen &&
		n < 2*c.Len && 2*n > c.Len && 4*ix.cal.deletes < c.Len {
		return
	}
	ix.startCalibrationLocked()
}

// RecalibratesOn reports whether a reservoir of distinct recent queries
// measures better than the sample c was measured on, so that an index
// holding them recalibrates (it checks every [CalibrationQueries] queries
// answered):
//   - after a calibration on held-out vectors alone, from
//     [MinMixedQueries] queries;
//   - after one topped up with held-out vectors, from [MinRealQueries];
//   - after one on queries, from half again as many (a small index keeps
//     up to [MaxCalibrationQueries]: the error falls by a fifth);
//   - never after one on a caller's sample.
//
// A query asked again counts once, so that a few queries asked again and
// again do not start a calibration at each reservoir's worth of them.
func (c Calibration) RecalibratesOn(distinct int) bool {
	switch c.Source {
	case SourceQueries:
		return 2*distinct >= 3*c.Queries
	case SourceHeldOut:
		return distinct >= MinMixedQueries
	case SourceMixed:
		return distinct >= MinRealQueries
	}
	return false
}

// recalibrateOnQueries starts a background calibration if the reservoir
// of recent queries measures better than the current calibration's sample
// ([Calibration.RecalibratesOn]).
func (ix *Index) recalibrateOnQueries() {
	c := ix.cal.cur.Load()
	if c == nil || !c.RecalibratesOn(int(ix.cal.queries.Size())) {
		return // nothing could measure better: no need to count
	}
	ix.cal.mu.Lock()
	defer ix.cal.mu.Unlock()
	if !ix.cal.running && c.RecalibratesOn(ix.cal.queries.Distinct()) {
		ix.startCalibrationLocked()
	}
}

// startCalibrationLocked starts a background calibration; cal.mu is held
// and none is running.
func (ix *Index) startCalibrationLocked() {
	ix.cal.running = true
	ix.cal.done = make(chan struct{})
	go func() {
		_, _ = ix.calibrate(context.Background(), nil, true)
	}()
}

// WaitCalibration waits until no calibration of the index is running (the
// one its growth, a load or a call started), then returns the latest as
// [Index.Calibration] does. It returns ctx's error if ctx ends first. Safe
// to call beside queries and writes.
func (ix *Index) WaitCalibration(ctx context.Context) (Calibration, bool, error) {
	ix.cal.mu.Lock()
	running, done := ix.cal.running, ix.cal.done
	ix.cal.mu.Unlock()
	if running {
		select {
		case <-done:
		case <-ctx.Done():
			return Calibration{}, false, fmt.Errorf("hnsw: wait for calibration: %w", ctx.Err())
		}
	}
	c, ok := ix.Calibration()
	return c, ok, nil
}

// Calibrate measures the index's recall@[Options.TargetK] now and chooses
// the beam width its queries use from then on, as the background
// calibration does when the index has grown or shrunk enough. queries, if
// not empty, is the sample to measure with (queries like the real ones
// give the truest estimate); otherwise the index uses the recent queries it
// has seen, or held-out vectors when it has seen too few. It returns an
// error wrapping [vector.ErrInvalidOptions] if the index has no
// TargetRecall, the validation errors of [vector.Check] for a bad query,
// and ctx's error if ctx ends first (the previous calibration then stays).
//
// Calibrate runs beside queries and writes; it costs one exact scan of the
// index for the whole sample, plus a few hundred searches per beam width
// tried (about a dozen).
func (ix *Index) Calibrate(ctx context.Context, queries []vector.Vector) (Calibration, error) {
	return ix.calibrateNow(ctx, queries, false)
}

// calibrateNow is Calibrate, paced or not.
func (ix *Index) calibrateNow(ctx context.Context, queries []vector.Vector, paced bool) (Calibration, error) {
	if ix.opts.TargetRecall == 0 {
		return Calibration{}, fmt.Errorf("hnsw: calibrate: %w: the index has no TargetRecall", vector.ErrInvalidOptions)
	}
	prepared := make([][]float32, len(queries))
	for i, q := range queries {
		p, err := vector.Prepare(q, ix.dim, ix.metric)
		if err != nil {
			return Calibration{}, fmt.Errorf("hnsw: calibrate: query %d: %w", i, err)
		}
		prepared[i] = p
	}
	for {
		ix.cal.mu.Lock()
		if !ix.cal.running {
			ix.cal.running = true
			ix.cal.done = make(chan struct{})
			ix.cal.mu.Unlock()
			break
		}
		done := ix.cal.done
		ix.cal.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return Calibration{}, fmt.Errorf("hnsw: calibrate: %w", ctx.Err())
		}
	}
	return ix.calibrate(ctx, prepared, paced)
}

// calibrate runs one calibration; the caller has set cal.running. queries
// are prepared vectors, or nil for the recorded or held-out sample. paced
// calibrations (the background ones) rest as long as they work, so that
// they take at most about half of one core from the queries beside them.
func (ix *Index) calibrate(ctx context.Context, queries [][]float32, paced bool) (Calibration, error) {
	start := time.Now()
	ix.cal.mu.Lock()
	deletes := ix.cal.deletes // those after it count towards the next one
	ix.cal.mu.Unlock()
	defer func() {
		ix.cal.mu.Lock()
		ix.cal.running = false
		close(ix.cal.done)
		ix.cal.mu.Unlock()
		// The index may have changed enough while this one ran.
		ix.noteChange(0)
		// A reservoir of real queries may have come in during this
		// calibration, when recordQuery could not start another: start it
		// now if it measures better.
		if ix.cal.queries.Seen() > CalibrationQueries {
			ix.recalibrateOnQueries()
		}
	}()
	k := ix.opts.TargetK
	c := Calibration{Target: ix.opts.TargetRecall, K: k, Len: ix.liveCount()}
	src := SourceCaller
	var self []heldOut // for held-out queries: the id each one is
	if len(queries) == 0 {
		queries, self, src = ix.calibrationSample()
	}
	c.Source, c.Queries = src, len(queries)
	switch src {
	case SourceQueries:
		c.RealQueries = len(queries)
	case SourceMixed:
		for _, h := range self {
			if !h.on {
				c.RealQueries++
			}
		}
	}
	finish := func() (Calibration, error) {
		c.Took = time.Since(start)
		ix.cal.mu.Lock()
		ix.cal.deletes = max(0, ix.cal.deletes-deletes) // a ReadFrom meanwhile reset it
		ix.cal.mu.Unlock()
		ix.cal.cur.Store(&c)
		return c, nil
	}
	if c.Len < MinCalibrationLen || len(queries) == 0 {
		c.Exact, c.Recall = true, 1
		c.Reason = fmt.Sprintf("%d vectors, fewer than %d", c.Len, MinCalibrationLen)
		return finish()
	}
	pacer := pace.New(paced)
	truth, univ, err := ix.exactNeighbours(ctx, queries, self, k, pacer)
	if err != nil {
		return Calibration{}, err
	}
	if calibrationTruthHook != nil {
		calibrationTruthHook()
	}
	// measure returns the recall at ef on the sample, and the share of
	// the index's vectors a query scored on average.
	measure := func(ef int) (e estimate, share float64, err error) {
		// The truth is over the vectors of the exact scan: if the index
		// has changed since, the searches are confined to them, or the
		// vectors added meanwhile would count as misses (beside a bulk
		// load, a calibration found no beam width good enough and chose
		// exact search).
		// Likewise the vectors deleted meanwhile leave the truth: no
		// search can find them.
		var only vector.Filter
		truth := truth
		if univ.changed(ix) {
			only, truth = univ, ix.stillIndexed(truth)
		}
		hits, total, nodes := 0, 0, 0
		// Per query: in a mixed sample, the real queries' in recalls and
		// the held-out vectors' in heldRecalls; else all in recalls.
		var recalls, heldRecalls []float64
		for i, q := range queries {
			if err := ctx.Err(); err != nil {
				return estimate{}, 0, fmt.Errorf("hnsw: calibrate: %w", err)
			}
			var got []vector.Result
			var n int
			held := self != nil && self[i].on
			if held {
				got, n = ix.searchPrepared(q, k, max(ef, k), self[i].id, true, only)
			} else {
				got, n = ix.searchPrepared(q, k, max(ef, k), 0, false, only)
			}
			nodes += n
			pacer.Rest()
			if len(truth[i]) == 0 {
				continue
			}
			h := 0
			for _, r := range got {
				if slices.Contains(truth[i], r.ID) {
					h++
				}
			}
			hits += h
			total += len(truth[i])
			r := float64(h) / float64(len(truth[i]))
			if held && src == SourceMixed {
				heldRecalls = append(heldRecalls, r)
			} else {
				recalls = append(recalls, r)
			}
		}
		share = float64(nodes) / float64(len(queries)) / float64(max(1, ix.liveCount()))
		if total == 0 {
			return estimate{recall: 1}, share, nil
		}
		if src == SourceMixed {
			return blend(recalls, heldRecalls, k), share, nil
		}
		// The share of hits, as a ratio of integers: a sum of per-query
		// recalls in tenths can fall short of a target it meets exactly.
		e = sampleEstimate(recalls, k)
		e.recall = float64(hits) / float64(total)
		return e, share, nil
	}
	// A walk that scores maxScoredShare of the vectors a query costs more
	// than scoring every vector in order (each of its steps is a random
	// read and a heap operation; the scan's are neither), so no beam width
	// that needs it pays.
	exact := func(format string, args ...any) (Calibration, error) {
		c.Exact, c.Recall, c.Reason = true, 1, fmt.Sprintf(format, args...)
		return finish()
	}
	// Double the beam until it reaches the target, then bisect between
	// the last miss and the hit for the smallest beam that does, to within
	// efTolerance (a beam a few percent wider costs a few percent more, and
	// each step of the bisection costs a few hundred searches).
	limit := max(k, min(MaxEf, c.Len))
	lo, hi := k-1, k // lo does not meet the target (lo = k-1 stands for "none"), hi is tested
	var hiEst estimate
	var hiShare float64
	for {
		e, share, err := measure(hi)
		if err != nil {
			return Calibration{}, err
		}
		if e.meets(c.Target) {
			hiEst, hiShare = e, share
			break
		}
		if hi >= limit {
			return exact("recall@%d %.4f ± %.4f at ef %d, short of the target %.4f", k, e.recall, e.stdErr, hi, c.Target)
		}
		if share >= maxScoredShare {
			return exact("recall@%d %.4f ± %.4f at ef %d, short of the target %.4f, with each query already scoring %.0f%% of the vectors: an exact scan costs less",
				k, e.recall, e.stdErr, hi, c.Target, 100*share)
		}
		lo, hi = hi, min(2*hi, limit)
	}
	for hi-lo > max(1, int(float64(hi)*efTolerance)) {
		mid := lo + (hi-lo)/2
		e, share, err := measure(mid)
		if err != nil {
			return Calibration{}, err
		}
		if e.meets(c.Target) {
			hi, hiEst, hiShare = mid, e, share
		} else {
			lo = mid
		}
	}
	if hiShare >= maxScoredShare {
		return exact("the target needs ef %d, where each query scores %.0f%% of the vectors: an exact scan costs less",
			hi, 100*hiShare)
	}
	c.Ef, c.Recall, c.StdErr = hi, hiEst.recall, hiEst.stdErr
	return finish()
}

// heldOut says whether a calibration query is an indexed vector, and
// which: its node is walked around and left out of its truth.
type heldOut struct {
	id vector.ID
	on bool
}

// calibrationSample returns the queries a calibration without a caller's
// sample measures with: the distinct recorded recent queries if there are
// at least MinRealQueries; else those there are, topped up to
// CalibrationQueries with indexed vectors drawn at random, each marked
// held out so that it is left out of its own results.
func (ix *Index) calibrationSample() ([][]float32, []heldOut, CalibrationSource) {
	// Queries from now on refill the reservoir, and a full one
	// recalibrates if this calibration is not on real queries alone
	// (recordQuery). The reservoir is sized for the index as it is now.
	qs := ix.cal.queries.Restart(reservoir.Size(ix.liveCount(), ix.dim))
	if len(qs) >= MinRealQueries {
		return qs, nil, SourceQueries
	}
	// Held-out vectors make (or top the real queries up to) a sample of
	// CalibrationQueries, however small the index: they are a proxy whose
	// bias is larger than the error of that many (on Cohere 0.950 where
	// real queries reached 0.970), so more of them would buy nothing.
	want := CalibrationQueries
	self := make([]heldOut, len(qs), want)
	real := len(qs)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	next := ix.next
	r := rand.New(rand.NewPCG(ix.opts.Seed, uint64(next)))
	drawn := map[vector.ID]bool{}
	for tries := 0; len(qs) < want && tries < 4*want && next > 0; tries++ {
		s := node(r.Uint64N(uint64(next)))
		if !ix.indexed(s) || drawn[ix.idOf(s)] {
			continue
		}
		drawn[ix.idOf(s)] = true
		qs = append(qs, slices.Clone(ix.vec(s)))
		self = append(self, heldOut{ix.idOf(s), true})
	}
	if real > 0 {
		return qs, self, SourceMixed
	}
	return qs, self, SourceHeldOut
}

// indexed reports whether slot s holds a live node: its vector recorded
// (by ReadFrom, or by an insert, which links it soon after) and not
// deleted. It reads what is written under idMu, which is held, and not the
// level, which a running insert writes without it.
func (ix *Index) indexed(s node) bool {
	return ix.hasVec(s) && !ix.isTomb(s)
}

// calibrationTruthHook, if set (by tests), runs between a calibration's
// exact scan and its first measurement.
var calibrationTruthHook func()

// universe is the set of vectors a calibration's exact scan scored, sorted,
// and the index's slot count, size and tombstones when the scan began: the
// measurements search within it once the index has changed (a vector
// added during the calibration is not in the truth). A [vector.Filter].
type universe struct {
	ids        []vector.ID
	next       node
	live, tomb int
}

// Allow reports whether id was scored by the exact scan.
func (u *universe) Allow(id vector.ID) bool {
	_, ok := slices.BinarySearch(u.ids, id)
	return ok
}

// changed reports whether ix has gained or lost a node since the scan
// began.
func (u *universe) changed(ix *Index) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	return ix.next != u.next || ix.live != u.live || len(ix.tombs) != u.tomb
}

// stillIndexed returns truth less the ids the index no longer holds.
func (ix *Index) stillIndexed(truth [][]vector.ID) [][]vector.ID {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	out := make([][]vector.ID, len(truth))
	for i, ids := range truth {
		out[i] = make([]vector.ID, 0, len(ids))
		for _, id := range ids {
			if _, ok := ix.idGet(id); ok {
				out[i] = append(out[i], id)
			}
		}
	}
	return out
}

// exactNeighbours returns the ids of the k indexed vectors nearest to each
// query (leaving out self[i].id for query i when self is given and
// self[i].on), by scoring
// every node, and the universe of the vectors it scored. It holds the
// index's read lock one page of slots at a time, so deletes wait at most
// for one page.
func (ix *Index) exactNeighbours(ctx context.Context, queries [][]float32, self []heldOut, k int, pacer *pace.Pacer) ([][]vector.ID, *universe, error) {
	tops := make([]*vector.TopK, len(queries))
	for i := range tops {
		tops[i] = vector.NewTopK(k)
	}
	univ := &universe{}
	ix.mu.RLock()
	ix.idMu.Lock()
	univ.next, univ.live, univ.tomb = ix.next, ix.live, len(ix.tombs)
	ix.idMu.Unlock()
	ix.mu.RUnlock()
	var ids []vector.ID
	var vs [][]float32
	for first := node(0); ; first += pageSize {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("hnsw: calibrate: %w", err)
		}
		ix.mu.RLock()
		// The page's vectors are gathered under idMu, which inserts
		// take, and scored without it.
		ix.idMu.Lock()
		next := ix.next
		if first >= next {
			ix.idMu.Unlock()
			ix.mu.RUnlock()
			break
		}
		ids, vs = ids[:0], vs[:0]
		for s := first; s < min(first+pageSize, next); s++ {
			if ix.indexed(s) {
				ids, vs = append(ids, ix.idOf(s)), append(vs, ix.vec(s))
			}
		}
		ix.idMu.Unlock()
		for j, v := range vs {
			id := ids[j]
			univ.ids = append(univ.ids, id)
			for i, q := range queries {
				if self != nil && self[i].on && self[i].id == id {
					continue
				}
				tops[i].Push(id, ix.dist(q, v))
			}
		}
		ix.mu.RUnlock()
		pacer.Rest()
	}
	out := make([][]vector.ID, len(queries))
	for i, t := range tops {
		for _, r := range t.Results() {
			out[i] = append(out[i], r.ID)
		}
	}
	slices.Sort(univ.ids)
	return out, univ, nil
}

// validateTarget adds the problems of the recall-target fields of o to bad.
func (o *Options) validateTarget(bad func(format string, args ...any)) {
	if math.IsNaN(o.TargetRecall) || o.TargetRecall < 0 || o.TargetRecall > 1 {
		bad("TargetRecall = %v, want in (0, 1], or 0 for none", o.TargetRecall)
	}
	if o.TargetK < 0 || o.TargetK > MaxEf {
		bad("TargetK = %d, want 0..%d", o.TargetK, MaxEf)
	}
	if o.TargetRecall != 0 && o.EfSearch != 0 {
		bad("EfSearch = %d with TargetRecall = %v: the target chooses the beam width; set one of them", o.EfSearch, o.TargetRecall)
	}
}
