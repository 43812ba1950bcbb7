//go:build race

// This file says the tests run under the race detector, which makes the
// FTS5 reference (C translated to Go) some 30 times slower: the tests that
// compare with it then take a sample, and plain go test runs them in full.
package keyword

const raceEnabled = true
