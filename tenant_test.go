package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// tenantModel is what each tenant of each collection must hold: id →
// text, per tenant name; a missing tenant has no entry.
type tenantModel map[string]map[string]map[string]string

// checkTenant asserts that the tenant holds exactly its model's items:
// Count, Get of each, Find of all, and a query for more than it holds
// returns its items and no other tenant's (every item's metadata names
// its tenant and collection). exact says the index returns every item.
func checkTenant(t *testing.T, ctx context.Context, tn *cairn.Tenant, coll string, want map[string]string, exact bool, r *rand.Rand, dim int) {
	t.Helper()
	if n, err := tn.Count(ctx); err != nil || n != len(want) {
		t.Fatalf("%s/%s: Count %d, %v; want %d", coll, tn.Name(), n, err, len(want))
	}
	all, err := tn.Find(ctx, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range all {
		got[it.ID] = it.Text
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%s/%s: Find returned %v, want %v", coll, tn.Name(), got, want)
	}
	hits, err := tn.Query(ctx, randVec(r, dim), len(want)+5, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Metadata["tenant"] != tn.Name() || h.Metadata["coll"] != coll || want[h.ID] != h.Text {
			t.Fatalf("%s/%s: query returned %q %q %v, not one of its items", coll, tn.Name(), h.ID, h.Text, h.Metadata)
		}
	}
	if exact && len(hits) != len(want) {
		t.Fatalf("%s/%s: query returned %d of %d items", coll, tn.Name(), len(hits), len(want))
	}
	for id := range want {
		if _, err := tn.Get(ctx, id); err != nil {
			t.Fatalf("%s/%s: Get %q: %v", coll, tn.Name(), id, err)
		}
	}
}

// TestTenantIsolation runs random operations on the tenants of two
// collections (exact and HNSW) in a file: adds, upserts and deletes of
// ids that every tenant uses, tenants deleted and created again, the
// store closed and reopened, with a memory budget so small that a
// tenant is closed as soon as no call uses it. After every step, the
// tenant it touched holds exactly what the model says, and no query of
// any tenant, or of the collections themselves, returns another's item.
func TestTenantIsolation(t *testing.T) {
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	const dim = 4
	path := filepath.Join(t.TempDir(), "tenants.db")
	opts := &cairn.Options{TenantMemory: 1}
	db, err := cairn.Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	configs := map[string]cairn.CollectionConfig{
		"flat": {Dim: dim, Index: cairn.Flat},
		"hnsw": {Dim: dim, Index: cairn.HNSW, HNSW: hnsw.Options{M: 4, EfConstruction: 16, EfSearch: 32, Seed: 1}},
	}
	for name, cfg := range configs {
		c := mustCollection(t, db, name, cfg)
		// The collections' own items, which no tenant may see.
		if err := c.Add(ctx, cairn.Item{ID: "a", Text: "own", Embedding: randVec(r, dim), Metadata: map[string]any{"tenant": "", "coll": name}}); err != nil {
			t.Fatal(err)
		}
	}
	model := tenantModel{"flat": {}, "hnsw": {}}
	tenants := []string{"alice", "bob", "carol", "dave"}
	ids := []string{"a", "b", "c", "d", "e", "f"}
	steps := 300
	if testing.Short() {
		steps = 100
	}
	for step := range steps {
		coll := []string{"flat", "hnsw"}[r.IntN(2)]
		name := tenants[r.IntN(len(tenants))]
		c, err := db.Collection(ctx, coll)
		if err != nil {
			t.Fatal(err)
		}
		want, exists := model[coll][name]
		op := r.IntN(20)
		switch {
		case op == 0: // reopen
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = cairn.Open(ctx, path, opts); err != nil {
				t.Fatal(err)
			}
			continue
		case op == 1 && exists:
			if err := c.DeleteTenant(ctx, name); err != nil {
				t.Fatalf("step %d: delete tenant: %v", step, err)
			}
			delete(model[coll], name)
			if _, err := c.Tenant(ctx, name); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("step %d: deleted tenant: %v", step, err)
			}
			continue
		case !exists:
			if _, err := c.Tenant(ctx, name); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("step %d: tenant never created or deleted: %v", step, err)
			}
			if _, err := c.CreateTenant(ctx, name); err != nil {
				t.Fatalf("step %d: create tenant: %v", step, err)
			}
			want = map[string]string{}
			model[coll][name] = want
		}
		tn, err := c.Tenant(ctx, name)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		id := ids[r.IntN(len(ids))]
		text := fmt.Sprintf("%s/%s/%s@%d", coll, name, id, step)
		item := cairn.Item{ID: id, Text: text, Embedding: randVec(r, dim), Metadata: map[string]any{"tenant": name, "coll": coll}}
		switch {
		case op < 10:
			if err := tn.Upsert(ctx, item); err != nil {
				t.Fatalf("step %d: upsert: %v", step, err)
			}
			want[id] = text
		case op < 14:
			err := tn.Add(ctx, item)
			if _, taken := want[id]; taken != errors.Is(err, vector.ErrDuplicateID) || (!taken && err != nil) {
				t.Fatalf("step %d: add of %q (taken %v): %v", step, id, taken, err)
			}
			if err == nil {
				want[id] = text
			}
		default:
			err := tn.Delete(ctx, id)
			if _, held := want[id]; held != (err == nil) || (!held && !errors.Is(err, vector.ErrNotFound)) {
				t.Fatalf("step %d: delete of %q (held %v): %v", step, id, held, err)
			}
			delete(want, id)
		}
		checkTenant(t, ctx, tn, coll, want, coll == "flat", r, dim)
		if n, used := db.LoadedTenantsForTest(); n != 0 || used != 0 {
			t.Fatalf("step %d: %d tenants (%d bytes) in memory with no call using them, over a budget of 1 byte", step, n, used)
		}
		if step%50 == 49 {
			for coll, ts := range model {
				c, _ := db.Collection(ctx, coll)
				names, err := c.Tenants(ctx)
				if err != nil || !slices.Equal(names, slices.Sorted(maps.Keys(ts))) {
					t.Fatalf("step %d: Tenants of %s: %v, %v; want %v", step, coll, names, err, slices.Sorted(maps.Keys(ts)))
				}
				for name, want := range ts {
					tn, err := c.Tenant(ctx, name)
					if err != nil {
						t.Fatal(err)
					}
					checkTenant(t, ctx, tn, coll, want, coll == "flat", r, dim)
				}
				hits, err := c.Query(ctx, randVec(r, dim), 50, nil)
				if err != nil || len(hits) != 1 || hits[0].Text != "own" {
					t.Fatalf("step %d: the collection %s itself returned %v, %v", step, coll, hits, err)
				}
			}
		}
	}
}

