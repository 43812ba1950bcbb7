package cairn_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	_ "modernc.org/sqlite"
)

// FuzzDamagedRow sets one column of one row of a file's tables to an
// arbitrary SQL value, as another program or a damaged disk might, then
// opens the file and reads everything back: the catalogue, the items, the
// history and a tenant's items. Each step must succeed or fail with an
// error wrapping one of the vector package's sentinels, never panic; what
// reads back must have the collection's dimension and metadata of
// scalars, and a row the damage did not touch must read back intact.
func FuzzDamagedRow(f *testing.F) {
	for col := range damageColumns {
		for kind := range uint8(5) {
			f.Add(uint8(col), kind, int64(-1), []byte("x"))
		}
	}
	f.Add(uint8(1), uint8(4), int64(0), []byte{0, 0, 0x80, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0})  // +Inf in a vector
	f.Add(uint8(8), uint8(4), int64(0), []byte{0, 0, 0xc0, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0})  // NaN in a past vector
	f.Add(uint8(16), uint8(4), int64(0), []byte{0, 0, 0x80, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0}) // +Inf in a tenant's
	f.Add(uint8(3), uint8(3), int64(0), []byte(`{"a":[1]}`))
	f.Add(uint8(3), uint8(3), int64(0), []byte(`{"a":1e400}`))
	f.Add(uint8(0), uint8(3), int64(0), []byte(`{"index":"hnsw","hnsw":{"m":1}}`))
	f.Add(uint8(0), uint8(3), int64(0), []byte(`{"index":"flat","ttl":"-5s"}`))
	f.Add(uint8(4), uint8(1), int64(math.MaxInt64), []byte(nil))
	f.Add(uint8(4), uint8(1), int64(math.MinInt64), []byte(nil))
	f.Fuzz(runDamage)
}

// runDamage is FuzzDamagedRow's body.
func runDamage(t *testing.T, col, kind uint8, n int64, b []byte) {
	if int(col) >= len(damageColumns) || len(b) > 256 {
		return
	}
	template := damageTemplate(t)
	path := filepath.Join(t.TempDir(), "f.cairn")
	if err := os.WriteFile(path, template, 0o644); err != nil {
		t.Fatal(err)
	}
	dc := damageColumns[col]
	var v any
	switch kind % 5 {
	case 0:
		v = nil
	case 1:
		v = n
	case 2:
		v = math.Float64frombits(uint64(n))
	case 3:
		v = string(b)
	case 4:
		v = b
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(fmt.Sprintf("UPDATE %s SET %s = ? WHERE %s", dc.table, dc.column, dc.where), v)
	raw.Close()
	if err != nil {
		return // a constraint refused the value: nothing damaged
	}
	ctx := context.Background()
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		typedErr(t, "Open", err)
		return
	}
	defer db.Close()
	c, err := db.Collection(ctx, "c")
	if err != nil {
		typedErr(t, "Collection", err)
		return
	}
	dim := c.Config().Dim
	check := func(what string, items []cairn.Item) {
		for _, it := range items {
			if len(it.Embedding) != dim {
				t.Fatalf("%s: item %q has %d dimensions, want %d", what, it.ID, len(it.Embedding), dim)
			}
			for _, x := range it.Embedding {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%s: item %q has the embedding %v", what, it.ID, it.Embedding)
				}
			}
			for k, v := range it.Metadata {
				switch v.(type) {
				case string, bool, int64, float64:
				default:
					t.Fatalf("%s: item %q: metadata %q is a %T", what, it.ID, k, v)
				}
			}
		}
	}
	got, err := c.Get(ctx, "a", "b", "c")
	if err != nil {
		typedErr(t, "Get", err)
	} else {
		check("Get", got)
	}
	// The damage hits the rows of a, b, x and the catalogue; item
	// c's row is untouched, and must read back as written.
	if one, err := c.Get(ctx, "c"); err == nil && dc.table != "collections" {
		if len(one) != 1 || one[0].Text != "third" || one[0].Metadata["n"] != 3.0 {
			t.Fatalf("undamaged item c reads back as %+v (n a %T)", one, one[0].Metadata["n"])
		}
	}
	if found, err := c.Find(ctx, nil, 100); err != nil {
		typedErr(t, "Find", err)
	} else {
		check("Find", found)
	}
	if _, err := c.Query(ctx, []float32{1, 0, 0}, 3, nil); err != nil {
		typedErr(t, "Query", err)
	}
	if vs, err := c.History(ctx, "a"); err != nil {
		typedErr(t, "History", err)
	} else {
		for _, v := range vs {
			if !v.Absent {
				check("History", []cairn.Item{v.Item})
			}
		}
	}
	if snap, err := c.AsOf(ctx, time.Now()); err != nil {
		typedErr(t, "AsOf", err)
	} else {
		if found, err := snap.Find(ctx, nil, 100); err != nil {
			typedErr(t, "Snapshot.Find", err)
		} else {
			check("Snapshot.Find", found)
		}
		snap.Close()
	}
	if _, err := c.Tenants(ctx); err != nil {
		typedErr(t, "Tenants", err)
	}
	if tn, err := c.Tenant(ctx, "t"); err != nil {
		typedErr(t, "Tenant", err)
	} else if got, err := tn.Get(ctx, "x"); err != nil {
		typedErr(t, "Tenant.Get", err)
	} else {
		check("Tenant.Get", got)
	}
}

