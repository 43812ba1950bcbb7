package sqlitestore

// This file holds the test that a file of schema version 1, written by an
// earlier build, opens and migrates.

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// copyFixture copies testdata/name into a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func nanos(ns int64) sql.NullInt64 { return sql.NullInt64{Int64: ns, Valid: true} }

// TestOpenSchemaV1 opens testdata/schema-v1.db, written by the build
// before item times (a collection "notes" of three 4-d items, two with
// text and metadata): it migrates to this build's version, its items keep
// their payload and have no times, and items written after carry theirs
// across a reopen.
func TestOpenSchemaV1(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "schema-v1.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open of a version-1 file: %v", err)
	}
	var version int64
	if err := db.withConn(func(conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version)
	}); err != nil || version != int64(schemaVersion()) {
		t.Fatalf("user_version %d (%v), want %d", version, err, schemaVersion())
	}
	c, err := db.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	var got []Item
	if err := c.ForEachItem(ctx, func(it Item) error { got = append(got, it); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Key != "a" || got[0].Text != "the user likes Go" || string(got[0].Metadata) != `{"topic":"go"}` {
		t.Fatalf("items after migration: %+v", got)
	}
	for _, it := range got {
		if it.Created.Valid || it.Updated.Valid || it.Expires.Valid {
			t.Fatalf("item %q of a version-1 file has times %v %v %v", it.Key, it.Created, it.Updated, it.Expires)
		}
	}
	it := itemFor(100, 4)
	it.Key, it.Created, it.Updated, it.Expires = "new", nanos(1), nanos(2), nanos(3)
	if err := c.PutItems(ctx, []Item{it}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	back, err := c.GetItem(ctx, 100)
	if err != nil || back.Created != nanos(1) || back.Updated != nanos(2) || back.Expires != nanos(3) || c.Len() != 4 {
		t.Fatalf("after reopen: %+v, %v, %d items", back, err, c.Len())
	}
}
