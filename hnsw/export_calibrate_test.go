package hnsw

import (
	"context"

	"github.com/cairndb/cairn/internal/reservoir"
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
	return ix.cal.queries.Distinct(), len(reservoir.Distinct(ix.cal.queries.Sample()))
}

// ReservoirLen returns how many queries the reservoir holds, copies
// included.
func (ix *Index) ReservoirLen() int {
	return ix.cal.queries.Len()
}

// CalibratePaced is Calibrate at the pace of the background calibrations
// (what hnswseam.CalibratePaced runs), on a caller's sample.
func (ix *Index) CalibratePaced(ctx context.Context, queries []vector.Vector) (Calibration, error) {
	return ix.calibrateNow(ctx, queries, true)
}
