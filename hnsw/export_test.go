package hnsw

import "hash/crc32"

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

// WaitCalibration blocks until no background calibration is running.
func (ix *Index) WaitCalibration() { ix.waitCalibration() }

// SetInlineMaxDim changes the highest dimension at which new indexes keep
// vectors inline, for the layout benchmarks and tests, and returns the old
// value.
func SetInlineMaxDim(d int) int {
	old := inlineMaxDim
	inlineMaxDim = d
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
