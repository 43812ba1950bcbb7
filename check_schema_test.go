package cairn_test

// This file holds the tests of what Check finds in a file's schema and in
// the rows that belong to no collection: each damages a file cairn made
// with plain SQL, as another program would.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/sqlitestore"
)

// checkProblems runs Check on path, fails the test if it changed the
// file or could not run, and returns its problems.
func checkProblems(t *testing.T, path string) []string {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cairn.Check(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("Check changed the file")
	}
	return rep.Problems
}

// toV4 makes the file at path, of this build's version 5, the file a
// build of schema version 4 made: version 5 added only two indexes.
var toV4 = []string{"DROP INDEX tenant_items_expires", "DROP INDEX history_tenant_until", "PRAGMA user_version = 4"}

// rebuildHistorySince makes the table history_since anew as def (its
// columns as cairn makes them) and copies its rows into it.
func rebuildHistorySince(def string) []string {
	return []string{
		"CREATE TABLE hs_new " + def,
		"INSERT INTO hs_new SELECT coll, tenant, since FROM history_since",
		"DROP TABLE history_since",
		"ALTER TABLE hs_new RENAME TO history_since",
	}
}

func TestCheckSchema(t *testing.T) {
	tests := []struct {
		name   string
		damage []string // SQL run on newCheckedFile's file
		want   []string // each must be in one of the problems; none for a file cairn made
	}{
		// What cairn makes, and what it need not report.
		{name: "good"},
		{name: "good version 4", damage: toV4},
		{name: "table of another program", damage: []string{"CREATE TABLE notes (x TEXT)", "INSERT INTO notes VALUES ('mine')", "CREATE UNIQUE INDEX notes_x ON notes (x)"}},
		{name: "plain index of another program", damage: []string{"CREATE INDEX by_text ON items_1 (text)"}},
		{name: "statistics of ANALYZE", damage: []string{"ANALYZE"}},

		// Dropped and changed indexes and tables.
		{name: "dropped v5 index of tenant items", damage: []string{"DROP INDEX tenant_items_expires"},
			want: []string{`the file lacks the index "tenant_items_expires" on table "tenant_items" that cairn makes (schema version 5)`}},
		{name: "dropped v5 index of history", damage: []string{"DROP INDEX history_tenant_until"},
			want: []string{`the file lacks the index "history_tenant_until" on table "history" that cairn makes (schema version 5)`}},
		{name: "dropped v4 index", damage: []string{"DROP INDEX history_key"},
			want: []string{`the file lacks the index "history_key" on table "history"`}},
		{name: "index of a version 4 file", damage: append(toV4[:2:2], "DROP INDEX history_until", "PRAGMA user_version = 4"),
			want: []string{`the file lacks the index "history_until" on table "history" that cairn makes (schema version 4)`}},
		{name: "changed index", damage: []string{"DROP INDEX history_until", "CREATE INDEX history_until ON history (coll, until)"},
			want: []string{`the index "history_until" on table "history" is not the one cairn makes: the file has "CREATE INDEX history_until ON history (coll, until)"`}},
		{name: "partial index made whole", damage: []string{"DROP INDEX tenant_items_expires", "CREATE INDEX tenant_items_expires ON tenant_items (expires)"},
			want: []string{`the index "tenant_items_expires" on table "tenant_items" is not the one cairn makes`, `WHERE expires IS NOT NULL`}},
		{name: "dropped key index of a tenant's items", damage: []string{"DROP INDEX tenant_items_key"},
			want: []string{`the file lacks the index "tenant_items_key" on table "tenant_items"`}},
		{name: "dropped key index of a collection", damage: []string{"DROP INDEX items_2_key"},
			want: []string{`the file lacks the index "items_2_key" on table "items_2" of collection "graph"`, "the file cannot be loaded"}},
		{name: "dropped table", damage: []string{"DROP TABLE history_since"},
			want: []string{`the file lacks the table "history_since" that cairn makes`, "the file cannot be loaded"}},
		{name: "dropped items table", damage: []string{"DROP TABLE items_1"},
			want: []string{`the file lacks the table "items_1" of collection "flat"`, "the file cannot be loaded"}},
		{name: "lost column", damage: []string{"DROP INDEX tenant_items_expires", "ALTER TABLE tenant_items DROP COLUMN expires"},
			want: []string{`table "tenant_items" lacks the column "expires" (INTEGER) that cairn makes`, "the file cannot be loaded"}},
		{name: "items table lost a column", damage: []string{"ALTER TABLE items_2 DROP COLUMN meta"},
			want: []string{`table "items_2" of collection "graph" lacks the column "meta"`, "the file cannot be loaded"}},
		{name: "added column", damage: []string{"ALTER TABLE history ADD COLUMN note TEXT NOT NULL DEFAULT ''"},
			want: []string{`table "history" has a column "note" (TEXT NOT NULL DEFAULT '') that cairn did not make`}},
		{name: "renamed column", damage: []string{"ALTER TABLE collections RENAME COLUMN settings TO config"},
			want: []string{`table "collections" lacks the column "settings"`, `table "collections" has a column "config"`}},
		{name: "constraint added", damage: rebuildHistorySince("(coll INTEGER NOT NULL, tenant INTEGER NOT NULL, since INTEGER NOT NULL CHECK (since > 0), PRIMARY KEY (coll, tenant)) WITHOUT ROWID"),
			want: []string{`table "history_since" is not made as cairn makes it: the file has`, "CHECK (since > 0)"}},
		{name: "rowid table", damage: rebuildHistorySince("(coll INTEGER NOT NULL, tenant INTEGER NOT NULL, since INTEGER NOT NULL, PRIMARY KEY (coll, tenant))"),
			want: []string{`table "history_since" lacks the WITHOUT ROWID that cairn makes`}},
		{name: "key lost", damage: rebuildHistorySince("(coll INTEGER NOT NULL, tenant INTEGER NOT NULL, since INTEGER NOT NULL)"),
			want: []string{`table "history_since" lacks the PRIMARY KEY (coll, tenant) that cairn makes`}},

		// Objects of other programs that change what cairn does.
		{name: "unique index of another program", damage: []string{"CREATE UNIQUE INDEX one_text ON items_1 (text)"},
			want: []string{`the index "one_text" on table "items_1" was not made by cairn and is unique: it can refuse cairn's writes`}},
		{name: "expression index of another program", damage: []string{"CREATE INDEX by_topic ON items_1 (json_extract(meta, '$.i'))"},
			want: []string{`the index "by_topic" on table "items_1" was not made by cairn and is over an expression`}},
		{name: "items table of no collection", damage: []string{"CREATE TABLE items_3 (id INTEGER PRIMARY KEY, vec BLOB NOT NULL)"},
			want: []string{`table "items_3" belongs to no collection in the catalogue: its rows are left over, and a new collection given row id 3 cannot be made`}},
		{name: "name a later version takes", damage: append(toV4[:2:2], "CREATE TABLE history_tenant_until (x)", "PRAGMA user_version = 4"),
			want: []string{`the file holds a table "history_tenant_until" that cairn did not make, of a name schema version 5 takes`}},

		// Rows of no collection or tenant.
		{name: "collection deleted from the catalogue", damage: []string{"DELETE FROM collections WHERE name = 'flat'"},
			want: []string{
				`table "items_1" belongs to no collection in the catalogue`,
				`table "tenants" holds tenants that belong to no collection in the catalogue: 1 row`,
				`table "history" holds kept states that belong to no collection in the catalogue: 57 rows`,
				`table "history_since" holds history starts that belong to no collection in the catalogue: 2 rows`,
			}},
		{name: "graph's collection deleted from the catalogue", damage: []string{"DELETE FROM collections WHERE name = 'graph'"},
			want: []string{`table "index_blobs" holds saved indexes that belong to no collection in the catalogue: 1 row`}},
		{name: "tenant deleted", damage: []string{"DELETE FROM tenants"},
			want: []string{
				`table "tenant_items" holds items that belong to no tenant in table tenants: 5 rows`,
				`table "history" holds kept states that belong to no tenant in table tenants: 6 rows`,
				`table "history_since" holds history starts that belong to no tenant in table tenants: 1 row`,
			}},
		{name: "saved graph of no tenant", damage: []string{
			"UPDATE index_blobs SET name = char(31) || '99' || char(31) || name",
			"UPDATE index_chunks SET name = char(31) || '99' || char(31) || name",
		},
			want: []string{`table "index_blobs" holds saved indexes that belong to no tenant in table tenants: 1 row`}},
		{name: "saved graph's header deleted", damage: []string{"DELETE FROM index_blobs"},
			want: []string{`table "index_chunks" holds chunks that belong to no saved index in table index_blobs: 1 row`}},
		{name: "history start of no collection", damage: []string{"INSERT INTO history_since VALUES (9, 0, 1)"},
			want: []string{`table "history_since" holds history starts that belong to no collection in the catalogue: 1 row`}},

		// Vectors whose length is not their collection's dimension.
		{name: "short vector", damage: []string{"UPDATE items_1 SET vec = X'0000803f' WHERE id = 3"},
			want: []string{`the file cannot be loaded, so the rest is not checked`, `load collection "flat"`, "vector of 4 bytes, want 16"}},
		{name: "dimension changed in the catalogue", damage: []string{"UPDATE collections SET dim = 3 WHERE name = 'graph'"},
			want: []string{`load collection "graph"`, "vector of 16 bytes, want 12"}},
		{name: "short vector of a tenant", damage: []string{"UPDATE tenant_items SET vec = X'00' WHERE key = 'id2'"},
			want: []string{`collection "flat": tenant "t1": `, "vector of 1 bytes, want 16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := newCheckedFile(t)
			if len(tt.damage) > 0 {
				rawSQL(t, path, tt.damage...)
			}
			problems := checkProblems(t, path)
			all := strings.Join(problems, "\n")
			t.Logf("problems:\n%s", all)
			if len(tt.want) == 0 && len(problems) != 0 {
				t.Fatalf("a file as cairn makes it: %s", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems lack %q:\n%s", w, all)
				}
			}
		})
	}
}

