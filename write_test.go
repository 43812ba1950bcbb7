package cairn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// gateBackend lets a test stop a write inside the store: before, if set,
// runs before the write reaches the store (an error from it fails the
// write, which then changes nothing); after, if set, runs once the store
// has done the write, before the collection publishes it — the window in
// which the store and the index are ahead of what readers may see. Set
// the hooks before the writes start.
type gateBackend struct {
	backend
	before func(op string, n int) error
	after  func(op string, n int)
}

func (b *gateBackend) do(op string, n int, write func() error) error {
	if b.before != nil {
		if err := b.before(op, n); err != nil {
			return err
		}
	}
	if err := write(); err != nil {
		return err
	}
	if b.after != nil {
		b.after(op, n)
	}
	return nil
}

// write gates a backend write, named by writeKind, of n = the larger of
// its numbers of rows and of deletes.
func (b *gateBackend) write(ctx context.Context, rows []row, drop []vector.ID, prior []prior) error {
	return b.do(writeKind(rows, drop), max(len(rows), len(drop)), func() error { return b.backend.write(ctx, rows, drop, prior) })
}

// gatedCollection returns a collection of kind over a gateBackend holding
// items "0".."n-1" at (i, 1) under L2 (distances from integer points
// are exact, whatever the kernel).
func gatedCollection(t *testing.T, kind IndexKind, n int) (*Collection, *gateBackend) {
	t.Helper()
	ctx := context.Background()
	_, c, gb := emptyGated(t, CollectionConfig{Dim: 2, Metric: vector.L2, Index: kind})
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{ID: fmt.Sprint(i), Embedding: []float32{float32(i), 1}, Text: fmt.Sprint("text ", i), Metadata: map[string]any{"i": i}}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	return c, gb
}

// emptyGated returns an in-memory DB holding one empty collection "c" of
// cfg over a gateBackend, closed when t ends.
func emptyGated(t *testing.T, cfg CollectionConfig) (*DB, *Collection, *gateBackend) {
	t.Helper()
	db := OpenMemory(nil)
	t.Cleanup(func() { db.Close() })
	cfg = cfg.withDefaults()
	mb, err := newMemBackend(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gb := &gateBackend{backend: mb}
	c, err := newCollection(context.Background(), db, "c", cfg, gb)
	if err != nil {
		t.Fatal(err)
	}
	db.colls["c"] = c
	return db, c, gb
}

// view is everything a reader can see of a collection.
type view struct {
	all, filtered, every []Result
	items                []Item
	count                int
}

func look(t *testing.T, c *Collection, keys ...string) view {
	t.Helper()
	ctx := context.Background()
	var v view
	var err error
	if v.all, err = c.Query(ctx, []float32{4, 1}, 8, nil); err != nil {
		t.Fatal(err)
	}
	if v.filtered, err = c.Query(ctx, []float32{4, 1}, 4, &QueryOptions{Filter: Lt("i", 8)}); err != nil {
		t.Fatal(err)
	}
	if v.every, err = c.Query(ctx, []float32{4, 1}, math.MaxInt, nil); err != nil {
		t.Fatal(err)
	}
	if v.items, err = c.Get(ctx, keys...); err != nil {
		t.Fatal(err)
	}
	v.count = mustCount(t, c)
	return v
}

// settled fails the test unless c holds n items and nothing of a write
// in flight: every version in the store and the index is published, no
// record is claimed, and the key index holds the published keys alone.
func settled(t *testing.T, c *Collection, n int) {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	recs := 0
	for _, pg := range c.cat.recs.pages {
		recs += pg.n
		for _, r := range pg.recs {
			if r != nil && (r.w != nil || !r.published()) {
				t.Fatalf("record %d (%q) is claimed or unpublished", r.id, r.key)
			}
		}
	}
	if c.cat.len() != n || recs != n || c.cat.keys.len() != n || c.st.Len() != n || c.idx.Len() != n || c.cat.ver.Hidden() != 0 {
		t.Fatalf("items %d, records %d, keys %d, store %d, index %d, unpublished %d; want %d and 0",
			c.cat.len(), recs, c.cat.keys.len(), c.st.Len(), c.idx.Len(), c.cat.ver.Hidden(), n)
	}
}

// notDone fails the test if ch yields within a short while: the call
// behind it should be waiting.
func notDone(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) while it should wait", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

func wait(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
	}
	return nil
}

