package main

import (
	"database/sql"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestCheckFindsSchemaDrift: check reports, one problem a line and with
// exit status 1, an index another program dropped and the rows a DELETE
// from the catalogue left behind; and a file it cannot load as a problem
// too, not as a file it could not check.
func TestCheckFindsSchemaDrift(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage []string
		want   []string
	}{
		{"dropped index", []string{"DROP INDEX history_tenant_until"},
			[]string{`t.db: the file lacks the index "history_tenant_until" on table "history" that cairn makes (schema version 5)`}},
		{"collection deleted from the catalogue", []string{"DELETE FROM collections WHERE name = 'notes'"},
			[]string{`t.db: table "items_1" belongs to no collection in the catalogue`}},
		{"dropped items table", []string{"DROP TABLE items_1"},
			[]string{`t.db: the file lacks the table "items_1" of collection "notes"`, "t.db: the file cannot be loaded"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := newFile(t)
			if r := runCmd(t, "", "check", path); r.code != exitOK {
				t.Fatalf("check of a good file: %+v", r)
			}
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.damage {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			db.Close()
			r := runCmd(t, "", "check", path)
			if r.code != exitFail || !strings.Contains(r.stderr, "check failed") {
				t.Fatalf("check of a damaged file: %+v", r)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}
