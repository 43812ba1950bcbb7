// Package hnswseam holds what package hnsw offers the root package alone:
// package hnsw fills these in when it is initialised, so that they stay
// out of its public API. Each takes the index as a *hnsw.Index in an any
// (this package cannot import hnsw, which imports it).
package hnswseam

import "context"

var (
	// CalibratePaced calibrates the index as Index.Calibrate does with no
	// sample, at the pace of its background calibrations: it rests as
	// long as it works, taking about half of one core and twice as long.
	// Index.Calibration then returns what it chose.
	CalibratePaced func(ctx context.Context, ix any) error

	// SetBuild sets the Workers and Progress of the AddBatch and Track
	// calls that follow (workers 0 means runtime.GOMAXPROCS(0)): for an
	// index built in the background by one worker that rests in Progress
	// and then put to use. It must not be called beside writes; searches
	// and calibrations may go on.
	SetBuild func(ix any, workers int, progress func(done, total int))
)
