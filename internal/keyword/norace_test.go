//go:build !race

// This file says the tests run without the race detector: the comparisons
// with FTS5 run in full (see race_test.go).
package keyword

const raceEnabled = false