// copyTestdata copies the file at name, under the module's root, into a
// temporary directory.
func copyTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckSchemaOldFiles: the files of older schema versions in testdata
// check clean once a writable Open has migrated them (their items tables,
// made before version 2, gained the time columns by ALTER TABLE), and a
// damage to one is found as in a file this build made. Before that, Check
// refuses them as a read-only Open does, leaving them as they were.
func TestCheckSchemaOldFiles(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"sqlitestore/testdata/schema-v1.db", "sqlitestore/testdata/schema-v2.db", "testdata/v1-not-utf8/notes.db"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			path := copyTestdata(t, name)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cairn.Check(ctx, path, nil); !errors.Is(err, sqlitestore.ErrReadOnly) {
				t.Fatalf("Check before migration: %v, want ErrReadOnly", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatal("Check changed a file it refused")
			}
			db, err := cairn.Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if problems := checkProblems(t, path); len(problems) != 0 {
				t.Fatalf("migrated file: %s", strings.Join(problems, "\n"))
			}
			rawSQL(t, path, "DROP INDEX items_1_key")
			problems := checkProblems(t, path)
			if all := strings.Join(problems, "\n"); !strings.Contains(all, `the file lacks the index "items_1_key" on table "items_1"`) {
				t.Fatalf("dropped key index not found:\n%s", all)
			}
		})
	}
}

