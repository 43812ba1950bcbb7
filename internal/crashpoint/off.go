//go:build !cairn_crashpoint || !unix

package crashpoint

// Enabled reports whether this build honours [Env].
const Enabled = false

// Hit does nothing: this build has no crash points.
func Hit(string) {}
