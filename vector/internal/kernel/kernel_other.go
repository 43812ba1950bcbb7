//go:build !amd64 || purego

package kernel

// nativeImpls is empty: without amd64 assembly (or under the purego build
// tag) only the portable kernels exist, and the dispatch variables keep
// their defaults.
func nativeImpls() []Impl { return nil }
