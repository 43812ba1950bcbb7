//go:build race

package cairn_test

// raceEnabled says the tests run under the race detector, which makes an
// HNSW build some 30 times slower: tests whose point is not the index then
// run with the exact one only.
const raceEnabled = true
