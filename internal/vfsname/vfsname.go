// Package vfsname holds the name of the SQLite VFS that sqlitestore opens
// its files through: empty, SQLite's default, unless a test or the
// crash-torture harness (cmd/torture) registered a VFS of its own, such as
// internal/powerfail's recorder, and set it before the first Open.
package vfsname

// Name is the VFS of every connection sqlitestore opens from now on; ""
// for the default. Set it before opening, never concurrently with Open.
var Name string
