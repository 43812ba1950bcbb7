package hnsw

import (
	"context"

	"github.com/cairndb/cairn/vector"
)

// SetCalibrationTruthHook makes every calibration call f between its exact
// scan and its first measurement (nil for none), and returns the old hook.
func SetCalibrationTruthHook(f func()) func() {
	old := calibrationTruthHook
	calibrationTruthHook = f
	return old
}

// SearchAll is the index's exact search of a prepared query, for the tests
// that compare it with package flat.
func (ix *Index) SearchAll(ctx context.Context, q []float32, k int, filter vector.Filter) ([]vector.Result, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.searchAll(ctx, q, k, filter)
}

// ReservoirDistinct returns the number of distinct queries the reservoir
// holds as the index keeps count of them, and as distinct counts them.
func (ix *Index) ReservoirDistinct() (kept, counted int) {
	ix.cal.mu.Lock()
	defer ix.cal.mu.Unlock()
	return len(ix.cal.kept), len(distinct(ix.cal.sample))
}

// ReservoirLen returns how many queries the reservoir holds, copies
// included.
func (ix *Index) ReservoirLen() int {
	ix.cal.mu.Lock()
	defer ix.cal.mu.Unlock()
	return len(ix.cal.sample)
}
