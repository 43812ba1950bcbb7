//go:build !race

package cairn

// raceEnabled says the tests run without the race detector (see
// race_test.go).
const raceEnabled = false
