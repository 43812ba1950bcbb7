//go:build race

package main

// raceEnabled says the tests run under the race detector, which makes a
// graph build or a calibration some 20 times slower: TestTargetReport
// then calibrates on one split of the queries instead of three (the
// splits run one after another, through the same code), and test.sh runs
// it again without -race, with the three.
const raceEnabled = true