// damageColumns are the columns FuzzDamagedRow may damage, and which row.
var damageColumns = []struct{ table, column, where string }{
	{"collections", "settings", "name = 'c'"},
	{"items_1", "vec", "key = 'a'"},
	{"items_1", "key", "key = 'a'"},
	{"items_1", "meta", "key = 'a'"},
	{"items_1", "created", "key = 'a'"},
	{"items_1", "updated", "key = 'a'"},
	{"items_1", "expires", "key = 'a'"},
	{"items_1", "text", "key = 'a'"},
	{"history", "vec", "key = 'a'"},
	{"history", "meta", "key = 'a'"},
	{"history", "until", "key = 'a'"},
	{"history", "id", "key = 'a'"},
	{"history", "created", "key = 'a'"},
	{"history", "key", "key = 'a'"},
	{"history_since", "since", "1"},
	{"tenants", "name", "name = 't'"},
	{"tenant_items", "vec", "key = 'x'"},
	{"tenant_items", "meta", "key = 'x'"},
	{"tenant_items", "created", "key = 'x'"},
	{"tenant_items", "key", "key = 'x'"},
	{"collections", "dim", "name = 'c'"},
	{"collections", "metric", "name = 'c'"},
	{"items_1", "id", "key = 'a'"},
	{"items_1", "updated", "key = 'b'"},
}

var (
	damageOnce  sync.Once
	damageBytes []byte
	damageErr   error
)

// damageTemplate returns the bytes of a file with collection c (keeping
// history) of items a, b and c, a replaced and b deleted once, and tenant
// t of item x.
func damageTemplate(t *testing.T) []byte {
	damageOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-damage-")
		if err != nil {
			damageErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "f.cairn")
		damageErr = func() error {
			ctx := context.Background()
			db, err := cairn.Open(ctx, path, nil)
			if err != nil {
				return err
			}
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 3, Index: cairn.Flat,
				KeepHistory: &cairn.HistoryPolicy{Versions: 10}})
			if err != nil {
				return err
			}
			if err := c.Add(ctx,
				cairn.Item{ID: "a", Text: "first", Embedding: []float32{1, 0, 0}, Metadata: map[string]any{"n": 1, "s": "x"}},
				cairn.Item{ID: "b", Text: "second", Embedding: []float32{0, 1, 0}, Metadata: map[string]any{"n": 2}},
				cairn.Item{ID: "c", Text: "third", Embedding: []float32{0, 0, 1}, Metadata: map[string]any{"n": 3}},
			); err != nil {
				return err
			}
			if err := c.Upsert(ctx, cairn.Item{ID: "a", Text: "first again", Embedding: []float32{1, 1, 0},
				Metadata: map[string]any{"n": 4, "b": true}}); err != nil {
				return err
			}
			if err := c.Delete(ctx, "b"); err != nil {
				return err
			}
			tn, err := c.CreateTenant(ctx, "t")
			if err != nil {
				return err
			}
			return tn.Add(ctx, cairn.Item{ID: "x", Text: "tenant's", Embedding: []float32{1, 0, 1}, Metadata: map[string]any{"k": "v"}})
		}()
		if damageErr == nil {
			damageBytes, damageErr = os.ReadFile(path)
		}
	})
	if damageErr != nil {
		t.Fatal(damageErr)
	}
	return damageBytes
}

// typedErr fails t unless err wraps one of the sentinels a caller can
// test for.
func typedErr(t *testing.T, op string, err error) {
	t.Helper()
	for _, s := range []error{vector.ErrCorrupt, vector.ErrNotFound, vector.ErrUnsupportedVersion, vector.ErrDimensionMismatch,
		vector.ErrInvalidOptions, vector.ErrNonFinite, vector.ErrOutOfRange, vector.ErrZeroVector, cairn.ErrBeforeHistory, cairn.ErrNoHistory} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("%s of a damaged file: untyped error %v", op, err)
}
