//go:build !unix

package hnsw_test

import (
	"testing"
	"time"
)

// cpuTime is unknown here; the benchmarks' CPU ratios come out NaN.
func cpuTime(*testing.B) time.Duration { return 0 }
