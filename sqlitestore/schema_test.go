package sqlitestore

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestSchemaDrift: a file this package made differs in nothing from the
// schema it expects, and its rows belong to its collections.
func TestSchemaDrift(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, nil)
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
}
