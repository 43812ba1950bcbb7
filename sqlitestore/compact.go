package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// Compact rewrites the database without its free pages (SQLite's VACUUM),
// once the writes already queued have committed; writes wait while it
// runs. It is safe against a crash: VACUUM is one transaction, so after a
// crash the file is either as it was or compacted. It needs free disk
// space about the size of the database. The file itself shrinks once
// the write-ahead log is checkpointed, at the latest by [DB.Close].
func (db *DB) Compact(ctx context.Context) error {
	err := db.withWriteConn(func(conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, "VACUUM")
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: compact: %w", err)
	}
	return nil
}
