package sqlitestore

// This file holds the write-ahead log's size policy and what the committer
// does when the disk is full.
//
// In WAL mode a page written by a commit lives in the log until a
// checkpoint copies it into the file, so a store briefly holds new pages
// twice. The log is checkpointed every walCheckpointPages pages and
// truncated to walSizeLimit once it restarts, so it holds at most about
// that much beyond the file. When a commit meets SQLITE_FULL, the
// committer runs a TRUNCATE checkpoint, which copies the log into the file
// and gives the log's whole size back to the file system; if that fails
// too (the file cannot grow by the log's new pages), every later group
// tries it again before it begins, so that once room is made the log is
// emptied before a retried write appends to it. The room a full store
// needs for a retry is therefore the log's new pages (at most
// walCheckpointPages pages, plus the last transaction) and the write
// itself; RELIABILITY.md gives the measured figure.

import (
	"context"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite/lib"
)

const (
	// walCheckpointPages is PRAGMA wal_autocheckpoint: a commit that
	// leaves the log at least this many pages long checkpoints it. 256
	// pages are 4 MiB at pageSize, a quarter of SQLite's default (1,000
	// pages, 16 MiB), which a full disk had to find room for before a
	// write could be retried.
	walCheckpointPages = 256
	// walSizeLimit is PRAGMA journal_size_limit, in bytes: the log is
	// truncated to it at the first commit after a checkpoint, so that it
	// keeps no more than that of the file system once a large
	// transaction has passed.
	walSizeLimit = walCheckpointPages * pageSize
)

// init's PRAGMAs of the write-ahead log's size.
var (
	walAutocheckpoint = fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", walCheckpointPages)
	walJournalLimit   = fmt.Sprintf("PRAGMA journal_size_limit=%d", walSizeLimit)
)

// isFull reports whether err is SQLite's SQLITE_FULL.
func isFull(err error) bool { return sqliteCode(err)&0xff == sqlite3.SQLITE_FULL }

// reclaimLocked runs a TRUNCATE checkpoint after a group failed on a full
// disk (cause), or before a group begins while an earlier one has not
// succeeded; it records in db.tx whether the log still needs one. The
// caller holds connMu, with no transaction open.
func (db *DB) reclaimLocked(ctx context.Context, cause error) {
	if cause != nil && !isFull(cause) {
		return
	}
	if cause == nil && !db.tx.reclaim {
		return
	}
	var busy, logged, done int64
	err := db.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done)
	if err == nil && busy != 0 {
		err = errors.New("checkpoint blocked")
	}
	was := db.tx.reclaim
	db.tx.reclaim = err != nil
	switch {
	case err != nil && !was:
		db.log.Warn("sqlitestore: the disk is full and the write-ahead log could not be checkpointed; the next write tries again",
			"path", db.path, "err", err)
	case err == nil && was:
		db.log.Info("sqlitestore: the write-ahead log was checkpointed after a full disk", "path", db.path)
	}
}