// TestReadersDuringCommit stops writes after the store has done them but
// before they are published, and checks that meanwhile queries, Get and
// Count run (they are not held up by the commit) and see exactly the state
// before the write (a query for every item, k = math.MaxInt, included);
// that writes of other ids go through meanwhile; that a write of the same
// id waits; and that afterwards the write is seen whole.
func TestReadersDuringCommit(t *testing.T) {
	for _, kind := range []IndexKind{Flat, HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			c, gb := gatedCollection(t, kind, 20)
			entered := make(chan string)
			release := make(chan struct{}) // one token lets one write on
			stop := make(chan struct{})    // unblocks everything if the test fails
			t.Cleanup(func() { close(stop) })
			gb.after = func(op string, n int) {
				if n == 2 { // only the batches of two below
					select {
					case entered <- op:
					case <-stop:
						return
					}
					select {
					case <-release:
					case <-stop:
					}
				}
			}
			before := look(t, c, "3", "4", "5")

			// An upsert: "3" moves next to the query, "new" is added.
			upserted := make(chan error, 1)
			go func() {
				upserted <- c.Upsert(ctx,
					Item{ID: "3", Embedding: []float32{4, 2}, Text: "moved", Metadata: map[string]any{"i": 3}},
					Item{ID: "new", Embedding: []float32{4, 1}, Metadata: map[string]any{"i": 1}})
			}()
			if op := <-entered; op != "upsert" {
				t.Fatalf("gated %s, want upsert", op)
			}
			if got := look(t, c, "3", "4", "5"); !reflect.DeepEqual(got, before) {
				t.Fatalf("during the upsert readers see\n%+v\nwant\n%+v", got, before)
			}
			if _, err := c.Get(ctx, "new"); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("Get of an item not yet published: %v", err)
			}
			// A write of other ids goes through meanwhile...
			if err := c.Add(ctx, Item{ID: "other", Embedding: []float32{50, 1}}); err != nil {
				t.Fatal(err)
			}
			// ...and one of an id in flight waits, then sees the outcome.
			added := make(chan error, 1)
			go func() { added <- c.Add(ctx, Item{ID: "new", Embedding: []float32{60, 1}}) }()
			deleted := make(chan error, 1)
			go func() { deleted <- c.Delete(ctx, "3") }()
			notDone(t, added, "Add of an id in flight")
			notDone(t, deleted, "Delete of an id in flight")
			release <- struct{}{}
			if err := wait(t, upserted, "Upsert"); err != nil {
				t.Fatal(err)
			}
			if err := wait(t, added, "Add"); !errors.Is(err, vector.ErrDuplicateID) {
				t.Fatalf("Add of the id just upserted: %v, want ErrDuplicateID", err)
			}
			if err := wait(t, deleted, "Delete"); err != nil {
				t.Fatal(err)
			}
			res, err := c.Query(ctx, []float32{4, 1}, 3, nil)
			if err != nil || len(res) != 3 || res[0].ID != "4" || res[1].ID != "new" || res[2].ID != "5" {
				t.Fatalf("after the writes: %v, %v; want 4, new, 5 (3 deleted)", res, err)
			}
			settled(t, c, 21)

			// A delete, stopped after the store removed the items.
			before = look(t, c, "4", "5")
			deleted = make(chan error, 1)
			go func() { deleted <- c.Delete(ctx, "4", "5") }()
			if op := <-entered; op != "remove" {
				t.Fatalf("gated %s, want remove", op)
			}
			if got := look(t, c, "4", "5"); !reflect.DeepEqual(got, before) {
				t.Fatalf("during the delete readers see\n%+v\nwant\n%+v", got, before)
			}
			release <- struct{}{}
			if err := wait(t, deleted, "Delete"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Get(ctx, "4"); !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("Get after delete: %v", err)
			}
			settled(t, c, 19)
		})
	}
}

