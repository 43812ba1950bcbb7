package cairn_test

// This file holds the tests of files written by earlier builds.

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn"
)

// TestOpenV1NotUTF8 opens testdata/v1-not-utf8/notes.db, written by a
// build that stored ids and texts as given, before writes refused those
// that are not valid UTF-8: the file is not damaged, so its collection
// loads (migrated to this build's schema) with every item as written,
// and Check finds nothing wrong with it.
func TestOpenV1NotUTF8(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("testdata", "v1-not-utf8", "notes.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "notes.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ok": "fine", "badtext": "caf\xe9", "bad\xffid": "bad id", "badmeta": ""}
	check := func(db *cairn.DB) {
		t.Helper()
		c, err := db.Collection(ctx, "notes")
		if err != nil {
			t.Fatalf("Collection: %v", err)
		}
		if n, err := c.Count(ctx); err != nil || n != len(want) {
			t.Fatalf("Count = %d, %v; want %d", n, err, len(want))
		}
		for id, text := range want {
			got, err := c.Get(ctx, id)
			if err != nil || len(got) != 1 || got[0].Text != text {
				t.Fatalf("Get(%q) = %+v, %v; want text %q", id, got, err, text)
			}
		}
		res, err := c.Query(ctx, []float32{0, 0, 1, 0}, 1, nil)
		if err != nil || len(res) != 1 || res[0].ID != "bad\xffid" {
			t.Fatalf("Query = %+v, %v; want bad\\xffid", res, err)
		}
	}
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := cairn.Check(ctx, path, nil); err != nil || len(rep.Problems) > 0 || rep.Items != len(want) {
		t.Fatalf("Check = %+v, %v; want %d items and no problem", rep, err, len(want))
	}
	db, err = cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check(db)
}
