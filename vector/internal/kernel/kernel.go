// Package kernel holds cairn's distance kernels: a portable Go version of
// each, and native versions selected once at start-up by CPU feature. Only
// package vector may import it; everything else reaches the kernels through
// vector's exported functions.
//
// All functions assume equal lengths (len(rows) == len(q)*len(out) for the
// batch forms); the callers in package vector check.
package kernel

// The selected kernels. They are set once, in init, and never change after.
var (
	// Dot returns the inner product of a and b.
	Dot = DotGeneric
	// L2 returns the squared Euclidean distance between a and b.
	L2 = L2Generic
	// DotBatch writes the inner product of q with each row of rows into out.
	DotBatch = DotBatchGeneric
	// L2Batch writes the squared distance of q to each row of rows into out.
	L2Batch = L2BatchGeneric
	// Name names the selected kernel family.
	Name = "generic"
)
