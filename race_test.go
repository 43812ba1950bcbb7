//go:build race

package cairn

// raceEnabled says the tests run under the race detector, which makes an
// HNSW build some 30 times slower and SQLite (compiled from C to Go)
// slower still: tests whose point is not the index then run with the
// exact one only, and model tests whose point is not concurrency run
// fewer seeds (the plain run of test.sh runs them all).
const raceEnabled = true