// TestCheckSchemaAfterCompact: a file Compact rewrote (SQLite's VACUUM,
// which makes every table and index anew from its statement) checks
// clean, and a file whose cairn table another program made anew under
// its name in capitals is found only for what it lacks.
func TestCheckSchemaAfterCompact(t *testing.T) {
	path := newCheckedFile(t)
	if err := cairn.Compact(context.Background(), path, nil); err != nil {
		t.Fatal(err)
	}
	if problems := checkProblems(t, path); len(problems) != 0 {
		t.Fatalf("compacted file: %s", strings.Join(problems, "\n"))
	}
	rawSQL(t, path, rebuildHistorySince("(coll INTEGER NOT NULL, tenant INTEGER NOT NULL, since INTEGER NOT NULL)")...)
	// rebuildHistorySince renamed hs_new to history_since; now the same
	// table under a name in capitals, which SQLite takes for the same name.
	rawSQL(t, path, "ALTER TABLE history_since RENAME TO hs_tmp", "ALTER TABLE hs_tmp RENAME TO HISTORY_SINCE")
	problems := checkProblems(t, path)
	all := strings.Join(problems, "\n")
	if strings.Contains(all, `lacks the table "history_since"`) || !strings.Contains(all, `table "history_since" lacks the PRIMARY KEY (coll, tenant) that cairn makes`) {
		t.Fatalf("table in capitals: %s", all)
	}
}

// TestCheckSchemaAfterDeletes: what cairn's own deletes leave (a tenant
// deleted with its graph and history, a collection deleted with its
// saved graph and table) is no orphan, and a new collection after them
// checks clean too.
func TestCheckSchemaAfterDeletes(t *testing.T) {
	ctx := context.Background()
	path := newCheckedFile(t)
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	flat, err := db.Collection(ctx, "flat")
	if err != nil {
		t.Fatal(err)
	}
	if err := flat.DeleteTenant(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCollection(ctx, "graph"); err != nil {
		t.Fatal(err)
	}
	mustCollection(t, db, "again", cairn.CollectionConfig{Dim: 2})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if problems := checkProblems(t, path); len(problems) != 0 {
		t.Fatalf("after cairn's deletes: %s", strings.Join(problems, "\n"))
	}
}
