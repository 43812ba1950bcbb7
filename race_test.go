//go:build race

package cairn

import "github.com/cairndb/cairn/internal/pace"

// raceEnabled says the tests run under the race detector, which makes an
// HNSW build some 30 times slower and SQLite (compiled from C to Go)
// slower still: tests whose point is not the index then run with the
// exact one only, and model tests whose point is not concurrency run
// fewer seeds (the plain run of test.sh runs them all).
const raceEnabled = true

// Under the race detector the background work of an Auto collection
// (its paced graph builds and calibrations) does not rest as long as it
// works (pace.Resting): a rest is a sleep, which gives the race detector
// nothing to check and doubled the time of the tests that wait for that
// work. It still runs on its own goroutines beside the queries and
// writes. Plain go test runs it paced.
func init() { pace.Resting = false }
