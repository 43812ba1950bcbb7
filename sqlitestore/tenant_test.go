package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// blob is an io.WriterTo and io.ReaderFrom of fixed bytes: a stand-in
// for a saved graph.
type blob struct{ b []byte }

func (x *blob) WriteTo(w io.Writer) (int64, error) { n, err := w.Write(x.b); return int64(n), err }
func (x *blob) ReadFrom(r io.Reader) (int64, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(r)
	x.b = buf.Bytes()
	return n, err
}

func keysOf(t *testing.T, c *Collection) []string {
	t.Helper()
	var keys []string
	if err := c.ForEachItem(context.Background(), func(it Item) error {
		if err := checkItem(it, c.Dim()); err != nil {
			return err
		}
		keys = append(keys, it.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestTenants: tenants of one collection hold the same ids and keys
// apart, reload from the file after Unload and reopen, and a deleted
// tenant leaves nothing (items, saved index) behind.
func TestTenants(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "mem", 8, vector.Cosine)
	if err := c.PutItems(ctx, []Item{itemFor(1, 8)}); err != nil {
		t.Fatal(err)
	}
	a, err := c.CreateTenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateTenant(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTenant(ctx, "alice"); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("second alice: %v, want ErrDuplicateID", err)
	}
	if _, err := c.CreateTenant(ctx, ""); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("empty name: %v", err)
	}
	if _, err := a.CreateTenant(ctx, "x"); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("tenant of a tenant: %v", err)
	}
	if _, err := c.Tenant(ctx, "carol"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("missing tenant: %v", err)
	}
	// The same ids and keys in both tenants and in the collection.
	if err := a.PutItems(ctx, []Item{itemFor(1, 8), itemFor(2, 8)}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutItems(ctx, []Item{itemFor(1, 8), itemFor(3, 8)}); err != nil {
		t.Fatal(err)
	}
	dup := itemFor(4, 8)
	dup.Key = "k1"
	if err := a.PutItems(ctx, []Item{dup}); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("key taken in the tenant: %v", err)
	}
	if err := a.PutItems(ctx, []Item{itemFor(2, 8)}); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("id taken in the tenant: %v", err)
	}
	if err := b.DeleteItems(ctx, []vector.ID{2}); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("delete of alice's id through bob: %v", err)
	}
	if err := a.SaveIndex(ctx, "g", &blob{[]byte("alice graph")}); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveIndex(ctx, "g", &blob{[]byte("collection graph")}); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, a); !slices.Equal(got, []string{"k1", "k2"}) {
		t.Fatalf("alice: %v", got)
	}
	if got := keysOf(t, b); !slices.Equal(got, []string{"k1", "k3"}) {
		t.Fatalf("bob: %v", got)
	}
	if got := keysOf(t, c); !slices.Equal(got, []string{"k1"}) {
		t.Fatalf("collection: %v", got)
	}
	if it, err := b.GetItem(ctx, 2); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("bob's item 2: %+v, %v", it, err)
	}

	// Unload, then load again: the same items, the same saved index.
	if err := a.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := a.PutItems(ctx, []Item{itemFor(9, 8)}); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("write to an unloaded tenant: %v", err)
	}
	a2, err := c.Tenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if a2 == a || a2.Len() != 2 {
		t.Fatalf("reloaded alice: same %v, %d items", a2 == a, a2.Len())
	}
	if again, _ := c.Tenant(ctx, "alice"); again != a2 {
		t.Fatal("Tenant of a loaded tenant returned another *Collection")
	}
	var g blob
	if err := a2.LoadIndex(ctx, "g", &g); err != nil || string(g.b) != "alice graph" {
		t.Fatalf("alice's index after reload: %q, %v", g.b, err)
	}
	if names, err := c.Tenants(ctx); err != nil || !slices.Equal(names, []string{"alice", "bob"}) {
		t.Fatalf("Tenants: %v, %v", names, err)
	}

	// Reopen: tenants are not loaded until asked for.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(db.tenants) != 0 {
		t.Fatalf("%d tenants loaded at Open", len(db.tenants))
	}
	c, _ = db.Collection(ctx, "mem")
	if a, err = c.Tenant(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, a); !slices.Equal(got, []string{"k1", "k2"}) {
		t.Fatalf("alice after reopen: %v", got)
	}
	if err := a.LoadIndex(ctx, "g", &g); err != nil || string(g.b) != "alice graph" {
		t.Fatalf("alice's index after reopen: %q, %v", g.b, err)
	}
	if err := a.DeleteItems(ctx, []vector.ID{1}); err != nil {
		t.Fatal(err)
	}
	if err := a.LoadIndex(ctx, "g", &g); !errors.Is(err, ErrStaleIndex) {
		t.Fatalf("alice's index after a write: %v, want ErrStaleIndex", err)
	}
	if err := c.LoadIndex(ctx, "g", &g); err != nil || string(g.b) != "collection graph" {
		t.Fatalf("the collection's index after alice wrote: %q, %v", g.b, err)
	}

	// Delete alice: her rows and index go, bob's and the collection's stay.
	if err := c.DropTenant(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := a.PutItems(ctx, []Item{itemFor(9, 8)}); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("write to a deleted tenant: %v", err)
	}
	if err := c.DropTenant(ctx, "alice"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	var rows, blobs int64
	db.withConn(func(conn *sql.Conn) error {
		conn.QueryRowContext(ctx, "SELECT count(*) FROM tenant_items").Scan(&rows)
		return conn.QueryRowContext(ctx, "SELECT count(*) FROM index_blobs").Scan(&blobs)
	})
	if rows != 2 || blobs != 1 {
		t.Fatalf("after deleting alice: %d tenant rows (want bob's 2), %d saved indexes (want the collection's)", rows, blobs)
	}
	a, err = c.CreateTenant(ctx, "alice")
	if err != nil || a.Len() != 0 {
		t.Fatalf("alice created again: %v, %d items", err, a.Len())
	}

	// Deleting the collection deletes its tenants.
	if err := db.DropCollection(ctx, "mem"); err != nil {
		t.Fatal(err)
	}
	db.withConn(func(conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM tenant_items) + (SELECT count(*) FROM tenants)").Scan(&rows)
	})
	if rows != 0 {
		t.Fatalf("%d tenant rows left after the collection was deleted", rows)
	}
	if _, err := a.GetItem(ctx, 1); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("tenant of a deleted collection: %v", err)
	}
}

