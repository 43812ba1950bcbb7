package cairn_test

// This file holds the tests of the DB's sweep of idle tenants
// (idlesweep.go): what is due in a tenant that no call loads leaves the
// file all the same.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// tenantFileCounts opens the file at path read-only, beside its writer,
// and returns how many items the tenant of coll holds in it, how many of
// them have expired by now, and how many history states it keeps (-1,
// -1, -1 if the tenant is not in the file). With histFor set, states
// counts only those that ended before now - histFor.
func tenantFileCounts(t *testing.T, path, coll, tenant string, now time.Time, histFor ...time.Duration) (items, expired, states int) {
	t.Helper()
	ctx := context.Background()
	sdb, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	c, err := sdb.Collection(ctx, coll)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := c.Tenant(ctx, tenant)
	if errors.Is(err, vector.ErrNotFound) {
		return -1, -1, -1
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.ForEachItem(ctx, func(it sqlitestore.Item) error {
		items++
		if it.Expires.Valid && it.Expires.Int64 <= now.UnixNano() {
			expired++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cutoff := int64(1<<63 - 1)
	if len(histFor) > 0 {
		cutoff = now.Add(-histFor[0]).UnixNano()
	}
	if err := tc.ForEachPast(ctx, func(p sqlitestore.Past) error {
		if p.Until < cutoff {
			states++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return items, expired, states
}

// waitFile wakes db's sweep of idle tenants until cond holds of the file,
// or fails t after 10 s: a sweep that is woken takes milliseconds, and
// the margin is for a loaded machine.
func waitFile(t *testing.T, db *cairn.DB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after 10s", what)
		}
		db.WakeIdleSweepForTest()
		time.Sleep(20 * time.Millisecond)
	}
}

// idleTenantFile writes, at clk's time, a file with the collection "c"
// (keeping history with hist, if not nil) and the given tenants, each
// holding items "keep" (no expiry) and "e0".."e{n-1}", which expire in an
// hour; "h" also has an item replaced, for a history state. It returns
// the file's path, closed.
func idleTenantFile(t *testing.T, clk *cairn.FakeClock, hist *cairn.HistoryPolicy, n int, tenants ...string) string {
	t.Helper()
	return idleTenantFileOf(t, clk, cairn.CollectionConfig{Dim: 2, Index: cairn.Flat, KeepHistory: hist}, n, tenants...)
}

// idleTenantFileOf is idleTenantFile with the collection's config.
func idleTenantFileOf(t *testing.T, clk *cairn.FakeClock, cfg cairn.CollectionConfig, n int, tenants ...string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db := timeStore(t, path, clk, true)
	c := mustCollection(t, db, "c", cfg)
	for _, name := range tenants {
		tn, err := c.CreateTenant(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		items := []cairn.Item{{ID: "keep", Embedding: []float32{1, 0}, Text: "kept"}}
		for i := range n {
			items = append(items, cairn.Item{ID: fmt.Sprint("e", i), Embedding: []float32{0, 1}, Text: "forget me",
				ExpiresAt: clk.Now().Add(time.Hour)})
		}
		if err := tn.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
		if err := tn.Upsert(ctx, cairn.Item{ID: "keep", Embedding: []float32{1, 1}, Text: "kept, again"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIdleTenantExpiredLeavesFile: a tenant that no call loads after a
// reopen has its expired items removed from the file by the DB's sweep,
// and is not left loaded; a tenant whose items have not expired is not
// touched; nothing of either is lost.
func TestIdleTenantExpiredLeavesFile(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	path := idleTenantFile(t, clk, nil, 5, "alice")
	// bob's items expire in two days.
	db := timeStore(t, path, clk, true)
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := c.CreateTenant(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 0}, ExpiresAt: clk.Now().Add(48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = timeStore(t, path, clk, true)
	if _, err := db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.LoadedTenantsForTest(); n != 0 {
		t.Fatalf("%d tenants loaded before any is due", n)
	}
	clk.Advance(2 * time.Hour)
	waitFile(t, db, "alice's expired items in the file", func() bool {
		_, expired, _ := tenantFileCounts(t, path, "c", "alice", clk.Now())
		return expired == 0
	})
	if items, _, _ := tenantFileCounts(t, path, "c", "alice", clk.Now()); items != 1 {
		t.Fatalf("alice holds %d items in the file, want 1 (keep)", items)
	}
	if items, _, _ := tenantFileCounts(t, path, "c", "bob", clk.Now()); items != 1 {
		t.Fatalf("bob holds %d items in the file, want 1 (unexpired)", items)
	}
	// The swept tenant is not left in memory.
	deadline := time.Now().Add(5 * time.Second)
	for n, _ := db.LoadedTenantsForTest(); n != 0; n, _ = db.LoadedTenantsForTest() {
		if time.Now().After(deadline) {
			t.Fatalf("%d tenants still loaded after the sweep", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, _ = db.Collection(ctx, "c")
	alice, err := c.Tenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if its, err := alice.Get(ctx, "keep"); err != nil || its[0].Text != "kept, again" {
		t.Fatalf("alice's keep: %+v, %v", its, err)
	}
}

// TestIdleTenantSweptOnTime: with the real clock and no wake, the sweep
// sleeps until the soonest ExpiresAt of an idle tenant and removes it
// then.
func TestIdleTenantSweptOnTime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	tn, err := c.CreateTenant(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(500 * time.Millisecond)
	if err := tn.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 0}, ExpiresAt: due}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for {
		items, _, _ := tenantFileCounts(t, path, "c", "t", time.Now())
		if items == 0 {
			break
		}
		if time.Since(due) > 10*time.Second {
			t.Fatalf("the item expired at %v is still in the file at %v", due, time.Now())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIdleTenantHistoryTrimmed: the history states of an idle tenant
// older than KeepHistory.For leave the file; those within it stay.
func TestIdleTenantHistoryTrimmed(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	path := idleTenantFile(t, clk, &cairn.HistoryPolicy{For: 24 * time.Hour}, 0, "h")
	_, _, before := tenantFileCounts(t, path, "c", "h", clk.Now())
	if before == 0 {
		t.Fatal("the tenant keeps no history state to trim")
	}
	db := timeStore(t, path, clk, true)
	if _, err := db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(12 * time.Hour) // within the policy: nothing is due
	for range 5 {
		db.WakeIdleSweepForTest()
		time.Sleep(20 * time.Millisecond)
	}
	if _, _, n := tenantFileCounts(t, path, "c", "h", clk.Now()); n != before {
		t.Fatalf("%d history states within the policy, want %d", n, before)
	}
	clk.Advance(13 * time.Hour)
	waitFile(t, db, "history states past the policy in the file", func() bool {
		_, _, n := tenantFileCounts(t, path, "c", "h", clk.Now(), 24*time.Hour)
		return n == 0
	})
	if items, _, _ := tenantFileCounts(t, path, "c", "h", clk.Now()); items != 1 {
		t.Fatalf("the tenant holds %d items, want 1", items)
	}
}

// TestIdleSweepConcurrentUse: while the sweep loads and closes tenants
// with expired items, calls use the same tenants (reads, writes, deletes
// of tenants and their creation anew): no call fails but with
// ErrNotFound for a tenant deleted, no write is lost, no deleted tenant
// comes back, and every expired item leaves the file.
func TestIdleSweepConcurrentUse(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	var names []string
	for i := range 16 {
		names = append(names, fmt.Sprint("t", i))
	}
	used := names[:12] // the calls use these; only the sweep loads the rest
	// HNSW, so that the graphs the sweep's evictions save are checked.
	path := idleTenantFileOf(t, clk, cairn.CollectionConfig{Dim: 2, Index: cairn.HNSW, HNSW: hnsw.Options{M: 4, EfConstruction: 16, Seed: 1},
		KeepHistory: &cairn.HistoryPolicy{For: time.Hour}}, 20, names...)
	db := timeStore(t, path, clk, true)
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour)
	db.WakeIdleSweepForTest()
	var g sync.WaitGroup
	for i, name := range used {
		g.Go(func() {
			for round := range 5 {
				tn, err := c.Tenant(ctx, name)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if _, err := tn.Count(ctx); err != nil {
					t.Errorf("%s: count: %v", name, err)
					return
				}
				if err := tn.Upsert(ctx, cairn.Item{ID: fmt.Sprint("w", round), Embedding: []float32{1, 0}}); err != nil {
					t.Errorf("%s: upsert: %v", name, err)
					return
				}
				if _, err := tn.Query(ctx, []float32{0, 1}, 3, nil); err != nil {
					t.Errorf("%s: query: %v", name, err)
					return
				}
				db.WakeIdleSweepForTest()
				time.Sleep(time.Millisecond)
			}
			if i%3 == 0 {
				if err := c.DeleteTenant(ctx, name); err != nil {
					t.Errorf("%s: delete: %v", name, err)
				}
			}
			if i%6 == 0 { // anew, empty: nothing of the deleted one comes back
				if _, err := c.CreateTenant(ctx, name); err != nil {
					t.Errorf("%s: create anew: %v", name, err)
				}
			}
		})
	}
	g.Wait()
	for i, name := range names {
		if i < len(used) && i%3 == 0 {
			want := -1 // deleted
			if i%6 == 0 {
				want = 0 // created anew
			}
			for range 5 { // give a sweep time to bring something back
				db.WakeIdleSweepForTest()
				time.Sleep(10 * time.Millisecond)
			}
			if items, _, states := tenantFileCounts(t, path, "c", name, clk.Now()); items != want || states > 0 {
				t.Fatalf("%s deleted: %d items, %d history states in the file; want %d, 0", name, items, states, want)
			}
			continue
		}
		waitFile(t, db, name+"'s expired items and old history in the file", func() bool {
			_, expired, old := tenantFileCounts(t, path, "c", name, clk.Now(), time.Hour)
			return expired == 0 && old == 0
		})
		want := 6 // keep and five writes
		if i >= len(used) {
			want = 1
		}
		if items, _, _ := tenantFileCounts(t, path, "c", name, clk.Now()); items != want {
			t.Fatalf("%s holds %d items in the file, want %d", name, items, want)
		}
		tn, err := c.Tenant(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := tn.Count(ctx); err != nil || n != want {
			t.Fatalf("%s: count %d, %v; want %d", name, n, err, want)
		}
	}
	got, err := c.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 14 {
		t.Fatalf("tenants %v: want the 12 not deleted and 2 created anew", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := cairn.Check(ctx, path, nil)
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	// Reopened, each tenant's graph (saved at its eviction or at Close)
	// finds every item it holds, and no other.
	db = timeStore(t, path, clk, false)
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if i < len(used) && i%3 == 0 {
			if i%6 == 0 {
				tn, err := c.Tenant(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if n, err := tn.Count(ctx); err != nil || n != 0 {
					t.Fatalf("%s created anew: %d items, %v", name, n, err)
				}
			}
			continue
		}
		tn, err := c.Tenant(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		want := 6
		if i >= len(used) {
			want = 1
		}
		if rs, err := tn.Query(ctx, []float32{0, 1}, 10, nil); err != nil || len(rs) != want {
			t.Fatalf("%s reopened: query found %d, %v; want %d", name, len(rs), err, want)
		}
	}
}

// TestIdleSweepClose: Close during a sweep of many due tenants returns
// soon, leaves the sweep's goroutine ended and the file sound; the next
// open finishes the sweep.
func TestIdleSweepClose(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprint("t", i))
	}
	path := idleTenantFile(t, clk, nil, 10, names...)
	clk.Advance(2 * time.Hour)
	db := timeStore(t, path, clk, true)
	started := make(chan struct{})
	var once sync.Once
	db.SetSweptHookForTest(func(coll string, removed int, err error) {
		if removed > 0 {
			once.Do(func() { close(started) })
		}
	})
	if _, err := db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("no tenant swept in 5s")
	}
	start := time.Now()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close during a sweep took %v", d)
	}
	if db.IdleSweepRunningForTest() {
		t.Fatal("the sweep of idle tenants runs after Close")
	}
	rep, err := cairn.Check(ctx, path, nil)
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check after Close during a sweep: %+v, %v", rep, err)
	}
	db = timeStore(t, path, clk, true)
	if _, err := db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		waitFile(t, db, name+"'s expired items", func() bool {
			items, expired, _ := tenantFileCounts(t, path, "c", name, clk.Now())
			return expired == 0 && items == 1
		})
	}
}

// TestIdleSweepReadOnly: a read-only DB does not sweep idle tenants: the
// file's bytes are as they were, though their items have expired.
func TestIdleSweepReadOnly(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	path := idleTenantFile(t, clk, &cairn.HistoryPolicy{For: time.Minute}, 3, "a", "b")
	clk.Advance(2 * time.Hour)
	want := fileSum(t, path)
	db, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.SetClockForTest(clk.Now)
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	tn, err := c.Tenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tn.Count(ctx); err != nil || n != 1 {
		t.Fatalf("read-only count %d, %v; want 1 (the expired hidden)", n, err)
	}
	for range 5 {
		db.WakeIdleSweepForTest()
		time.Sleep(20 * time.Millisecond)
	}
	if db.IdleSweepRunningForTest() {
		t.Fatal("a read-only DB runs the sweep of idle tenants")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, path) != want {
		t.Fatal("a read-only DB changed the file")
	}
	if _, expired, _ := tenantFileCounts(t, path, "c", "b", clk.Now()); expired != 3 {
		t.Fatalf("b has %d expired items in the file, want 3", expired)
	}
}

// TestIdleSweepKeepsBudget: with a TenantMemory that holds one tenant, the
// sweep's load of an idle tenant does not push out the tenant a call
// loaded: the swept tenant is closed first.
func TestIdleSweepKeepsBudget(t *testing.T) {
	ctx := context.Background()
	clk := cairn.NewFakeClock()
	path := idleTenantFile(t, clk, nil, 1, "idle")
	db, err := cairn.Open(ctx, path, &cairn.Options{TenantMemory: 30000}) // one 2-d tenant of a few items
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetClockForTest(clk.Now)
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	busy, err := c.CreateTenant(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	if err := busy.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.LoadedTenantsForTest(); n != 1 {
		t.Fatalf("%d tenants loaded, want 1 (busy)", n)
	}
	clk.Advance(2 * time.Hour)
	waitFile(t, db, "the idle tenant's expired item in the file", func() bool {
		_, expired, _ := tenantFileCounts(t, path, "c", "idle", clk.Now())
		return expired == 0
	})
	deadline := time.Now().Add(5 * time.Second)
	loaded := c.LoadedTenantNamesForTest()
	for ; slices.Contains(loaded, "idle") && time.Now().Before(deadline); loaded = c.LoadedTenantNamesForTest() {
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(loaded, []string{"busy"}) {
		t.Fatalf("tenants loaded after the sweep: %v, want [busy]", loaded)
	}
	if _, err := busy.Count(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.LoadedTenantsForTest(); n != 1 {
		t.Fatalf("%d tenants loaded after a call on busy, want 1", n)
	}
}

// TestIdleSweepGap: with a TenantMemory that holds one tenant, every call
// to another tenant evicts one, and each eviction wakes the sweep of idle
// tenants; the wakes of a run of evictions are served by a pass a
// second, not a pass each.
func TestIdleSweepGap(t *testing.T) {
	ctx := context.Background()
	db, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "t.db"), &cairn.Options{TenantMemory: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var passes atomic.Int64
	db.SetIdleSweptHookForTest(func(int, error) { passes.Add(1) })
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat, TTL: time.Hour})
	const tenants = 8
	for i := range tenants {
		tn, err := c.CreateTenant(ctx, fmt.Sprint("t", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := tn.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 0}}); err != nil {
			t.Fatal(err)
		}
	}
	start, before := time.Now(), passes.Load()
	const calls = 200
	for i := range calls {
		tn, err := c.Tenant(ctx, fmt.Sprint("t", i%tenants))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tn.Get(ctx, "x"); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	if n, _ := db.LoadedTenantsForTest(); n > 1 {
		t.Fatalf("%d tenants loaded, want at most 1: the calls did not evict", n)
	}
	// A pass at the start, then one a second at most.
	if got, most := passes.Load()-before, 2+int64(elapsed/time.Second); got > most {
		t.Fatalf("%d calls, each evicting a tenant, in %v: %d passes of the sweep, want at most %d", calls, elapsed.Round(time.Millisecond), got, most)
	}
}