// TestTenantsConcurrent has goroutines write to and query their own
// tenants while others are created, deleted and evicted around them
// (a budget of one byte): under -race, and every result is the caller's.
func TestTenantsConcurrent(t *testing.T) {
	ctx := context.Background()
	db, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "t.db"), &cairn.Options{TenantMemory: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "mem", cairn.CollectionConfig{Dim: 4, Index: cairn.Flat})
	const workers, rounds = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			name := fmt.Sprint("user", w)
			tn, err := c.GetOrCreateTenant(ctx, name)
			if err != nil {
				errs <- err
				return
			}
			for i := range rounds {
				it := cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, 4), Metadata: map[string]any{"tenant": name}}
				if err := tn.Add(ctx, it); err != nil {
					errs <- err
					return
				}
				hits, err := tn.Query(ctx, randVec(r, 4), 100, nil)
				if err != nil {
					errs <- err
					return
				}
				if len(hits) != i+1 {
					errs <- fmt.Errorf("%s: %d hits after %d adds", name, len(hits), i+1)
					return
				}
				for _, h := range hits {
					if h.Metadata["tenant"] != name {
						errs <- fmt.Errorf("%s: query returned %v", name, h.Metadata)
						return
					}
				}
			}
		})
	}
	wg.Go(func() { // a tenant created and deleted over and over
		for range rounds {
			tn, err := c.CreateTenant(ctx, "churn")
			if err == nil {
				err = tn.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 0, 0, 0}, Metadata: map[string]any{"tenant": "churn"}})
			}
			if err == nil {
				err = c.DeleteTenant(ctx, "churn")
			}
			if err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, used := db.LoadedTenantsForTest(); n != 0 || used != 0 {
		t.Fatalf("%d tenants (%d bytes) in memory with no call using them, over a budget of 1 byte", n, used)
	}
}

