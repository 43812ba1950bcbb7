package sqlitestore

// This file checks, at Open, that each collection's key index agrees with
// its table. A copy of a file taken while it was being written (cp of a
// live database, a snapshot of a disk without its write-ahead log) can mix
// pages of different moments: SQLite reads such a file without complaint,
// but a key index that lacks rows lets a duplicate key in and one that
// holds stale rows keeps a deleted key taken. Only [DB.Backup] makes a safe
// copy of an open database.

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// keyDigestMod keeps each term of the digest's sum small, so that the sum
// never overflows SQLite's 64-bit integers.
const keyDigestMod = 1000003

// keyDigest summarises the rows that have a key: how many, a sum over
// their ids and the total length of their keys. The table and the key
// index must give the same digest.
type keyDigest struct {
	rows, ids, bytes int64
}

// add counts a row of id whose key is keyLen bytes long.
func (d *keyDigest) add(id, keyLen int64) {
	d.rows++
	d.ids += id % keyDigestMod
	d.bytes += keyLen
}

// loadQuery is the query load streams the table with: the key's length
// comes along at little cost, for the digest.
func (c *Collection) loadQuery() string {
	return "SELECT id, vec, length(CAST(key AS BLOB)) FROM " + c.table + c.whereScope()
}

// checkKeyIndex compares the digest of the table, taken while loading, with
// that of the key index, read from the index alone (a covering scan, small
// beside the table). It returns an error wrapping [vector.ErrCorrupt] if
// they differ, without writing anything.
func (c *Collection) checkKeyIndex(ctx context.Context, table keyDigest) error {
	var index keyDigest
	q := fmt.Sprintf("SELECT count(*), coalesce(sum(id %% %d), 0), coalesce(sum(length(CAST(key AS BLOB))), 0) FROM %s INDEXED BY %s_key WHERE %skey IS NOT NULL",
		keyDigestMod, c.table, c.table, c.scope())
	if err := c.db.conn.QueryRowContext(ctx, q).Scan(&index.rows, &index.ids, &index.bytes); err != nil {
		return fmt.Errorf("key index: %w", fileErr(scanErr(err)))
	}
	if index != table {
		return fmt.Errorf("%w: the key index disagrees with the table (%d keyed rows in the index, %d in the table): the file is damaged, as a copy taken while it was written is; copy open databases with Backup",
			vector.ErrCorrupt, index.rows, table.rows)
	}
	return nil
}
