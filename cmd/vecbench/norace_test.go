//go:build !race

package main

// raceEnabled says the tests run without the race detector: every test
// runs in full (see race_test.go).
const raceEnabled = false