// TestTenantReadsLeaveFileUnchanged: loading tenants, reading them in
// every way and having them evicted writes nothing, HNSW graphs rebuilt
// at load included.
func TestTenantReadsLeaveFileUnchanged(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	c := mustCollection(t, db, "mem", cairn.CollectionConfig{Dim: 4, Index: cairn.HNSW, HNSW: hnsw.Options{M: 4, EfConstruction: 16, Seed: 1}})
	for i := range 6 {
		tn, err := c.CreateTenant(ctx, fmt.Sprint("u", i))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 20 {
			if err := tn.Add(ctx, cairn.Item{ID: fmt.Sprint(j), Text: "word", Embedding: randVec(r, 4)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Delete the saved graphs' freshness: one more write after the close
	// saved them would make them stale; instead reopen as is, twice.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := fileSum(t, path)
	for round := range 4 {
		// The last round opens the file read-only: it reads tenants too,
		// and refuses to create or delete one.
		readOnly := round == 3
		db, err := cairn.Open(ctx, path, &cairn.Options{TenantMemory: 1, ReadOnly: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.Collection(ctx, "mem")
		if err != nil {
			t.Fatal(err)
		}
		names, err := c.Tenants(ctx)
		if err != nil || len(names) != 6 {
			t.Fatalf("Tenants: %v, %v", names, err)
		}
		for _, name := range names {
			tn, err := c.Tenant(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tn.Query(ctx, randVec(r, 4), 5, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "word"}); err != nil {
				t.Fatal(err)
			}
			if _, err := tn.Get(ctx, "3"); err != nil {
				t.Fatal(err)
			}
			if _, err := tn.Info(ctx); err != nil {
				t.Fatal(err)
			}
			for _, err := range tn.Items(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		if readOnly {
			if _, err := c.CreateTenant(ctx, "new"); !errors.Is(err, sqlitestore.ErrReadOnly) {
				t.Fatalf("a read-only store creates a tenant: %v", err)
			}
			if err := c.DeleteTenant(ctx, "u0"); !errors.Is(err, sqlitestore.ErrReadOnly) {
				t.Fatalf("a read-only store deletes a tenant: %v", err)
			}
			if _, err := c.GetOrCreateTenant(ctx, "new"); !errors.Is(err, sqlitestore.ErrReadOnly) {
				t.Fatalf("a read-only store gets or creates a tenant: %v", err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := fileSum(t, path); got != want {
			t.Fatalf("round %d: the file changed though nothing was written", round)
		}
	}
}

// TestTenantsInMemory: an in-memory store keeps its tenants, whatever
// the budget, and deletes them.
func TestTenantsInMemory(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(&cairn.Options{TenantMemory: 1})
	defer db.Close()
	c := mustCollection(t, db, "mem", cairn.CollectionConfig{Dim: 2})
	a, err := c.CreateTenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTenant(ctx, "a"); !errors.Is(err, cairn.ErrTenantExists) {
		t.Fatalf("second a: %v", err)
	}
	if err := a.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	b, err := c.GetOrCreateTenant(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := db.LoadedTenantsForTest(); n != 2 {
		t.Fatalf("%d tenants in memory, want both", n)
	}
	if n, _ := a.Count(ctx); n != 1 {
		t.Fatalf("a holds %d items after b was loaded", n)
	}
	if n, _ := b.Count(ctx); n != 0 {
		t.Fatalf("b holds %d items", n)
	}
	if names, _ := c.Tenants(ctx); !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("Tenants: %v", names)
	}
	if err := c.DeleteTenant(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Count(ctx); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("deleted tenant: %v", err)
	}
	if err := c.DeleteTenant(ctx, "a"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := db.DeleteCollection(ctx, "mem"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Count(ctx); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("tenant of a deleted collection: %v", err)
	}
}

// TestNamesNotUTF8 checks that a collection or tenant name that is not
// valid UTF-8 is refused, in memory and in a file: JSON (an export, MCP)
// would turn its bytes into U+FFFD, and two tenants that differ only
// there into one.
func TestNamesNotUTF8(t *testing.T) {
	ctx := context.Background()
	for _, file := range []bool{false, true} {
		db := cairn.OpenMemory(nil)
		if file {
			var err error
			if db, err = cairn.Open(ctx, filepath.Join(t.TempDir(), "n.cairn"), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.CreateCollection(ctx, "c\xff", cairn.CollectionConfig{Dim: 2}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("file %v: collection c\\xff: %v, want ErrInvalidOptions", file, err)
		}
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
		for _, name := range []string{"t\xff", "\xc3"} {
			if _, err := c.GetOrCreateTenant(ctx, name); !errors.Is(err, vector.ErrInvalidOptions) {
				t.Errorf("file %v: tenant %q: %v, want ErrInvalidOptions", file, name, err)
			}
		}
		if _, err := c.CreateTenant(ctx, "t\ufffd"); err != nil {
			t.Errorf("file %v: tenant t\\ufffd (valid UTF-8): %v", file, err)
		}
		db.Close()
	}
}

// TestTenantsOfDeletedCollection deletes a collection while goroutines
// write to and query its tenants: every call succeeds or fails with
// vector.ErrNotFound, and none succeeds after the delete returned.
func TestTenantsOfDeletedCollection(t *testing.T) {
	ctx := context.Background()
	db, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "t.db"), &cairn.Options{TenantMemory: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "gone", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	var (
		wg      sync.WaitGroup
		deleted = make(chan struct{})
		errs    = make(chan error, 8)
	)
	for w := range 4 {
		wg.Go(func() {
			tn, err := c.GetOrCreateTenant(ctx, fmt.Sprint("u", w%2))
			if err != nil {
				if !errors.Is(err, vector.ErrNotFound) { // deleted already
					errs <- err
				}
				return
			}
			for i := 0; ; i++ {
				select {
				case <-deleted:
					if err := tn.Add(ctx, cairn.Item{ID: fmt.Sprint(w, "-", i), Embedding: []float32{1, 1}}); !errors.Is(err, vector.ErrNotFound) {
						errs <- fmt.Errorf("add after the delete: %v", err)
					}
					return
				default:
				}
				err := tn.Add(ctx, cairn.Item{ID: fmt.Sprint(w, "-", i), Embedding: []float32{1, float32(i)}})
				if err == nil {
					_, err = tn.Query(ctx, []float32{1, 0}, 3, nil)
				}
				if err != nil && !errors.Is(err, vector.ErrNotFound) {
					errs <- err
					return
				}
			}
		})
	}
	for {
		if n, _ := db.LoadedTenantsForTest(); n > 0 {
			break
		}
		runtime.Gosched()
	}
	if err := db.DeleteCollection(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	close(deleted)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c = mustCollection(t, db, "gone", cairn.CollectionConfig{Dim: 2})
	if names, err := c.Tenants(ctx); err != nil || len(names) != 0 {
		t.Fatalf("a collection made again under the name has tenants %v, %v", names, err)
	}
}

// TestGetOrCreateTenantRace: goroutines getting or creating one tenant,
// beside lookups of it and deletes of another, all get it, and it is
// created once.
func TestGetOrCreateTenantRace(t *testing.T) {
	ctx := context.Background()
	db, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "t.db"), &cairn.Options{TenantMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "mem", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				name := fmt.Sprint("t", i)
				switch w % 4 {
				case 0:
					if _, err := c.Tenant(ctx, name); err != nil && !errors.Is(err, vector.ErrNotFound) {
						errs <- err
					}
				case 1:
					if err := c.DeleteTenant(ctx, "other"); err != nil && !errors.Is(err, vector.ErrNotFound) {
						errs <- err
					}
				default:
					tn, err := c.GetOrCreateTenant(ctx, name)
					if err == nil {
						_, err = tn.Count(ctx)
					}
					if err != nil {
						errs <- fmt.Errorf("get or create %s: %w", name, err)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	names, err := c.Tenants(ctx)
	if err != nil || len(names) != 20 {
		t.Fatalf("%d tenants (%v), want 20", len(names), err)
	}
}

// TestCanceledContextChangesNothing creates and deletes collections and
// tenants with a canceled context, in memory and in a file: each call
// fails with context.Canceled and changes nothing (in memory they used
// to succeed).
func TestCanceledContextChangesNothing(t *testing.T) {
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, file := range []bool{false, true} {
		db := cairn.OpenMemory(nil)
		if file {
			var err error
			if db, err = cairn.Open(ctx, filepath.Join(t.TempDir(), "x.cairn"), nil); err != nil {
				t.Fatal(err)
			}
		}
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
		if _, err := c.CreateTenant(ctx, "kept"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateCollection(done, "new", cairn.CollectionConfig{Dim: 2}); !errors.Is(err, context.Canceled) {
			t.Errorf("file %v: CreateCollection: %v", file, err)
		}
		if _, err := c.CreateTenant(done, "new"); !errors.Is(err, context.Canceled) {
			t.Errorf("file %v: CreateTenant: %v", file, err)
		}
		if err := c.DeleteTenant(done, "kept"); !errors.Is(err, context.Canceled) {
			t.Errorf("file %v: DeleteTenant: %v", file, err)
		}
		if err := db.DeleteCollection(done, "c"); !errors.Is(err, context.Canceled) {
			t.Errorf("file %v: DeleteCollection: %v", file, err)
		}
		infos, err := db.Collections(ctx)
		if err != nil || len(infos) != 1 || infos[0].Name != "c" {
			t.Errorf("file %v: collections after: %+v, %v", file, infos, err)
		}
		if names, err := c.Tenants(ctx); err != nil || !slices.Equal(names, []string{"kept"}) {
			t.Errorf("file %v: tenants after: %v, %v", file, names, err)
		}
		db.Close()
	}
}

// TestDeleteTenantRacingHistory deletes a tenant while its history is
// read (History, AsOf, a dry-run Restore), round after round: each read
// succeeds before the delete or fails with ErrNotFound, never with the
// ErrClosed of the history's dropped rows.
func TestDeleteTenantRacingHistory(t *testing.T) {
	ctx := context.Background()
	db, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := mustCollection(t, db, "h", cairn.CollectionConfig{Dim: 4, Index: cairn.Flat, KeepHistory: &cairn.HistoryPolicy{Versions: 3}})
	for round := range 30 {
		tn, err := c.CreateTenant(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := tn.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, float32(i), 0, 0}}); err != nil {
				t.Fatal(err)
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for reader := range 3 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					switch reader {
					case 0:
						_, err = tn.History(ctx, "a")
					case 1:
						var s *cairn.Snapshot
						if s, err = tn.AsOf(ctx, time.Now()); err == nil {
							s.Close()
						}
					case 2:
						_, err = tn.Restore(ctx, time.Now(), &cairn.RestoreOptions{DryRun: true})
					}
					if err != nil && !errors.Is(err, vector.ErrNotFound) {
						t.Errorf("round %d, reader %d: %v, want nil or ErrNotFound", round, reader, err)
						return
					}
				}
			})
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		if err := c.DeleteTenant(ctx, "t"); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}

// TestMadeAgainHasNoPast: a tenant, and a collection, deleted and made
// again under its name, with history kept, starts empty and with a
// history of its own: History has none of the deleted one's versions,
// and AsOf and Restore to a time the deleted one knew are
// ErrBeforeHistory, not a merge of the two. In a file the new one even
// gets the deleted one's row id. The same in memory, in a file and in a
// file reopened between the delete and the create.
func TestMadeAgainHasNoPast(t *testing.T) {
	type space interface {
		Add(context.Context, ...cairn.Item) error
		Find(context.Context, *cairn.Filter, int) ([]cairn.Item, error)
		History(context.Context, string) ([]cairn.Version, error)
		AsOf(context.Context, time.Time) (*cairn.Snapshot, error)
		Restore(context.Context, time.Time, *cairn.RestoreOptions) (cairn.Restored, error)
	}
	for _, mode := range []string{"memory", "file", "reopened"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			clk := cairn.NewFakeClock()
			path := filepath.Join(t.TempDir(), "again.cairn")
			open := func() *cairn.DB {
				if mode == "memory" {
					db := cairn.OpenMemory(nil)
					db.SetClockForTest(clk.Now)
					return db
				}
				db, err := cairn.Open(ctx, path, nil)
				if err != nil {
					t.Fatal(err)
				}
				db.SetClockForTest(clk.Now)
				return db
			}
			db := open()
			defer func() { db.Close() }()
			cfg := cairn.CollectionConfig{Dim: 2, Index: cairn.Flat, KeepHistory: &cairn.HistoryPolicy{}}
			// fill writes the first lineage's items; check makes s
			// again with made and checks it.
			fill := func(s space) time.Time {
				t.Helper()
				if err := s.Add(ctx, cairn.Item{ID: "old", Text: "old", Embedding: []float32{1, 0}},
					cairn.Item{ID: "both", Text: "old", Embedding: []float32{1, 1}}); err != nil {
					t.Fatal(err)
				}
				clk.Advance(time.Second)
				then := clk.Now()
				clk.Advance(time.Second)
				return then
			}
			check := func(what string, then time.Time, del func(), made func() space) {
				t.Helper()
				del()
				if mode == "reopened" {
					db.Close()
					db = open()
				}
				clk.Advance(time.Second)
				s := made()
				clk.Advance(time.Second)
				if items, err := s.Find(ctx, nil, 0); err != nil || len(items) != 0 {
					t.Fatalf("%s made again: Find %v, %v; want none", what, items, err)
				}
				if err := s.Add(ctx, cairn.Item{ID: "both", Text: "new", Embedding: []float32{1, 1}}); err != nil {
					t.Fatal(err)
				}
				if vs, err := s.History(ctx, "old"); !errors.Is(err, vector.ErrNotFound) {
					t.Errorf("%s: History of an id only the deleted one had: %v, %v; want ErrNotFound", what, vs, err)
				}
				vs, err := s.History(ctx, "both")
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					if !v.Absent && v.Item.Text != "new" {
						t.Errorf("%s: History of an id both had holds the deleted one's version %+v", what, v)
					}
				}
				if _, err := s.AsOf(ctx, then); !errors.Is(err, cairn.ErrBeforeHistory) {
					t.Errorf("%s: AsOf a time of the deleted one: %v, want ErrBeforeHistory", what, err)
				}
				for _, dry := range []bool{true, false} {
					if r, err := s.Restore(ctx, then, &cairn.RestoreOptions{DryRun: dry}); !errors.Is(err, cairn.ErrBeforeHistory) {
						t.Errorf("%s: Restore (dry run %v) to a time of the deleted one: %+v, %v; want ErrBeforeHistory", what, dry, r, err)
					}
				}
			}
			collection := func() *cairn.Collection {
				c, err := db.Collection(ctx, "c")
				if err != nil {
					t.Fatal(err)
				}
				return c
			}

			c := mustCollection(t, db, "c", cfg)
			tn, err := c.CreateTenant(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			then := fill(tn)
			check("tenant", then, func() {
				if err := c.DeleteTenant(ctx, "alice"); err != nil {
					t.Fatal(err)
				}
			}, func() space {
				tn, err := collection().CreateTenant(ctx, "alice")
				if err != nil {
					t.Fatal(err)
				}
				return tn
			})

			then = fill(collection())
			check("collection", then, func() {
				if err := db.DeleteCollection(ctx, "c"); err != nil {
					t.Fatal(err)
				}
			}, func() space { return mustCollection(t, db, "c", cfg) })
		})
	}
}
