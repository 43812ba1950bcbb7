// This file holds the tests of where a routed Auto collection (a recall
// target, AutoThreshold left at zero) starts measuring: from
// routedAutoThreshold items, not DefaultAutoThreshold.

package cairn

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
)

// TestRoutedDefaultThreshold: an Auto collection with a recall target and
// no AutoThreshold first measures at routedAutoThreshold items (it
// stayed exact until 20,000 before), keeps that threshold across reopen,
// and one whose file holds another threshold (the old default) keeps it.
func TestRoutedDefaultThreshold(t *testing.T) {
	ctx := context.Background()
	if got := (CollectionConfig{Dim: 4}).withDefaults().AutoThreshold; got != DefaultAutoThreshold {
		t.Errorf("AutoThreshold without a target = %d, want %d", got, DefaultAutoThreshold)
	}
	explicit := CollectionConfig{Dim: 4, AutoThreshold: 7000, HNSW: hnsw.Options{TargetRecall: 0.9}}
	if got := explicit.withDefaults().AutoThreshold; got != 7000 {
		t.Errorf("an explicit AutoThreshold with a target became %d", got)
	}
	verdict, calls := HNSW, 0
	stubRoute(t, &verdict, &calls)
	path := filepath.Join(t.TempDir(), "routed.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "r", CollectionConfig{Dim: 16, HNSW: hnsw.Options{TargetRecall: 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	// The old default, as a file written before the routed default would
	// hold it.
	old, err := db.CreateCollection(ctx, "old", CollectionConfig{Dim: 16, AutoThreshold: DefaultAutoThreshold, HNSW: hnsw.Options{TargetRecall: 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Config().AutoThreshold; got != routedAutoThreshold {
		t.Fatalf("AutoThreshold of a routed collection = %d, want %d", got, routedAutoThreshold)
	}
	base := recall.Clustered(routedAutoThreshold, 0, 16, 3).Base
	addRange(t, c, base, 0, len(base)-1)
	addRange(t, old, base, 0, len(base))
	if calls != 0 || mustInfo(t, c).Index != Flat {
		t.Fatalf("below the threshold: %d measurements, index %v; want none, flat", calls, mustInfo(t, c).Index)
	}
	addRange(t, c, base, len(base)-1, len(base))
	if calls != 1 || mustInfo(t, c).Index != HNSW {
		t.Fatalf("at %d items: %d measurements, index %v; want 1, hnsw", len(base), calls, mustInfo(t, c).Index)
	}
	if mustInfo(t, old).Index != Flat {
		t.Fatalf("a collection stored with AutoThreshold %d switched at %d items", DefaultAutoThreshold, len(base))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, want := range map[string]int{"r": routedAutoThreshold, "old": DefaultAutoThreshold} {
		c, err := db.Collection(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Config().AutoThreshold; got != want {
			t.Errorf("reopened %q: AutoThreshold %d, want %d", name, got, want)
		}
	}
}
