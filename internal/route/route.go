// Package route measures the ways an Auto collection with a recall target
// can search (the exact scan, the approximate scan and an HNSW graph) on
// this machine, and says which meets the target fastest; and it holds the
// rules around a measurement: when a scan that won is measured again, and
// how long to wait after one that failed. It holds no state of a
// collection: the root package keeps the verdicts, under its locks, and
// calls it.
package route

import (
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// Kind is a way to search: the root package maps it to its IndexKind.
type Kind uint8

const (
	Flat  Kind = iota // the exact scan
	QFlat             // the approximate (quantized) scan
	HNSW              // the graph
)

// String returns "flat", "qflat" or "hnsw".
func (k Kind) String() string {
	switch k {
	case Flat:
		return "flat"
	case QFlat:
		return "qflat"
	case HNSW:
		return "hnsw"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Verdict is what Choose decides: the kind of index that meets the target
// fastest, and that index (the graph given, or the scan built for the
// measurement).
type Verdict struct {
	Kind  Kind
	Index vector.Index
}

// NextLen returns the size at which a collection whose measurement at n
// items chose k is measured again: 2 × n for a scan, which the graph may
// beat as the collection grows; 0, never, once the graph has won.
func NextLen(k Kind, n int) int {
	if k == HNSW {
		return 0
	}
	return 2 * n
}
