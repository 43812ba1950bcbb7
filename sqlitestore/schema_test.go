package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestSchemaDrift: a file this package made differs in nothing from the
// schema it expects, its rows belong to its collections; a column
// another program dropped makes Open fail with a DamagedError that says
// so, and leaves the file as it was.
func TestSchemaDrift(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "c", 4, vector.Cosine)
	if err := c.PutItems(ctx, []Item{itemFor(1, 4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTenant(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(context.Context) ([]string, error){"SchemaDrift": db.SchemaDrift, "Orphans": db.Orphans} {
		if got, err := f(ctx); err != nil || len(got) != 0 {
			t.Fatalf("%s of a new file: %q, %v", name, got, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("ALTER TABLE " + itemsTable(1) + " DROP COLUMN text"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = Open(ctx, path, &Options{ReadOnly: true})
	var de *DamagedError
	if !errors.As(err, &de) || !errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("Open of a table without a column: %v, want a DamagedError, ErrCorrupt", err)
	}
	if want := `table "items_1" of collection "c" lacks the column "text" (TEXT) that cairn makes`; len(de.Drift) != 1 || de.Drift[0] != want || !strings.Contains(err.Error(), want) {
		t.Fatalf("drift %q (%v), want %q", de.Drift, err, want)
	}
}
