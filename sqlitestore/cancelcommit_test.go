package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// cancelSoon returns a context cancelled within the next 2ms, at a random
// moment: now and then under the COMMIT of the call it is given to.
func cancelSoon(r *rand.Rand) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Duration(r.IntN(2000))*time.Microsecond, cancel)
	return ctx, cancel
}

// TestCancelledCommitTellsTheTruth: a change whose ctx is cancelled while
// it runs either fails and is not made or succeeds and is made, as the
// DB sees it and as the file does. The driver reports a COMMIT under which
// ctx ends as failed even when it committed: CreateCollection then failed
// with "COMMIT: context canceled" while the file held the collection, so
// that Collection said it was not there and CreateCollection that its name
// was taken, and DropCollection and DropTenant failed with the collection
// or tenant gone from the file but not from the DB.
func TestCancelledCommitTellsTheTruth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	db, path := openTemp(t, nil)
	bg := context.Background()
	cfg := CollectionConfig{Dim: 4, Metric: vector.L2}
	present := map[string]bool{} // collection name, or "name/tenant"
	for i := range 150 {
		name := fmt.Sprint("c", i)
		ctx, cancel := cancelSoon(r)
		_, err := db.CreateCollection(ctx, name, cfg)
		cancel()
		_, gerr := db.Collection(bg, name)
		if (err == nil) != (gerr == nil) {
			t.Fatalf("CreateCollection(%s): %v, then Collection: %v", name, err, gerr)
		}
		if err != nil {
			if _, err := db.CreateCollection(bg, name, cfg); err != nil {
				t.Fatalf("CreateCollection(%s) again after a failed one: %v", name, err)
			}
		}
		c, err := db.Collection(bg, name)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel = cancelSoon(r)
		_, err = c.CreateTenant(ctx, "t")
		cancel()
		_, gerr = c.Tenant(bg, "t")
		if (err == nil) != (gerr == nil) {
			t.Fatalf("CreateTenant of %s: %v, then Tenant: %v", name, err, gerr)
		}
		if err != nil {
			if _, err := c.CreateTenant(bg, "t"); err != nil {
				t.Fatalf("CreateTenant of %s again after a failed one: %v", name, err)
			}
		}
		ctx, cancel = cancelSoon(r)
		err = c.DropTenant(ctx, "t")
		cancel()
		_, gerr = c.Tenant(bg, "t")
		if (err == nil) != errors.Is(gerr, vector.ErrNotFound) {
			t.Fatalf("DropTenant of %s: %v, then Tenant: %v", name, err, gerr)
		}
		present[name+"/t"] = err != nil
		ctx, cancel = cancelSoon(r)
		err = db.DropCollection(ctx, name)
		cancel()
		_, gerr = db.Collection(bg, name)
		if (err == nil) != errors.Is(gerr, vector.ErrNotFound) {
			t.Fatalf("DropCollection(%s): %v, then Collection: %v", name, err, gerr)
		}
		if present[name] = err != nil; err != nil {
			if err := c.PutItems(bg, []Item{itemFor(1, 4)}); err != nil {
				t.Fatalf("PutItems into %s after a failed DropCollection: %v", name, err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(bg, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 150 {
		name := fmt.Sprint("c", i)
		c, err := db.Collection(bg, name)
		if (err == nil) != present[name] {
			t.Fatalf("reopened: collection %s: %v, want present %v", name, err, present[name])
		}
		if err != nil {
			continue
		}
		if _, err := c.Tenant(bg, "t"); (err == nil) != present[name+"/t"] {
			t.Fatalf("reopened: tenant t of %s: %v, want present %v", name, err, present[name+"/t"])
		}
	}
}
