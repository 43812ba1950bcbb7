// Package sqlitetest holds test helpers that act on a cairn file as
// another SQLite program would.
package sqlitetest

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/vfsname"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// ForeignWriter opens a plain SQLite connection to the file at path, as
// another program (the sqlite3 shell, say) would, and takes SQLite's
// write lock on it (BEGIN IMMEDIATE). The caller ends the transaction
// (ROLLBACK) to let go; the connection is closed at the test's end.
func ForeignWriter(t testing.TB, path string) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // Windows drive letters
	}
	if vfsname.Name != "" {
		u.RawQuery = url.Values{"vfs": {vfsname.Name}}.Encode()
	}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// The store may be committing, or checkpointing its log, this moment:
	// wait for that as another program would, rather than fail at once.
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout=10000"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("another program's write lock on %s: %v", path, err)
	}
	return conn
}
