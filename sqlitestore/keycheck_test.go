package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// breakKeyIndex damages the key index of collection c's table in the
// closed database at path the way a copy mixing pages of two moments can:
// it makes SQLite believe, for the length of write, that the index covers
// no rows (a partial index whose condition never holds), so write's rows
// change the table but not the index.
func breakKeyIndex(t *testing.T, path, table, write string) {
	t.Helper()
	ctx := context.Background()
	exec := func(stmts ...string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, s := range stmts {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	var orig string
	func() {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE name = ?", table+"_key").Scan(&orig); err != nil {
			t.Fatal(err)
		}
	}()
	never := strings.Replace(orig, "WHERE key IS NOT NULL", "WHERE key IS NOT NULL AND 0", 1)
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	setSQL := func(s string) []string {
		return []string{
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_master SET sql = " + quote(s) + " WHERE name = '" + table + "_key'",
			"PRAGMA writable_schema=OFF",
		}
	}
	exec(setSQL(never)...)
	exec(write)
	exec(setSQL(orig)...)
}

func TestOpenRefusesBrokenKeyIndex(t *testing.T) {
	ctx := context.Background()
	cases := []struct{ name, write string }{
		{"row missing from the index", "INSERT INTO items_1 (id, vec, key) SELECT 1000, vec, 'new key' FROM items_1 WHERE id = 1"},
		{"key changed behind the index", "UPDATE items_1 SET key = 'other' WHERE id = 5"},
		{"id changed behind the index", "UPDATE items_1 SET id = 999 WHERE id = 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "test.cairn")
			makeDB(t, path, 20)
			breakKeyIndex(t, path, "items_1", tc.write)
			// SQLite itself sees the damage only in a full integrity check.
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			var msg string
			raw.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&msg)
			raw.Close()
			if msg == "ok" {
				t.Fatalf("the test did not damage the index")
			}
			t.Logf("integrity_check: %s", msg)
			before := fileSum(t, path)
			db, err := Open(ctx, path, nil)
			if err == nil {
				db.Close()
				t.Fatal("Open accepted a file whose key index disagrees with its table")
			}
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			t.Logf("Open: %v", err)
			if fileSum(t, path) != before {
				t.Fatal("Open modified the file")
			}
		})
	}
}
