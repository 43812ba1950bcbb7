package cairn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// slowPersister is a persister whose loads wait until gate is closed, as
// the load of a large collection takes its time.
type slowPersister struct {
	gate  chan struct{}
	loads atomic.Int32
}

func (p *slowPersister) create(_ context.Context, _ string, cfg CollectionConfig) (backend, error) {
	return newMemBackend(cfg)
}

func (p *slowPersister) load(ctx context.Context, name string) (backend, CollectionConfig, error) {
	p.loads.Add(1)
	select {
	case <-p.gate:
	case <-ctx.Done():
		return nil, CollectionConfig{}, ctx.Err()
	}
	if name != "big" {
		return nil, CollectionConfig{}, vector.ErrNotFound
	}
	cfg := CollectionConfig{Dim: 2}.withDefaults()
	be, err := newMemBackend(cfg)
	return be, cfg, err
}

func (p *slowPersister) names(context.Context) ([]string, error) { return []string{"big"}, nil }
func (p *slowPersister) drop(context.Context, string) error      { return nil }
func (p *slowPersister) close() error                            { return nil }

// within returns f's error, failing the test if f takes more than a few
// seconds: it should not wait for the load the test holds up.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited for the load of another collection", what)
	}
	return nil
}

// TestLoadHoldsUpNoOther checks that while one collection loads from the
// file, looking up another, creating one and closing the DB go ahead;
// that two lookups of the collection being loaded share its load; and
// that a load that ends after Close leaves nothing open.
func TestLoadHoldsUpNoOther(t *testing.T) {
	ctx := t.Context()
	db := OpenMemory(nil)
	a, err := db.CreateCollection(ctx, "a", CollectionConfig{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := &slowPersister{gate: make(chan struct{})}
	db.persist = p
	type got struct {
		c   *Collection
		err error
	}
	loaded := make(chan got, 2)
	for range 2 {
		go func() {
			c, err := db.Collection(ctx, "big")
			loaded <- got{c, err}
		}()
	}
	for p.loads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := within(t, "Collection", func() error {
		c, err := db.Collection(ctx, "a")
		if err == nil && c != a {
			err = fmt.Errorf("another collection than a")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := within(t, "CreateCollection", func() error {
		_, err := db.CreateCollection(ctx, "b", CollectionConfig{Dim: 2})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection(ctx, "big", CollectionConfig{Dim: 2}); !errors.Is(err, ErrCollectionExists) {
		t.Fatalf("CreateCollection of the collection being loaded: %v", err)
	}
	close(p.gate)
	one, two := <-loaded, <-loaded
	if one.err != nil || two.err != nil || one.c != two.c || p.loads.Load() != 1 {
		t.Fatalf("lookups during the load: %v, %v, same %v, %d loads; want one load for both", one.err, two.err, one.c == two.c, p.loads.Load())
	}

	// Close does not wait for a load either; the load then gives up.
	db2 := OpenMemory(nil)
	p2 := &slowPersister{gate: make(chan struct{})}
	db2.persist = p2
	late := make(chan error, 1)
	go func() {
		_, err := db2.Collection(ctx, "big")
		late <- err
	}()
	for p2.loads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := within(t, "Close", db2.Close); err != nil {
		t.Fatal(err)
	}
	close(p2.gate)
	if err := <-late; !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("a load that ended after Close: %v, want ErrClosed", err)
	}
	if len(db2.colls) != 0 || len(db2.loading) != 0 {
		t.Fatalf("after Close: %d collections, %d loads", len(db2.colls), len(db2.loading))
	}
	db.Close()
}

// targetFile makes a file at path with a collection "c" of 600 items in
// a graph with a recall target, and returns its DB, open.
func targetFile(t *testing.T, path string) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 8, Index: HNSW,
		HNSW: hnsw.Options{TargetRecall: 0.9, M: 4, EfConstruction: 16}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	items := make([]Item, targetItems)
	for i := range items {
		items[i] = Item{ID: fmt.Sprint(i), Embedding: randVec(r, 8)}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	return db
}

// targetItems is how many items targetFile writes.
const targetItems = 600

// reopened closes db and returns its file's collection "c", opened
// again; its DB is closed when the test ends.
func reopened(t *testing.T, db *DB, path string) *Collection {
	t.Helper()
	ctx := context.Background()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLoadKeepsTargetCalibrated: a collection with a recall target whose
// graph is loaded from the file answers under the target from its first
// query. The loaded graph used to be searched at the default beam width
// until the calibration its load started ended: in a probe of 4,000 ×
// 32-d uniform vectors at a target of 0.99, which the graph met before the
// Close by searching exactly, recall@10 0.57 after the Open.
func TestLoadKeepsTargetCalibrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.cairn")
	c := reopened(t, targetFile(t, path), path)
	if cal, ok := c.IndexForTest().(*hnsw.Index).Calibration(); !ok || cal.Len != targetItems {
		t.Fatalf("the graph loaded has no calibration of its %d nodes (%v, %+v): its queries go at the default beam width", targetItems, ok, cal)
	}
}

// TestLoadRestoresCalibration: a collection with a recall target saves its
// graph's calibration with the graph, and the next Open puts it back: the
// graph answers at the beam width it chose from its first query, and no
// calibration runs at the load (one would end with another Took), which
// at 100,000 × 768 used to hold up every Open for seconds.
func TestLoadRestoresCalibration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.cairn")
	db := targetFile(t, path)
	c, err := db.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	want, ok, err := c.IndexForTest().(*hnsw.Index).WaitCalibration(ctx)
	if err != nil || !ok || want.Len != targetItems {
		t.Fatalf("calibration before the Close: %+v, %v, %v", want, ok, err)
	}
	h := reopened(t, db, path).IndexForTest().(*hnsw.Index)
	if got, ok := h.Calibration(); !ok || got != want {
		t.Fatalf("calibration after the Open: %+v, %v; want the saved %+v", got, ok, want)
	}
	if got, _, _ := h.WaitCalibration(ctx); got != want {
		t.Fatalf("a calibration ran after the Open: %+v, want the saved %+v", got, want)
	}
}