// TestTenantsReadOnly: a reader loads tenants and refuses to create or
// delete them.
func TestTenantsReadOnly(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t, nil)
	c := mustCollection(t, db, "mem", 4, vector.L2)
	a, err := c.CreateTenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PutItems(ctx, []Item{itemFor(1, 4)}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rc, _ := r.Collection(ctx, "mem")
	ra, err := rc.Tenant(ctx, "alice")
	if err != nil || ra.Len() != 1 {
		t.Fatalf("reader's alice: %v", err)
	}
	if _, err := rc.CreateTenant(ctx, "bob"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("reader creates a tenant: %v", err)
	}
	if err := rc.DropTenant(ctx, "alice"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("reader deletes a tenant: %v", err)
	}
}

// TestOpenSchemaV2 opens testdata/schema-v2.db, written by the build
// before tenants (a collection "notes" of three 4-d items with times): it
// migrates, its items are as they were, and it takes tenants.
func TestOpenSchemaV2(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "schema-v2.db")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path, &Options{ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Open of a version-2 file: %v, want ErrReadOnly", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a read-only Open changed the file")
	}
	db, err := Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	var got []Item
	c.ForEachItem(ctx, func(it Item) error { got = append(got, it); return nil })
	if len(got) != 3 || got[0].Key != "a" || got[0].Text != "the user likes Go" || string(got[0].Metadata) != `{"topic":"go"}` ||
		got[0].Created != nanos(10) || got[1].Expires != nanos(1<<62) || got[2].Created.Valid || !equalVec(got[2].Vector, vector.Vector{0, 0, 1, 0.5}) {
		t.Fatalf("items after migration: %+v", got)
	}
	a, err := c.CreateTenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PutItems(ctx, []Item{itemFor(1, 4)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, &Options{CheckIntegrity: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, _ = db.Collection(ctx, "notes")
	if a, err = c.Tenant(ctx, "alice"); err != nil || a.Len() != 1 || c.Len() != 3 {
		t.Fatalf("after reopen: %v", err)
	}
}
