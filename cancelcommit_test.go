package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// TestCancelledCreateDeleteTellTheTruth cancels CreateCollection,
// CreateTenant, DeleteTenant and DeleteCollection at random moments: each
// either fails and changes nothing or succeeds, as the DB says and as the
// file does once reopened. A cancel landing under the store's COMMIT made
// CreateCollection fail with the collection in the file (so that creating
// it again failed on its taken name) and DeleteCollection fail with the
// collection's table gone ("no such table" from the next Add).
func TestCancelledCreateDeleteTellTheTruth(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	soon := func() (context.Context, context.CancelFunc) {
		c, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Duration(r.IntN(3000))*time.Microsecond, cancel)
		return c, cancel
	}
	cfg := cairn.CollectionConfig{Dim: 4, Index: cairn.Flat, KeepHistory: &cairn.HistoryPolicy{}}
	present := map[string]bool{}
	for i := range 80 {
		name := fmt.Sprint("c", i)
		cctx, cancel := soon()
		_, err := db.CreateCollection(cctx, name, cfg)
		cancel()
		_, gerr := db.Collection(ctx, name)
		if (err == nil) != (gerr == nil) {
			t.Fatalf("CreateCollection %s: %v; Collection: %v", name, err, gerr)
		}
		if err != nil {
			if _, err := db.CreateCollection(ctx, name, cfg); err != nil {
				t.Fatalf("again: %v", err)
			}
		}
		c, _ := db.Collection(ctx, name)
		if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 2, 3, 4}}); err != nil {
			t.Fatal(err)
		}
		cctx, cancel = soon()
		_, err = c.CreateTenant(cctx, "t")
		cancel()
		_, gerr = c.Tenant(ctx, "t")
		if (err == nil) != (gerr == nil) {
			t.Fatalf("CreateTenant %s: %v; Tenant: %v", name, err, gerr)
		}
		if err != nil {
			if _, err := c.CreateTenant(ctx, "t"); err != nil {
				t.Fatalf("tenant again: %v", err)
			}
		}
		cctx, cancel = soon()
		err = c.DeleteTenant(cctx, "t")
		cancel()
		_, gerr = c.Tenant(ctx, "t")
		if (err == nil) != errors.Is(gerr, vector.ErrNotFound) {
			t.Fatalf("DeleteTenant %s: %v; Tenant: %v", name, err, gerr)
		}
		present[name+"/t"] = err != nil
		cctx, cancel = soon()
		err = db.DeleteCollection(cctx, name)
		cancel()
		_, gerr = db.Collection(ctx, name)
		if (err == nil) != errors.Is(gerr, vector.ErrNotFound) {
			t.Fatalf("DeleteCollection %s: %v; Collection: %v", name, err, gerr)
		}
		present[name] = err != nil
		if err != nil {
			if err := c.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 2, 3, 5}}); err != nil {
				t.Fatalf("Add after failed delete: %v", err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 80 {
		name := fmt.Sprint("c", i)
		c, err := db.Collection(ctx, name)
		if (err == nil) != present[name] {
			t.Fatalf("reopen %s: %v want %v", name, err, present[name])
		}
		if err == nil {
			if _, err := c.Tenant(ctx, "t"); (err == nil) != present[name+"/t"] {
				t.Fatalf("reopen tenant %s: %v want %v", name, err, present[name+"/t"])
			}
		}
	}
}