// TestSameIDWaitsForFailedWrite checks the other outcome of two Adds of
// one id: when the first fails in the store, the second, which waited for
// it, succeeds; and a cancelled wait changes nothing.
func TestSameIDWaitsForFailedWrite(t *testing.T) {
	for _, kind := range []IndexKind{Flat, HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			c, gb := gatedCollection(t, kind, 5)
			entered := make(chan struct{})
			release := make(chan struct{})
			stop := make(chan struct{})
			t.Cleanup(func() { close(stop) })
			var calls sync.Mutex
			first := true
			gb.before = func(op string, n int) error {
				calls.Lock()
				f := first
				first = false
				calls.Unlock()
				if f {
					select {
					case entered <- struct{}{}:
					case <-stop:
					}
					select {
					case <-release:
					case <-stop:
					}
					return errInjected
				}
				return nil
			}
			one := make(chan error, 1)
			go func() { one <- c.Add(ctx, Item{ID: "x", Embedding: []float32{1, 2}}) }()
			<-entered
			two := make(chan error, 1)
			go func() { two <- c.Add(ctx, Item{ID: "x", Embedding: []float32{3, 4}}) }()
			notDone(t, two, "second Add")
			// A third writer of x gives up waiting when its context ends.
			cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			if err := c.Upsert(cctx, Item{ID: "x", Embedding: []float32{5, 6}}); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Upsert whose context ends while it waits: %v", err)
			}
			close(release)
			if err := wait(t, one, "first Add"); !errors.Is(err, errInjected) {
				t.Fatalf("first Add: %v", err)
			}
			if err := wait(t, two, "second Add"); err != nil {
				t.Fatalf("second Add after the first failed: %v", err)
			}
			got, err := c.Get(ctx, "x")
			if err != nil || !reflect.DeepEqual(got[0].Embedding, []float32{3, 4}) {
				t.Fatalf("Get(x) = %v, %v; want the second Add's vector", got, err)
			}
			settled(t, c, 6)
		})
	}
}

