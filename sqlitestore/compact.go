package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cairndb/cairn/internal/crashpoint"
)

// Compact rewrites the database without its free pages (SQLite's VACUUM),
// once the writes already queued have committed; writes wait while it
// runs. It is safe against a crash: VACUUM is one transaction, so after a
// crash the file is either as it was or compacted. It needs free disk
// space about the size of the database, and the file to itself: the
// rewritten pages go to the write-ahead log, and the file shrinks only
// when a checkpoint copies them back, which a reader's snapshot of the
// file as it was (a read-only DB, in this process or another) prevents.
// Compact checkpoints at once; if a reader prevents it, it returns an
// error wrapping [ErrLocked]: the database is compacted, but the file and
// its log keep their size until the readers close and a writer
// checkpoints (a later Compact, or the Close of a writer).
func (db *DB) Compact(ctx context.Context) error {
	err := db.withWriteConn(func(conn *sql.Conn) error {
		crashpoint.Hit(crashpoint.CompactVacuum)
		if _, err := conn.ExecContext(ctx, "VACUUM"); err != nil {
			return mapErr(err)
		}
		crashpoint.Hit(crashpoint.CompactVacuumed)
		var busy, logged, done int64
		if crashpoint.Enabled {
			// A crash-point build copies the log first, so that the
			// torture can kill between the copy and the truncation, a
			// moment the one TRUNCATE checkpoint below also passes.
			if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(FULL)").Scan(&busy, &logged, &done); err != nil {
				return mapErr(err)
			}
			if busy == 0 && done == logged {
				crashpoint.Hit(crashpoint.CompactCopied)
			}
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil {
			return mapErr(err)
		}
		if busy != 0 || done < logged {
			return fmt.Errorf("%w: compacted, but readers hold the file as it was, so it cannot shrink until they close", ErrLocked)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: compact: %w", err)
	}
	return nil
}
