package hnsw

import (
	"context"
	"github.com/cairndb/cairn/vector/quant"
	"hash/crc32"

	"github.com/cairndb/cairn/vector"
)

// Crc32c exposes the checksum of the encoding to the fuzz test.
func Crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// SetFilterCrossover changes the constant that picks exact scoring of an
// allow-list, for the crossover benchmark and tests, and returns the old
// value.
func SetFilterCrossover(f float64) float64 {
	old := filterCrossover
	filterCrossover = f
	return old
}

// WaitIdle blocks until no background calibration is running.
func (ix *Index) WaitIdle() { _, _, _ = ix.WaitCalibration(context.Background()) }

// SetInlineMaxDim changes the highest dimension at which new indexes keep
// vectors inline, for the layout benchmarks and tests, and returns the old
// value.
func SetInlineMaxDim(d int) int {
	old := inlineMaxDim
	inlineMaxDim = d
	return old
}

// SetRowAlign changes the multiple that new indexes round their rows to,
// for the layout benchmark, and returns the old value.
func SetRowAlign(n int) int {
	old := rowAlign
	rowAlign = n
	return old
}

// Inline reports whether the index keeps its vectors inline.
func (ix *Index) Inline() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.inline
}

// SetExperiment selects a variant under measurement and returns the old one.
func SetExperiment(e int) int {
	old := experiment
	experiment = e
	return old
}

// SetRescoreStrict makes the int8 walk's rescoring stop by the strict
// error bound alone (true) or by the measured one (false, the default),
// and returns the old setting.
func SetRescoreStrict(on bool) bool {
	old := rescoreStrict
	rescoreStrict = on
	return old
}

// MeanRescored runs the int8 walk for each query of qs (k results, beam
// ef) and returns the mean number of finalists it rescored exactly; 0 if
// the index walks no codes.
func (ix *Index) MeanRescored(qs []vector.Vector, k, ef int) float64 {
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	qz := ix.quant.q
	if qz == nil || len(qs) == 0 {
		return 0
	}
	qv := make([]float32, ix.dim)
	total := 0
	for _, q := range qs {
		if vector.PrepareInto(qv, q, ix.dim, ix.metric) != nil {
			continue
		}
		if _, ok := ix.walkCodes(sc, qz, qv, k, ef, nil, nil); ok {
			total += sc.rescored
		}
	}
	return float64(total) / float64(len(qs))
}

// walkCodes is the walk on the codes of qz, reporting false where the
// walk would score the vectors instead.
func (ix *Index) walkCodes(sc *scratch, qz *quant.Quantizer, qv []float32, k, ef int, filter vector.Filter, done <-chan struct{}) ([]vector.Result, bool) {
	if ix.quant.q != qz || !ix.prepareCodes(sc, qz, qv) {
		return nil, false
	}
	return ix.walk(sc, qv, k, ef, filter, done), true
}

// SetBuildCodes changes which batches walk on codes (the least dimension
// and batch size) and returns the old values.
func SetBuildCodes(minDim, minBatch int) (int, int) {
	od, ob := buildCodesMinDim, buildCodesMinBatch
	buildCodesMinDim, buildCodesMinBatch = minDim, minBatch
	return od, ob
}

// SetUseSlots makes new indexes use the slots of a store that has them
// (on) or ignore them, for the layout benchmarks and tests, and returns
// the old setting.
func SetUseSlots(on bool) bool {
	old := useSlots
	useSlots = on
	return old
}

// Slotted reports whether the index numbers its nodes by the store's slots.
func (ix *Index) Slotted() bool { return ix.slots != nil }

// SetConnect turns the pass that links unreachable nodes on or off and
// returns the old setting.
func SetConnect(on bool) bool {
	old := connectOn
	connectOn = on
	return old
}

// Unreachable returns the number of live nodes that no search from the
// entry point can reach.
func (ix *Index) Unreachable() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ep, _, ok := ix.entry()
	if !ok {
		return 0
	}
	r := ix.reachLocked(ep)
	n := 0
	for range r.cutOffs(ix) {
		n++
	}
	return n
}