// TestWritersShareTheStore checks that writers of different ids are in the
// store at the same time: each of n writers waits inside the store until
// all n have arrived, which the old design (one writer at a time) could
// never satisfy.
func TestWritersShareTheStore(t *testing.T) {
	ctx := context.Background()
	c, gb := gatedCollection(t, HNSW, 8)
	const n = 8
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	gb.before = func(string, int) error {
		arrived.Done()
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("writers did not meet in the store")
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range n {
		wg.Go(func() {
			if w%2 == 0 {
				errs <- c.Add(ctx, Item{ID: fmt.Sprint("w", w), Embedding: []float32{float32(w), 2}})
			} else {
				errs <- c.Delete(ctx, fmt.Sprint(w))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestAddOverlapped checks the route of a large Add to memory, which
// stores its vectors while another goroutine checks its ids and metadata
// (see overlaps): each kind of bad batch fails with the error the steps
// in order would give, and leaves the collection as it was; then
// concurrent large Adds that share a key each get it or ErrDuplicateID,
// exactly one winning.
func TestAddOverlapped(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	ctx := t.Context()
	for _, kind := range []IndexKind{Flat, HNSW} {
		t.Run(kind.String(), func(t *testing.T) {
			db := OpenMemory(nil)
			defer db.Close()
			c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2, Index: kind})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Add(ctx, Item{ID: "old", Embedding: []float32{1, 0}}); err != nil {
				t.Fatal(err)
			}
			batch := func(prefix string) []Item {
				b := make([]Item, 2*overlapMin)
				for i := range b {
					b[i] = Item{ID: fmt.Sprint(prefix, i), Embedding: []float32{1, float32(i)}, Metadata: map[string]any{"i": i}}
				}
				return b
			}
			if !c.overlaps(len(batch("x")), false) {
				t.Fatal("the batches do not take the path under test")
			}
			type badBatch struct {
				name  string
				items []Item
				want  error
			}
			var bad []badBatch
			spoil := func(name string, want error, f func(b []Item)) {
				b := batch(fmt.Sprint(len(bad), "-"))
				f(b)
				bad = append(bad, badBatch{name, b, want})
			}
			spoil("bad metadata", vector.ErrInvalidOptions, func(b []Item) { b[300].Metadata["bad"] = []int{1} })
			spoil("id stored already", vector.ErrDuplicateID, func(b []Item) { b[100].ID = "old" })
			spoil("id repeated", vector.ErrDuplicateID, func(b []Item) { b[400].ID = b[3].ID })
			spoil("wrong dimension", vector.ErrDimensionMismatch, func(b []Item) { b[200].Embedding = []float32{1, 2, 3} })
			spoil("metadata before ids", vector.ErrInvalidOptions, func(b []Item) {
				b[10].ID = "old"
				b[500].Metadata["bad"] = math.NaN()
			})
			spoil("ids before vectors", vector.ErrDuplicateID, func(b []Item) {
				b[10].ID = "old"
				b[20].Embedding = []float32{0, 0}
			})
			for _, tc := range bad {
				name := tc.name
				if err := c.Add(ctx, tc.items...); !errors.Is(err, tc.want) {
					t.Fatalf("%s: %v, want %v", name, err, tc.want)
				}
				t.Log(name)
				settled(t, c, 1)
			}
			// Concurrent large Adds, each sharing one key with the next.
			const writers = 4
			errs := make(chan error, writers)
			for w := range writers {
				go func() {
					b := batch(fmt.Sprint("w", w, "-"))
					b[0].ID = fmt.Sprint("shared", w)
					b[1].ID = fmt.Sprint("shared", (w+1)%writers)
					errs <- c.Add(ctx, b...)
				}()
			}
			won := 0
			for range writers {
				switch err := <-errs; {
				case err == nil:
					won++
				case !errors.Is(err, vector.ErrDuplicateID):
					t.Fatalf("concurrent Add: %v", err)
				}
			}
			if won == 0 || won == writers {
				t.Fatalf("%d of %d concurrent Adds sharing keys succeeded", won, writers)
			}
			want := 1 + won*2*overlapMin
			settled(t, c, want)
			res, err := c.Query(ctx, []float32{1, 3}, 3, &QueryOptions{Filter: Eq("i", 3)})
			if err != nil || len(res) != won {
				t.Fatalf("query for i = 3: %d results, %v; want %d", len(res), err, won)
			}
		})
	}
}

// TestAddBadMetadataLater checks the route where a large Add to memory
// normalises its metadata while the store takes the vectors: a bad value
// at the end of the batch fails the Add, and the vectors already stored
// are taken out again.
func TestAddBadMetadataLater(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	ctx := t.Context()
	db := OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", CollectionConfig{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, Item{ID: "old", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	batch := make([]Item, 2*overlapMin)
	for i := range batch {
		batch[i] = Item{ID: fmt.Sprint("n", i), Embedding: []float32{1, float32(i)}, Metadata: map[string]any{"i": i}}
	}
	if !c.overlaps(len(batch), false) {
		t.Fatal("the batch does not take the path under test")
	}
	batch[len(batch)-1].Metadata["bad"] = []int{1}
	if err := c.Add(ctx, batch...); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("Add with bad metadata: %v", err)
	}
	settled(t, c, 1)
	res, err := c.Query(ctx, []float32{1, 0.5}, 5, nil)
	if err != nil || len(res) != 1 || res[0].ID != "old" {
		t.Fatalf("query after the failed Add: %v, %v", res, err)
	}
	delete(batch[len(batch)-1].Metadata, "bad")
	if err := c.Add(ctx, batch...); err != nil {
		t.Fatalf("the same batch, fixed: %v", err)
	}
	got, err := c.Get(ctx, "n7")
	if err != nil || got[0].Metadata["i"] != 7.0 {
		t.Fatalf("Get(n7) = %v, %v", got, err)
	}
	if mustCount(t, c) != len(batch)+1 {
		t.Fatalf("Count = %d, want %d", mustCount(t, c), len(batch)+1)
	}
}
