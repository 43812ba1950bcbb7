package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/crashpoint"
	"github.com/cairndb/cairn/vector"
)

// indexChunk is the size of the rows a saved index is split into: large
// enough that a graph of a million nodes is a few hundred rows, small
// enough that no single value nears SQLite's 1 GB limit.
const indexChunk = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SaveIndex stores the bytes w writes (an index graph, say) under name,
// replacing any earlier save, with a CRC-32C checksum and the collection's
// change counter ([Collection.Changes]) read when the call starts. It is
// atomic: after a crash either the old save or the new one is there, whole.
//
// Call it when the index reflects every write committed so far, and with
// no write in flight that the index has not seen yet (hold your own write
// lock). A write committed while w runs makes the save stale, which
// [Collection.LoadIndex] reports, so a race costs a rebuild, never a wrong
// index. w writes into memory first, so it may take its own locks freely.
func (c *Collection) SaveIndex(ctx context.Context, name string, w io.WriterTo) error {
	if name == "" || strings.ContainsRune(name, tenantMark) {
		return fmt.Errorf("sqlitestore: save index %q: %w: empty, or holds U+001F", name, vector.ErrInvalidOptions)
	}
	key := c.indexKey(name)
	err := c.db.writable()
	if err == nil {
		err = c.closedErr()
	}
	if err != nil {
		return fmt.Errorf("sqlitestore: save index %q: %w", name, err)
	}
	changes := c.changes.Load()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return fmt.Errorf("sqlitestore: save index %q: %w", name, err)
	}
	data := buf.Bytes()
	sum := crc32.Checksum(data, castagnoli)
	err = c.db.withConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		if err := beginImmediate(ctx, conn); err != nil {
			return err
		}
		err := func() error {
			if _, err := conn.ExecContext(ctx, "DELETE FROM index_chunks WHERE coll = ? AND name = ?", c.id, key); err != nil {
				return err
			}
			if _, err := conn.ExecContext(ctx, "DELETE FROM index_blobs WHERE coll = ? AND name = ?", c.id, key); err != nil {
				return err
			}
			stmt, err := conn.PrepareContext(ctx, "INSERT INTO index_chunks (coll, name, seq, data) VALUES (?, ?, ?, ?)")
			if err != nil {
				return err
			}
			defer stmt.Close()
			n := 0
			for off := 0; off < len(data); off += indexChunk {
				if err := ctx.Err(); err != nil {
					return err
				}
				if _, err := stmt.ExecContext(ctx, c.id, key, n, data[off:min(off+indexChunk, len(data))]); err != nil {
					return err
				}
				n++
			}
			_, err = conn.ExecContext(ctx,
				"INSERT INTO index_blobs (coll, name, changes, size, crc, chunks, saved) VALUES (?, ?, ?, ?, ?, ?, ?)",
				c.id, key, int64(changes), len(data), int64(sum), n, time.Now().UnixMilli())
			if err != nil {
				return err
			}
			crashpoint.Hit(crashpoint.SaveIndex)
			err = commit(ctx, conn)
			return err
		}()
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return mapErr(err)
		}
		c.db.vacuumLocked(ctx, 0)
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: save index %q: %w", name, err)
	}
	return nil
}

