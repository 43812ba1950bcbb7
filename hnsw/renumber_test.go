package hnsw_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// TestRenumberAnswersAlike loads one saved graph twice, once renumbered,
// and checks that the two answer every query alike, keep their shape, and
// go on taking inserts and deletes: with vectors inline, behind pointers
// and as int8 codes, with free slots (unlinked nodes) to drop and with
// tombstones to carry.
func TestRenumberAnswersAlike(t *testing.T) {
	for _, c := range []struct {
		name     string
		inline   int
		quantize hnsw.Quantize
	}{
		{"inline", 512, hnsw.QuantizeNone},
		{"pointers", 0, hnsw.QuantizeNone},
		{"int8", 512, hnsw.QuantizeInt8},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer hnsw.SetInlineMaxDim(hnsw.SetInlineMaxDim(c.inline))
			defer hnsw.SetRenumberMinLen(hnsw.SetRenumberMinLen(1 << 30))
			ctx := context.Background()
			ds := recall.Clustered(3000, 100, 24, 5)
			s := memStore(t, ds.Dim, ds.Metric)
			o := &hnsw.Options{M: 8, EfConstruction: 64, Workers: 2, Quantize: c.quantize}
			ix := newIndex(t, s, o)
			ids := make([]vector.ID, len(ds.Base))
			for i := range ids {
				ids[i] = vector.ID(i)
			}
			if err := ix.AddBatch(ctx, ids, ds.Base); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(ids); i += 9 {
				if err := ix.Delete(ctx, ids[i]); err != nil {
					t.Fatal(err)
				}
			}
			var saved bytes.Buffer
			if _, err := ix.WriteTo(&saved); err != nil {
				t.Fatal(err)
			}
			load := func() *hnsw.Index {
				g := newIndex(t, s, &hnsw.Options{Quantize: c.quantize})
				if _, err := g.ReadFrom(bytes.NewReader(saved.Bytes())); err != nil {
					t.Fatal(err)
				}
				if err := g.Verify(); err != nil {
					t.Fatal(err)
				}
				return g
			}
			a := load()
			hnsw.SetRenumberMinLen(0)
			b := load()
			var ea, eb bytes.Buffer
			if _, err := a.WriteTo(&ea); err != nil {
				t.Fatal(err)
			}
			if _, err := b.WriteTo(&eb); err != nil {
				t.Fatal(err)
			}
			if ea.Len() == eb.Len() {
				t.Fatalf("the renumbered graph kept its free slots (%d bytes saved, as before)", eb.Len())
			}
			sa, sb := a.Stats(), b.Stats()
			if fmt.Sprint(sa.Nodes, sa.MeanDegree) != fmt.Sprint(sb.Nodes, sb.MeanDegree) {
				t.Fatalf("shape changed: nodes %v degrees %v, renumbered %v %v", sa.Nodes, sa.MeanDegree, sb.Nodes, sb.MeanDegree)
			}
			same := func(qs []vector.Vector) {
				t.Helper()
				for i, q := range qs {
					ra, err := a.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: 48})
					if err != nil {
						t.Fatal(err)
					}
					rb, err := b.SearchWith(ctx, q, 10, &hnsw.SearchOptions{Ef: 48})
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(ra) != fmt.Sprint(rb) {
						t.Fatalf("query %d: %v, renumbered %v", i, ra, rb)
					}
				}
			}
			same(ds.Queries)
			same(ds.Base[:200])

			// The renumbered index goes on: new nodes take the
			// next slots, deletes free them, and it saves and loads.
			for i, q := range ds.Queries[:50] {
				if err := b.Add(ctx, vector.ID(10_000+i), q); err != nil {
					t.Fatal(err)
				}
			}
			for i := 1; i < 400; i += 9 {
				if err := b.Delete(ctx, ids[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Verify(); err != nil {
				t.Fatal(err)
			}
			// Renumbered with tombstones waiting: they stay deleted,
			// and are unlinked later.
			if !b.Renumber() {
				t.Fatal("not renumbered with tombstones waiting")
			}
			for i := 1; i < 400; i += 9 {
				got, err := b.Search(ctx, ds.Base[i], 3, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, g := range got {
					if g.ID%9 == 1 && g.ID < 400 {
						t.Fatalf("deleted id %d returned after renumbering", g.ID)
					}
				}
			}
			if err := b.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.Verify(); err != nil {
				t.Fatal(err)
			}
			for i, q := range ds.Queries[:50] {
				got, err := b.Search(ctx, q, 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].ID != vector.ID(10_000+i) {
					t.Fatalf("query %d added after renumbering: got %v", i, got)
				}
			}
		})
	}
}

// TestConcurrentRenumbering renumbers the slots (from 64 nodes up, at
// each doubling) while single adds, batches, deletes and searches run, and
// checks every distance a search reports against the vector of its id.
func TestConcurrentRenumbering(t *testing.T) {
	defer hnsw.SetRenumberMinLen(hnsw.SetRenumberMinLen(64))
	ds := recall.Clustered(4000, 50, 16, 9)
	s := memStore(t, ds.Dim, ds.Metric)
	ix := newIndex(t, s, &hnsw.Options{M: 6, EfConstruction: 32, Workers: 2})
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 3 { // ids 0..1199, one at a time
		wg.Go(func() {
			for i := w; i < 1200; i += 3 {
				if err := ix.Add(ctx, vector.ID(i), ds.Base[i]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() { // ids 1200..3999 in batches of 400
		for b := 1200; b < 4000; b += 400 {
			ids := make([]vector.ID, 400)
			for i := range ids {
				ids[i] = vector.ID(b + i)
			}
			if err := ix.AddBatch(ctx, ids, ds.Base[b:b+400]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() { // deletes, repaired now and then
		for i := 0; i < 1200; i += 40 {
			if err := ix.Delete(ctx, vector.ID(i)); err != nil && !errors.Is(err, vector.ErrNotFound) {
				t.Error(err)
				return
			}
			if i%200 == 0 {
				if err := ix.Flush(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for range 1500 {
				q := ds.Queries[r.IntN(len(ds.Queries))]
				got, err := ix.Search(ctx, q, 5, nil)
				if err != nil {
					t.Error(err)
					return
				}
				for _, g := range got {
					if d := ds.Metric.Distance(q, ds.Base[g.ID]); math.Abs(d-float64(g.Distance)) > 1e-4 {
						t.Errorf("id %d at distance %v, its vector at %v", g.ID, g.Distance, d)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if n := ix.Renumbers(); n == 0 {
		t.Fatal("the index never renumbered")
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	missed := 0
	for i := 1; i < 4000; i += 7 {
		if i < 1200 && i%40 == 0 {
			continue
		}
		got, err := ix.Search(ctx, ds.Base[i], 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != vector.ID(i) {
			missed++
		}
	}
	if missed > 3 {
		t.Errorf("%d vectors not found as their own nearest neighbour", missed)
	}
}
