package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestDueTenants: DueTenants finds the tenants of one collection with an
// item expired or a history state before the cut, in pages, and no
// other; TenantsNextDue gives the earliest times; both read the indexes
// of version 5, not the tenants' rows.
func TestDueTenants(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "d.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "c", 4, vector.L2)
	other := mustCollection(t, db, "other", 4, vector.L2)
	put := func(parent *Collection, name string, expires ...int64) *Collection {
		t.Helper()
		tn, err := parent.CreateTenant(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range expires {
			it := itemFor(vector.ID(i+1), 4)
			if e != 0 {
				it.Expires = nanos(e)
			}
			if err := tn.PutItems(ctx, []Item{it}); err != nil {
				t.Fatal(err)
			}
		}
		return tn
	}
	put(c, "never", 0, 0)
	put(c, "soon", 0, 100)
	put(c, "later", 500, 0)
	put(other, "other-soon", 50) // another collection's: never c's
	hist := put(c, "past")
	if err := hist.WriteItemsKeeping(ctx, []Item{itemFor(1, 4)}, nil, []Prior{{Key: "k1", Until: 30}}); err != nil {
		t.Fatal(err)
	}
	names := func(refs []TenantRef) []string {
		var out []string
		for _, r := range refs {
			out = append(out, r.Name)
		}
		return out
	}
	for _, tc := range []struct {
		now, before int64
		want        []string
	}{
		{99, math.MinInt64, nil},
		{100, math.MinInt64, []string{"soon"}},
		{500, math.MinInt64, []string{"soon", "later"}},
		{99, 31, []string{"past"}},
		{99, 30, nil}, // until < before
		{1000, 1000, []string{"soon", "later", "past"}},
	} {
		got, err := c.DueTenants(ctx, tc.now, tc.before, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("due at %d, before %d: %v, want %v", tc.now, tc.before, names(got), tc.want)
		}
	}
	// In pages of one.
	var paged []string
	for after := int64(0); ; {
		page, err := c.DueTenants(ctx, 1000, 1000, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page[0].Name)
		after = page[0].ID
	}
	if !slices.Equal(paged, []string{"soon", "later", "past"}) {
		t.Errorf("paged: %v", paged)
	}
	exp, ok, until, pastOK, err := c.TenantsNextDue(ctx)
	if err != nil || !ok || exp != 100 || !pastOK || until != 30 {
		t.Fatalf("next due: %d %v, %d %v, %v; want 100, 30", exp, ok, until, pastOK, err)
	}
	if exp, ok, _, pastOK, err := other.TenantsNextDue(ctx); err != nil || !ok || exp != 50 || pastOK {
		t.Fatalf("other's next due: %d %v %v %v", exp, ok, pastOK, err)
	}
	// The plans read the indexes of version 5.
	if err := db.withConn(func(conn *sql.Conn) error {
		for _, q := range []string{
			"EXPLAIN QUERY PLAN SELECT DISTINCT tenant FROM tenant_items INDEXED BY tenant_items_expires WHERE expires <= 1 AND tenant > 0 ORDER BY tenant LIMIT 5",
			"EXPLAIN QUERY PLAN SELECT DISTINCT tenant FROM history INDEXED BY history_tenant_until WHERE coll = 1 AND tenant <> 0 AND until < 5 AND tenant > 0 ORDER BY tenant LIMIT 5",
		} {
			rows, err := conn.QueryContext(ctx, q)
			if err != nil {
				return err
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					rows.Close()
					return err
				}
				plan = append(plan, detail)
			}
			rows.Close()
			if p := strings.Join(plan, "; "); !strings.Contains(p, "USING COVERING INDEX") {
				t.Errorf("%s: plan %q", q, p)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyOpensV4: a file of schema version 4 (before the indexes of
// the sweep of idle tenants) opens read-only as it is, with its tenants
// and history, and is not changed; DueTenants is for a writer; a
// writable Open migrates it to version 5.
func TestReadOnlyOpensV4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", 4, vector.L2)
	tn, err := c.CreateTenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	it := itemFor(1, 4)
	it.Expires = nanos(10)
	if err := tn.PutItems(ctx, []Item{it}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP INDEX tenant_items_expires", "DROP INDEX history_tenant_until", "PRAGMA user_version=4"} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	raw.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a version-4 file: %v", err)
	}
	rc, err := rdb.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rc.Tenant(ctx, "a")
	if err != nil || rt.Len() != 1 {
		t.Fatalf("tenant of a version-4 file read-only: %v", err)
	}
	if _, err := rc.DueTenants(ctx, 100, math.MinInt64, 0, 10); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("DueTenants on a reader: %v, want ErrReadOnly", err)
	}
	rdb.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a read-only Open changed the version-4 file")
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version int64
	if err := db.withConn(func(conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version)
	}); err != nil || version != int64(schemaVersion()) || schemaVersion() != 5 {
		t.Fatalf("user_version %d (%v), want %d = 5", version, err, schemaVersion())
	}
	c, err = db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	due, err := c.DueTenants(ctx, 100, math.MinInt64, 0, 10)
	if err != nil || len(due) != 1 || due[0].Name != "a" {
		t.Fatalf("due after migration: %v, %v", due, err)
	}
}