// LoadIndex reads the index saved under name and hands its bytes to
// r.ReadFrom. It checks before calling r, and returns an error wrapping
//   - [vector.ErrNotFound] if nothing is saved under name,
//   - [ErrStaleIndex] if the items changed since the save,
//   - [vector.ErrCorrupt] if the bytes fail their checksum,
//
// in each of which cases the caller should rebuild the index from the
// store and save it again; the condition is also logged at Info or Warn
// level to [Options.Logger]. An error from r.ReadFrom is returned wrapped
// (and logged). Call it before writing to the collection.
func (c *Collection) LoadIndex(ctx context.Context, name string, r io.ReaderFrom) error {
	key := c.indexKey(name)
	var data []byte
	err := c.db.withConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		var changes, size, sum, chunks int64
		err := conn.QueryRowContext(ctx, "SELECT changes, size, crc, chunks FROM index_blobs WHERE coll = ? AND name = ?", c.id, key).
			Scan(&changes, &size, &sum, &chunks)
		err = scanErr(err)
		if errors.Is(err, sql.ErrNoRows) {
			return vector.ErrNotFound
		}
		if err != nil {
			return mapErr(err)
		}
		if now := c.changes.Load(); uint64(changes) != now {
			return fmt.Errorf("%w: saved at change %d, items at change %d", ErrStaleIndex, changes, now)
		}
		if size < 0 || size > 1<<40 {
			return fmt.Errorf("%w: size %d", vector.ErrCorrupt, size)
		}
		// What the chunks hold, before allocating for size: a damaged
		// size must not cost the memory it claims. SQLite reads a BLOB's
		// length from its row's header, without the BLOB.
		var held, stored int64
		err = conn.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(length(data)), 0) FROM index_chunks WHERE coll = ? AND name = ?", c.id, key).
			Scan(&held, &stored)
		if err = scanErr(err); err != nil {
			return mapErr(err)
		}
		if held != chunks || stored != size {
			return fmt.Errorf("%w: %d bytes in %d chunks, want %d in %d", vector.ErrCorrupt, stored, held, size, chunks)
		}
		rows, err := conn.QueryContext(ctx, "SELECT seq, data FROM index_chunks WHERE coll = ? AND name = ? ORDER BY seq", c.id, key)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		data = make([]byte, 0, size)
		var n int64
		for rows.Next() {
			var (
				seq   int64
				chunk sql.RawBytes
			)
			if err := rows.Scan(&seq, &chunk); err != nil {
				return scanErr(err)
			}
			if seq != n {
				return fmt.Errorf("%w: chunk %d where %d was expected", vector.ErrCorrupt, seq, n)
			}
			data = append(data, chunk...)
			n++
		}
		if err := rows.Err(); err != nil {
			return mapErr(err)
		}
		if n != chunks || int64(len(data)) != size {
			return fmt.Errorf("%w: %d bytes in %d chunks, want %d in %d", vector.ErrCorrupt, len(data), n, size, chunks)
		}
		if got := crc32.Checksum(data, castagnoli); got != uint32(sum) {
			return fmt.Errorf("%w: checksum %#08x, want %#08x", vector.ErrCorrupt, got, uint32(sum))
		}
		return nil
	})
	if err != nil {
		switch {
		case errors.Is(err, vector.ErrNotFound):
			c.db.log.Info("sqlitestore: no saved index; rebuild it", "collection", c.name, "index", name)
		case errors.Is(err, ErrStaleIndex), errors.Is(err, vector.ErrCorrupt):
			c.db.log.Warn("sqlitestore: saved index unusable; rebuild it", "collection", c.name, "index", name, "err", err)
		}
		return fmt.Errorf("sqlitestore: load index %q: %w", name, err)
	}
	if _, err := r.ReadFrom(bytes.NewReader(data)); err != nil {
		c.db.log.Warn("sqlitestore: saved index rejected by its reader; rebuild it", "collection", c.name, "index", name, "err", err)
		return fmt.Errorf("sqlitestore: load index %q: %w", name, err)
	}
	return nil
}

// DeleteIndex removes the index saved under name, or returns an error
// wrapping [vector.ErrNotFound].
func (c *Collection) DeleteIndex(ctx context.Context, name string) error {
	key := c.indexKey(name)
	err := c.db.withWriteConn(func(conn *sql.Conn) error {
		if c.dropped {
			return vector.ErrClosed
		}
		if err := beginImmediate(ctx, conn); err != nil {
			return err
		}
		res, err := conn.ExecContext(ctx, "DELETE FROM index_blobs WHERE coll = ? AND name = ?", c.id, key)
		if err == nil {
			_, err = conn.ExecContext(ctx, "DELETE FROM index_chunks WHERE coll = ? AND name = ?", c.id, key)
		}
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err == nil && n == 0 {
			err = vector.ErrNotFound
		}
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
			return mapErr(err)
		}
		err = commit(ctx, conn)
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: delete index %q: %w", name, err)
	}
	return nil
}
