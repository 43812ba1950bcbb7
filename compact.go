package cairn

import (
	"context"
	"fmt"
)

// Compact rewrites the cairn file at path without its free pages (SQLite's
// VACUUM), returning the space of deleted items to the file system. It is
// safe against a crash (the file is then either as it was or compacted),
// needs free disk space about the size of the file, and needs the file to
// itself: an error wraps [sqlitestore.ErrLocked] if another owner has it
// open, or if a reader does (see [sqlitestore.DB.Compact]: the file is then
// compacted but cannot shrink until the readers close), and
// [os.ErrNotExist] if there is no file. Only o.SQLite is used.
func Compact(ctx context.Context, path string, o *Options) error {
	sdb, err := openExisting(ctx, path, o, false)
	if err != nil {
		return fmt.Errorf("cairn: compact: %w", err)
	}
	err = sdb.Compact(ctx)
	if cerr := sdb.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cairn: compact: %w", err)
	}
	return nil
}
