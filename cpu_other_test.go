//go:build !unix

package cairn_test

// This file holds processCPU where there is no getrusage: benchmarks
// report no CPU ratio (NaN).

import "time"

// processCPU returns 0: the CPU time is not known here.
func processCPU() time.Duration { return 0 }
