//go:build race

package hnsw_test

import "github.com/cairndb/cairn/internal/pace"

// raceEnabled says the tests run under the race detector, which makes a
// graph build or a calibration some 20 times slower. The longest tests
// there (TestTargetRecallMet, TestRecordQueries) then run their first
// round alone: the later rounds run the same code again, one after the
// other, on other data, and check what is no question for the race
// detector. Plain go test (test.sh runs both) checks every round.
const raceEnabled = true

// Under the race detector the background calibrations do not rest as
// long as they work (pace.Resting): resting doubled the time of every
// test that waits for one (TestReservoirKeepsOneCopy 20 s, 7 s without),
// and a rest is a sleep, which gives the race detector nothing to check.
// They still run on their own goroutine beside the queries and writes.
// Plain go test runs them paced.
func init() { pace.Resting = false }
