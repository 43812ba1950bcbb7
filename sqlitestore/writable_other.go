//go:build !unix

package sqlitestore

// mayWrite reports whether this process may write the file at path and
// create files beside it; where that cannot be asked without opening the
// file, it answers yes.
func mayWrite(path string) bool { return true }

// mayCreateIn reports whether this process may create a file in the
// directory dir; here it answers yes.
func mayCreateIn(dir string) bool { return true }

// mayWriteFile reports whether this process may write the file at path;
// here it answers yes.
func mayWriteFile(path string) bool { return true }
