// Package crashpoint kills the process at named points of the write path,
// so that the crash-torture harness (cmd/torture) can crash a writer at
// moments a random kill rarely hits, such as between a commit and its
// acknowledgement.
//
// It does anything only in a build with the tag cairn_crashpoint, on Unix;
// otherwise [Hit] is an empty function that the compiler removes. In such a
// build, the environment variable named by [Env] selects a point and a
// count, "commit:25", and the 25th [Hit] of "commit" sends SIGKILL to the
// process itself.
package crashpoint

// Env is the environment variable that arms a crash point: "name:n".
const Env = "CAIRN_CRASHPOINT"

// The crash points of the write path.
const (
	// Commit is hit when a group commit's transaction has committed, before
	// any of its writers is answered.
	Commit = "commit"
	// SaveIndex is hit when a saved index's chunks are written, before the
	// transaction that holds them commits.
	SaveIndex = "save-index"
	// CompactVacuum is hit when Compact holds the write connection, before
	// its VACUUM begins.
	CompactVacuum = "compact-vacuum"
	// CompactVacuumed is hit when Compact's VACUUM has committed (the
	// rewritten pages are in the write-ahead log), before the checkpoint
	// that copies them into the file.
	CompactVacuumed = "compact-vacuumed"
	// CompactCopied is hit when Compact's checkpoint has copied the log
	// into the file and synced it, before the log is truncated.
	CompactCopied = "compact-copied"
)
