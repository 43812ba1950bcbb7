//go:build race

package hnsw_test

// raceEnabled says the tests run under the race detector, which makes a
// graph build or a calibration some 20 times slower. The longest tests
// there (TestTargetRecallMet, TestRecordQueries) then run their first
// round alone: the later rounds run the same code again, one after the
// other, on other data, and check what is no question for the race
// detector. Plain go test (test.sh runs both) checks every round.
const raceEnabled = true
