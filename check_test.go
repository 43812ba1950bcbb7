package cairn_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
	_ "modernc.org/sqlite"
)

// newCheckedFile writes a file with a flat collection and an HNSW one
// (whose graph Close saves) and returns its path.
func newCheckedFile(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, cfg := range []struct {
		name string
		cfg  cairn.CollectionConfig
	}{
		{"flat", cairn.CollectionConfig{Dim: 4, Index: cairn.Flat, KeepHistory: &cairn.HistoryPolicy{Versions: 5}}},
		{"graph", cairn.CollectionConfig{Dim: 4, Index: cairn.HNSW, HNSW: hnsw.Options{M: 6}}},
	} {
		c := mustCollection(t, db, cfg.name, cfg.cfg)
		items := make([]cairn.Item, 50)
		for i := range items {
			items[i] = cairn.Item{ID: fmt.Sprint("id", i), Embedding: randVec(r, 4), Metadata: map[string]any{"i": i}}
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
		if cfg.name == "flat" {
			tn, err := c.CreateTenant(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			if err := tn.Add(ctx, items[:5]...); err != nil {
				t.Fatal(err)
			}
			// Versions in the history: a replaced item in the collection
			// and in the tenant.
			items[1].Text = "changed"
			if err := c.Upsert(ctx, items[1]); err != nil {
				t.Fatal(err)
			}
			if err := tn.Upsert(ctx, items[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// rawSQL runs statements on the file with SQLite alone, as damage would.
func rawSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestInspect(t *testing.T) {
	ctx := context.Background()
	path := newCheckedFile(t)
	fi, err := cairn.Inspect(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		name       string
		dim, m, n  int
		config, in cairn.IndexKind
		graph      cairn.GraphState
	}
	var got []brief
	for _, c := range fi.Collections {
		got = append(got, brief{c.Name, c.Config.Dim, c.Config.HNSW.M, c.Count, c.Config.Index, c.Index, c.SavedGraph})
	}
	want := []brief{
		{"flat", 4, 0, 50, cairn.Flat, cairn.Flat, cairn.GraphNone},
		{"graph", 4, 6, 50, cairn.HNSW, cairn.HNSW, cairn.GraphCurrent},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Inspect: %+v\nwant %+v", got, want)
	}

	// An item written behind the saved graph's back makes it stale.
	sdb, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdb.Collection(ctx, "graph")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutItems(ctx, []sqlitestore.Item{{ID: 1000, Key: "late", Vector: []float32{1, 2, 3, 4}}}); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	if fi, err = cairn.Inspect(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if s := fi.Collections[1].SavedGraph; s != cairn.GraphStale {
		t.Fatalf("after a write: saved graph %v, want stale", s)
	}
	rep, err := cairn.Check(ctx, path, nil)
	if err != nil || len(rep.Problems) != 0 || rep.Graphs != 0 || rep.Items != 106 {
		t.Fatalf("Check of a stale graph: %+v, %v; want no problems, 0 graphs verified, 106 items (5 of a tenant)", rep, err)
	}

	rawSQL(t, path, "DELETE FROM index_blobs")
	if fi, err = cairn.Inspect(ctx, path, nil); err != nil || fi.Collections[1].SavedGraph != cairn.GraphMissing {
		t.Fatalf("without a saved graph: %v, %v", fi, err)
	}

	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := cairn.Inspect(ctx, missing, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Inspect of a missing file: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("Inspect created the file")
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		damage []string // SQL run on a good file
		want   []string // each must be in one of the problems; none for a good file
	}{
		{name: "good"},
		{name: "empty id", damage: []string{"UPDATE items_1 SET key = NULL WHERE id = 3"}, want: []string{`collection "flat": row 3 ("") has no id`}},
		{name: "bad metadata", damage: []string{`UPDATE items_2 SET meta = '{"i":[1,2]}' WHERE id = 7`}, want: []string{`collection "graph": row 7 ("id6")`}},
		{name: "bad settings", damage: []string{`UPDATE collections SET settings = '{"index":"btree"}' WHERE name = 'flat'`}, want: []string{`collection "flat"`, "unknown index"}},
		{name: "bad metadata in a tenant", damage: []string{`UPDATE tenant_items SET meta = X'0a' WHERE key = 'id2'`}, want: []string{`collection "flat": tenant "t1": row`, `("id2")`}},
		{name: "tenant row without id", damage: []string{`UPDATE tenant_items SET key = NULL WHERE key = 'id3'`}, want: []string{`collection "flat": tenant "t1": row`, "has no id"}},
		{name: "reserved row id", damage: []string{"UPDATE items_1 SET id = 0 WHERE id = 3"}, want: []string{`collection "flat": row 0 ("id2") has a reserved row id`}},
		{name: "reserved row id in a tenant", damage: []string{"UPDATE tenant_items SET id = -1 WHERE key = 'id4'"}, want: []string{`collection "flat": tenant "t1": row 18446744073709551615 ("id4") has a reserved row id`}},
		{name: "tenant name not text", damage: []string{"UPDATE tenants SET name = CAST(name AS BLOB)"}, want: []string{`collection "flat": tenant "t1": `, "not found"}},
		{name: "id not UTF-8", damage: []string{"UPDATE items_1 SET key = X'ff' WHERE id = 3"}, want: []string{`collection "flat": row 3 ("\xff") has an id that is not valid UTF-8`}},
		{name: "text not UTF-8", damage: []string{"UPDATE items_2 SET text = X'ff' WHERE id = 7"}, want: []string{`collection "graph": row 7 ("id6") has a text that is not valid UTF-8`}},
		{name: "updated before created", damage: []string{"UPDATE items_2 SET updated = created - 1 WHERE id = 9"}, want: []string{`collection "graph": row 9 ("id8") was updated before it was created`}},
		{name: "kept version's vector", damage: []string{"UPDATE history SET vec = X'00' WHERE id IS NOT NULL AND tenant = 0"}, want: []string{`collection "flat": sqlitestore: history`, "vector of 1 bytes"}},
		{name: "kept version's text", damage: []string{"UPDATE history SET text = X'ff' WHERE id IS NOT NULL AND tenant != 0"}, want: []string{`collection "flat": tenant "t1": `, `history: row`, `("id1") has a text that is not valid UTF-8`}},
		{name: "kept version's metadata", damage: []string{"UPDATE history SET meta = X'0a' WHERE id IS NOT NULL AND tenant = 0"}, want: []string{`collection "flat": history: row`, `("id1")`}},
		{name: "kept absence's id", damage: []string{"UPDATE history SET key = '' WHERE id IS NULL AND tenant = 0 AND key = 'id7'"}, want: []string{`collection "flat": `, `history: row 0 ("") has no id`}},
		{name: "damaged graph", damage: []string{"UPDATE index_chunks SET data = zeroblob(length(data))"}, want: []string{`collection "graph": saved graph`}},
		{name: "foreign trigger", damage: []string{"CREATE TRIGGER undo AFTER INSERT ON items_1 BEGIN DELETE FROM items_1 WHERE id = new.id; END"}, want: []string{`trigger "undo" on table "items_1" that cairn did not make`}},
		{name: "foreign view", damage: []string{"CREATE VIEW everything AS SELECT * FROM items_1"}, want: []string{`view "everything" that cairn did not make`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := newCheckedFile(t)
			if len(tt.damage) > 0 {
				rawSQL(t, path, tt.damage...)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := cairn.Check(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.want) == 0 {
				if len(rep.Problems) != 0 || rep.Collections != 2 || rep.Tenants != 1 || rep.Items != 105 || rep.Versions != 57 || rep.Graphs != 1 {
					t.Fatalf("good file: %+v", rep)
				}
			}
			all := strings.Join(rep.Problems, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems lack %q:\n%s", w, all)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(before) != string(after) {
				t.Error("Check changed the file")
			}
		})
	}

	path := newCheckedFile(t)
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A check reads beside the file's writer.
	if rep, err := cairn.Check(ctx, path, nil); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("Check of a file its writer has open: %v, %+v", err, rep)
	}
	notDB := filepath.Join(t.TempDir(), "x.db")
	os.WriteFile(notDB, []byte("hello"), 0o644)
	if _, err := cairn.Check(ctx, notDB, nil); !errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("Check of a text file: %v, want ErrCorrupt", err)
	}
}

func TestCompact(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 256, Index: cairn.Flat})
	r := rand.New(rand.NewPCG(5, 6))
	var ids []string
	for b := range 10 {
		items := make([]cairn.Item, 200)
		for i := range items {
			items[i] = cairn.Item{ID: fmt.Sprint(b, "-", i), Embedding: randVec(r, 256), Text: strings.Repeat("x", 500)}
			ids = append(ids, items[i].ID)
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
	}
	// Delete a little less than a quarter, which the file keeps as free
	// pages (it shrinks by itself only past a quarter), spread over it.
	var gone []string
	for i, id := range ids {
		if i%5 == 0 {
			gone = append(gone, id)
		}
	}
	if err := c.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	// Beside a reader, whose snapshot keeps the file as it was: refused as
	// locked, not reported as done.
	reader, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := cairn.Compact(ctx, path, nil); !errors.Is(err, sqlitestore.ErrLocked) {
		t.Fatalf("Compact beside a reader: %v, want ErrLocked", err)
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cairn.Compact(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if after.Size() >= before.Size() {
		t.Fatalf("Compact: %d bytes before, %d after", before.Size(), after.Size())
	}
	t.Logf("%d → %d bytes", before.Size(), after.Size())
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "c")
	if err != nil || cairn.MustCount(t, c) != len(ids)-len(gone) {
		t.Fatalf("after Compact: %v, count %d", err, cairn.MustCount(t, c))
	}
	if rep, err := cairn.Check(ctx, filepath.Join(t.TempDir(), "none.db"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Check of a missing file: %+v, %v", rep, err)
	}
}

// TestDamagedRowsRefused: the rows Check reports as no write's are
// refused by their readers too, as corrupt: a collection's items by its
// load, kept versions by AsOf and History (not taken for a bad argument).
func TestDamagedRowsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, damage string
		read         func(*testing.T, *cairn.DB) error
	}{
		{"text not UTF-8", "UPDATE items_1 SET text = X'ff' WHERE id = 3", func(t *testing.T, db *cairn.DB) error {
			_, err := db.Collection(ctx, "flat")
			return err
		}},
		{"kept text not UTF-8", "UPDATE history SET text = X'ff' WHERE id IS NOT NULL AND tenant = 0", func(t *testing.T, db *cairn.DB) error {
			c, err := db.Collection(ctx, "flat")
			if err != nil {
				return err
			}
			if _, err := c.History(ctx, "id1"); !errors.Is(err, vector.ErrCorrupt) {
				return fmt.Errorf("History: %w", err)
			}
			// Just before the upsert of id1, whose version it replaced is the damaged one.
			_, err = c.AsOf(ctx, stored(t, c, "id1").UpdatedAt.Add(-time.Nanosecond))
			return err
		}},
		{"kept version updated before created", "UPDATE history SET updated = created - 1 WHERE id IS NOT NULL AND tenant != 0", func(t *testing.T, db *cairn.DB) error {
			return tenantAsOf(t, db, func(it cairn.Item) time.Time { return it.UpdatedAt }, "id1")
		}},
		{"kept id not UTF-8", "UPDATE history SET key = X'ff' WHERE id IS NULL AND tenant != 0 AND key = 'id3'", func(t *testing.T, db *cairn.DB) error {
			// Just before the tenant's Add, when id3 held nothing.
			return tenantAsOf(t, db, func(it cairn.Item) time.Time { return it.CreatedAt }, "id3")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := newCheckedFile(t)
			rawSQL(t, path, tt.damage)
			if rep, err := cairn.Check(ctx, path, nil); err != nil || len(rep.Problems) == 0 {
				t.Fatalf("Check = %+v, %v; want a problem", rep, err)
			}
			db, err := cairn.Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := tt.read(t, db); !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("read = %v, want ErrCorrupt", err)
			}
		})
	}
}

// tenantAsOf takes tenant t1 of newCheckedFile's collection flat as of a
// nanosecond before the time at gives of its item id.
func tenantAsOf(t *testing.T, db *cairn.DB, at func(cairn.Item) time.Time, id string) error {
	ctx := context.Background()
	c, err := db.Collection(ctx, "flat")
	if err != nil {
		return err
	}
	tn, err := c.Tenant(ctx, "t1")
	if err != nil {
		return err
	}
	_, err = tn.AsOf(ctx, at(stored(t, tn, id)).Add(-time.Nanosecond))
	return err
}

// stored returns the item of id that c holds.
func stored(t *testing.T, c interface {
	Get(context.Context, ...string) ([]cairn.Item, error)
}, id string) cairn.Item {
	t.Helper()
	its, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return its[0]
}

// TestCheckTenantGraph: Check loads and verifies the graphs saved for
// tenants as it does a collection's. It used to look only at the
// collection's own, so a tenant's damaged graph passed the check.
func TestCheckTenantGraph(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "g", cairn.CollectionConfig{Dim: 4, Index: cairn.HNSW, HNSW: hnsw.Options{TargetRecall: 0.9}})
	r := rand.New(rand.NewPCG(5, 6))
	items := make([]cairn.Item, 50)
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint("id", i), Embedding: randVec(r, 4)}
	}
	tn, err := c.CreateTenant(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := cairn.Check(ctx, path, nil)
	if err != nil || len(rep.Problems) != 0 || rep.Graphs != 1 || rep.Tenants != 1 {
		t.Fatalf("good file: %v, %+v (want the tenant's graph checked)", err, rep)
	}
	rawSQL(t, path, "UPDATE index_chunks SET data = zeroblob(length(data))")
	rep, err = cairn.Check(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(rep.Problems, "\n"); !strings.Contains(all, `collection "g": tenant "t1": saved graph`) {
		t.Fatalf("the tenant's damaged graph is not reported: %+v", rep)
	}
}
