package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// opener opens a fresh, empty DB for a test; the test's cleanup closes it.
type opener struct {
	name string
	open func(t *testing.T, o *cairn.Options) *cairn.DB
	kind cairn.IndexKind // set by forEachDB
}

var openers = []opener{
	{name: "memory", open: func(t *testing.T, o *cairn.Options) *cairn.DB {
		db := cairn.OpenMemory(o)
		t.Cleanup(func() { db.Close() })
		return db
	}},
	{name: "sqlite", open: func(t *testing.T, o *cairn.Options) *cairn.DB {
		db, err := cairn.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		})
		return db
	}},
}

// forEachDB runs fn as a subtest over every kind of DB and index.
func forEachDB(t *testing.T, fn func(t *testing.T, op opener)) {
	for _, op := range openers {
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW} {
			op.kind = kind
			t.Run(op.name+"/"+kind.String(), func(t *testing.T) { fn(t, op) })
		}
	}
}

func mustCollection(t *testing.T, db *cairn.DB, name string, cfg cairn.CollectionConfig) *cairn.Collection {
	t.Helper()
	c, err := db.CreateCollection(context.Background(), name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ids(rs []cairn.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestAddGetQuery(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Index: op.kind, Dim: 2})
		err := c.Add(ctx,
			cairn.Item{ID: "east", Embedding: []float32{2, 0}, Text: "e", Metadata: map[string]any{"n": 1, "tag": "x"}},
			cairn.Item{ID: "north", Embedding: []float32{0, 3}, Text: "n"},
			cairn.Item{ID: "northeast", Embedding: []float32{1, 1}, Text: "ne", Metadata: map[string]any{"ok": true}},
		)
		if err != nil {
			t.Fatal(err)
		}
		if n := cairn.MustCount(t, c); n != 3 {
			t.Fatalf("Count = %d, want 3", n)
		}
		items, err := c.Get(ctx, "east", "northeast")
		if err != nil {
			t.Fatal(err)
		}
		if items[0].ID != "east" || items[0].Text != "e" || items[0].Metadata["n"] != 1.0 || items[0].Metadata["tag"] != "x" {
			t.Errorf("Get east = %+v", items[0])
		}
		// Cosine: the stored embedding is the unit-length form.
		if !slices.Equal(items[0].Embedding, []float32{1, 0}) {
			t.Errorf("east embedding = %v, want [1 0]", items[0].Embedding)
		}
		if items[1].Metadata["ok"] != true {
			t.Errorf("northeast metadata = %v", items[1].Metadata)
		}
		// Returned metadata is a copy.
		items[0].Metadata["tag"] = "changed"
		again, _ := c.Get(ctx, "east")
		if again[0].Metadata["tag"] != "x" {
			t.Error("changing returned metadata changed the stored item")
		}

		res, err := c.Query(ctx, []float32{1, 0.1}, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res); !slices.Equal(got, []string{"east", "northeast"}) {
			t.Fatalf("Query = %v", got)
		}
		want := 1 / math.Sqrt(1.01)
		if math.Abs(res[0].Similarity-want) > 1e-6 || math.Abs(res[0].Distance-(1-want)) > 1e-6 {
			t.Errorf("east similarity %v distance %v, want %v and %v", res[0].Similarity, res[0].Distance, want, 1-want)
		}
		if res[0].Text != "e" || res[0].Metadata["tag"] != "x" {
			t.Errorf("result payload = %+v", res[0])
		}
		res, err = c.Query(ctx, []float32{1, 1}, 10, nil)
		if err != nil || len(res) != 3 {
			t.Fatalf("Query k=10 over 3 items = %v, %v", res, err)
		}
	})
}

// TestQueryResultsOwned checks that what a query returns is the caller's
// own: changing a result's metadata or embedding changes nothing stored
// and no other result, and metadata values come back as the documented
// types (the store boxes them once, and results share those boxes).
func TestQueryResultsOwned(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Index: op.kind, Dim: 2})
		md := map[string]any{"n": 3, "big": int64(1) << 40, "f": 2.5, "neg": -7, "s": "x", "b": false, "u8": uint8(200)}
		if err := c.Add(ctx,
			cairn.Item{ID: "a", Embedding: []float32{1, 0}, Metadata: md},
			cairn.Item{ID: "b", Embedding: []float32{1, 0.1}, Metadata: md},
		); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"n": 3.0, "big": float64(int64(1) << 40), "f": 2.5, "neg": -7.0, "s": "x", "b": false, "u8": 200.0}
		o := &cairn.QueryOptions{WithEmbeddings: true}
		res, err := c.Query(ctx, []float32{1, 0}, 2, o)
		if err != nil || len(res) != 2 {
			t.Fatalf("Query = %v, %v", res, err)
		}
		for _, r := range res {
			if !maps.Equal(r.Metadata, want) {
				t.Errorf("%s: metadata %v, want %v", r.ID, r.Metadata, want)
			}
		}
		res[0].Metadata["n"] = "changed"
		delete(res[0].Metadata, "s")
		res[0].Embedding[0] = 42
		if res[1].Metadata["n"] != 3.0 || res[1].Metadata["s"] != "x" {
			t.Errorf("changing one result's metadata changed another's: %v", res[1].Metadata)
		}
		again, err := c.Query(ctx, []float32{1, 0}, 2, &cairn.QueryOptions{WithEmbeddings: true, Filter: cairn.Eq("n", 3)})
		if err != nil || len(again) != 2 {
			t.Fatalf("Query again = %v, %v", again, err)
		}
		for _, r := range again {
			if !maps.Equal(r.Metadata, want) || r.Embedding[0] == 42 {
				t.Errorf("%s after the caller changed a result: metadata %v, embedding %v", r.ID, r.Metadata, r.Embedding)
			}
		}
	})
}

func TestSimilarityPerMetric(t *testing.T) {
	ctx := context.Background()
	a, b := []float32{3, 4}, []float32{-4, 3}
	cases := []struct {
		metric   vector.Metric
		q        []float32
		wantDist float64 // to a
		wantSim  float64
	}{
		{vector.Cosine, []float32{6, 8}, 0, 1},
		{vector.Cosine, []float32{-3, -4}, 2, -1},
		{vector.Cosine, []float32{4, -3}, 1, 0},
		{vector.Dot, []float32{1, 1}, -7, 7},
		{vector.L2, []float32{0, 0}, 25, 1.0 / 6},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.metric, tc.q), func(t *testing.T) {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Metric: tc.metric})
			if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: a}, cairn.Item{ID: "b", Embedding: b}); err != nil {
				t.Fatal(err)
			}
			res, err := c.Query(ctx, tc.q, 2, &cairn.QueryOptions{Filter: cairn.Eq("none", 1.0)})
			if err != nil || len(res) != 0 {
				t.Fatalf("filtered to nothing: %v, %v", res, err)
			}
			res, err = c.Query(ctx, tc.q, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(res, func(r cairn.Result) bool { return r.ID == "a" })
			if math.Abs(res[i].Distance-tc.wantDist) > 1e-5 || math.Abs(res[i].Similarity-tc.wantSim) > 1e-5 {
				t.Errorf("a: distance %v similarity %v, want %v %v", res[i].Distance, res[i].Similarity, tc.wantDist, tc.wantSim)
			}
			if res[0].Similarity < res[1].Similarity {
				t.Errorf("results not in descending similarity: %+v", res)
			}
		})
	}
}

func TestMinSimilarity(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	c.Add(ctx,
		cairn.Item{ID: "same", Embedding: []float32{1, 0}},
		cairn.Item{ID: "close", Embedding: []float32{1, 0.5}},
		cairn.Item{ID: "orthogonal", Embedding: []float32{0, 1}},
		cairn.Item{ID: "opposite", Embedding: []float32{-1, 0}},
	)
	for _, tc := range []struct {
		min  float64
		want []string
	}{
		{0.99, []string{"same"}},
		{0.5, []string{"same", "close"}},
		{0, []string{"same", "close", "orthogonal"}},
		{-1, []string{"same", "close", "orthogonal", "opposite"}},
	} {
		res, err := c.Query(ctx, []float32{1, 0}, 4, &cairn.QueryOptions{MinSimilarity: new(tc.min)})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res); !slices.Equal(got, tc.want) {
			t.Errorf("MinSimilarity %v: %v, want %v", tc.min, got, tc.want)
		}
	}
}

func TestUpsert(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Index: op.kind, Dim: 2, Metric: vector.L2})
		if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{0, 0}, Text: "old", Metadata: map[string]any{"v": 1}}); err != nil {
			t.Fatal(err)
		}
		err := c.Upsert(ctx,
			cairn.Item{ID: "a", Embedding: []float32{10, 10}, Text: "new", Metadata: map[string]any{"w": "x"}},
			cairn.Item{ID: "b", Embedding: []float32{1, 1}},
		)
		if err != nil {
			t.Fatal(err)
		}
		if cairn.MustCount(t, c) != 2 {
			t.Fatalf("Count = %d, want 2", cairn.MustCount(t, c))
		}
		got, _ := c.Get(ctx, "a")
		if got[0].Text != "new" || !slices.Equal(got[0].Embedding, []float32{10, 10}) || got[0].Metadata["v"] != nil || got[0].Metadata["w"] != "x" {
			t.Errorf("after upsert a = %+v", got[0])
		}
		res, _ := c.Query(ctx, []float32{0, 0}, 1, nil)
		if res[0].ID != "b" {
			t.Errorf("nearest to origin = %s, want b (a moved away)", res[0].ID)
		}
		res, _ = c.Query(ctx, []float32{10, 10}, 2, nil)
		if len(res) != 2 || res[0].ID != "a" || res[0].Distance != 0 {
			t.Errorf("query at a's new place = %+v", res)
		}
		// A failing upsert (bad vector for b) changes nothing, a included.
		err = c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{5, 5}}, cairn.Item{ID: "b", Embedding: []float32{1}})
		if !errors.Is(err, vector.ErrDimensionMismatch) {
			t.Fatalf("bad upsert: %v", err)
		}
		got, _ = c.Get(ctx, "a", "b")
		if !slices.Equal(got[0].Embedding, []float32{10, 10}) || !slices.Equal(got[1].Embedding, []float32{1, 1}) {
			t.Errorf("failed upsert changed items: %+v", got)
		}
	})
}

func TestDelete(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Index: op.kind, Dim: 2})
		for i := range 10 {
			err := c.Add(ctx, cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{1, float32(i)}, Metadata: map[string]any{"i": i, "even": i%2 == 0}})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Delete(ctx, "3", "4", "3"); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "5", "nope"); !errors.Is(err, vector.ErrNotFound) {
			t.Fatalf("delete of a missing id: %v", err)
		}
		if cairn.MustCount(t, c) != 8 {
			t.Fatalf("Count = %d, want 8 (a failed delete removes nothing)", cairn.MustCount(t, c))
		}
		if _, err := c.Get(ctx, "3"); !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("Get deleted: %v", err)
		}
		n, err := c.DeleteWhere(ctx, cairn.Eq("even", true))
		if err != nil || n != 4 { // 0 2 6 8
			t.Fatalf("DeleteWhere = %d, %v; want 4", n, err)
		}
		res, err := c.Query(ctx, []float32{1, 1}, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(res)
		slices.Sort(got)
		if !slices.Equal(got, []string{"1", "5", "7", "9"}) {
			t.Errorf("left after deletes: %v", got)
		}
		if _, err := c.DeleteWhere(ctx, nil); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("DeleteWhere(nil): %v", err)
		}
		// A deleted id can be added again.
		if err := c.Add(ctx, cairn.Item{ID: "3", Embedding: []float32{1, 3}}); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.DeleteWhere(ctx, cairn.And()); n != 5 || cairn.MustCount(t, c) != 0 {
			t.Errorf("DeleteWhere(And()) = %d, Count %d", n, cairn.MustCount(t, c))
		}
	})
}

// TestFilteredQueryReturnsK checks that a filter is applied during the
// search: with few matching items among many, a query still returns k of
// them, the nearest among the matches.
func TestFilteredQueryReturnsK(t *testing.T) {
	for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.Auto} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			db := cairn.OpenMemory(nil)
			defer db.Close()
			const dim, n = 16, 2000
			c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: dim, Index: kind, AutoThreshold: 500})
			r := rand.New(rand.NewPCG(1, 2))
			items := make([]cairn.Item, n)
			for i := range items {
				items[i] = cairn.Item{ID: fmt.Sprint("item", i), Embedding: randVec(r, dim),
					Metadata: map[string]any{"bucket": i % 100, "rare": i%173 == 0}}
			}
			if err := c.Add(ctx, items...); err != nil {
				t.Fatal(err)
			}
			q := randVec(r, dim)
			for _, tc := range []struct {
				f    *cairn.Filter
				keep func(i int) bool
			}{
				{cairn.Eq("rare", true), func(i int) bool { return i%173 == 0 }},
				{cairn.And(cairn.Gte("bucket", 10), cairn.Lt("bucket", 13)), func(i int) bool { b := i % 100; return b >= 10 && b < 13 }},
				{cairn.Or(cairn.In("bucket", 1, 2), cairn.Eq("rare", true)), func(i int) bool { return i%100 == 1 || i%100 == 2 || i%173 == 0 }},
				{cairn.Not(cairn.Eq("bucket", 0)), func(i int) bool { return i%100 != 0 }},
			} {
				var want []cairn.Item
				for i, it := range items {
					if tc.keep(i) {
						want = append(want, it)
					}
				}
				slices.SortFunc(want, func(a, b cairn.Item) int {
					da, db := vector.Cosine.Distance(q, a.Embedding), vector.Cosine.Distance(q, b.Embedding)
					if da < db {
						return -1
					}
					if da > db {
						return 1
					}
					return 0
				})
				const k = 10
				res, err := c.Query(ctx, q, k, &cairn.QueryOptions{Filter: tc.f})
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != min(k, len(want)) {
					t.Fatalf("%v: %d results, want %d", tc.f, len(res), min(k, len(want)))
				}
				wantIDs := make(map[string]bool)
				for _, it := range want {
					wantIDs[it.ID] = true
				}
				for _, r := range res {
					if !wantIDs[r.ID] {
						t.Fatalf("%v: result %s does not match", tc.f, r.ID)
					}
				}
				if len(want) <= 30 && res[0].ID != want[0].ID {
					// Few matches are searched exactly.
					t.Errorf("%v: nearest match %s, want %s", tc.f, res[0].ID, want[0].ID)
				}
			}
		})
	}
}

func TestCollections(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		a := mustCollection(t, db, "a", cairn.CollectionConfig{Dim: 2, Metric: vector.Dot, Index: cairn.Flat})
		mustCollection(t, db, "b", cairn.CollectionConfig{Dim: 3})
		if _, err := db.CreateCollection(ctx, "a", cairn.CollectionConfig{Dim: 2}); !errors.Is(err, cairn.ErrCollectionExists) || errors.Is(err, vector.ErrDuplicateID) {
			t.Errorf("create existing: %v", err)
		}
		if _, err := db.CreateCollection(ctx, "", cairn.CollectionConfig{Dim: 2}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("create unnamed: %v", err)
		}
		if _, err := db.CreateCollection(ctx, "z", cairn.CollectionConfig{Dim: 0, Metric: 9}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("create with bad config: %v", err)
		}
		a.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 2}})
		infos, err := db.Collections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != 2 || infos[0].Name != "a" || infos[0].Count != 1 || infos[0].Config.Metric != vector.Dot ||
			infos[1].Name != "b" || infos[1].Config.Metric != vector.Cosine || infos[1].Config.Index != cairn.Auto {
			t.Errorf("Collections = %+v", infos)
		}
		got, err := db.Collection(ctx, "a")
		if err != nil || got != a {
			t.Errorf("Collection(a) = %p, %v; want %p", got, err, a)
		}
		if _, err := db.Collection(ctx, "nope"); !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("unknown collection: %v", err)
		}
		if err := db.DeleteCollection(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteCollection(ctx, "a"); !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("delete twice: %v", err)
		}
		if _, err := a.Query(ctx, []float32{1, 2}, 1, nil); !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("query of a deleted collection: %v", err)
		}
		if err := a.Add(ctx, cairn.Item{ID: "y", Embedding: []float32{1, 2}}); !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("add to a deleted collection: %v", err)
		}
		// The name can be used again, and starts empty.
		a2 := mustCollection(t, db, "a", cairn.CollectionConfig{Dim: 2})
		if cairn.MustCount(t, a2) != 0 {
			t.Errorf("recreated collection has %d items", cairn.MustCount(t, a2))
		}
	})
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	checks := map[string]error{
		"Add":              c.Add(ctx, cairn.Item{ID: "b", Embedding: []float32{1, 0}}),
		"Upsert":           c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0}}),
		"Delete":           c.Delete(ctx, "a"),
		"CreateCollection": func() error { _, err := db.CreateCollection(ctx, "d", cairn.CollectionConfig{Dim: 2}); return err }(),
		"Collection":       func() error { _, err := db.Collection(ctx, "c"); return err }(),
		"Collections":      func() error { _, err := db.Collections(ctx); return err }(),
		"DeleteCollection": db.DeleteCollection(ctx, "c"),
		"Get":              func() error { _, err := c.Get(ctx, "a"); return err }(),
		"Query":            func() error { _, err := c.Query(ctx, []float32{1, 0}, 1, nil); return err }(),
		"DeleteWhere":      func() error { _, err := c.DeleteWhere(ctx, cairn.And()); return err }(),
	}
	for name, err := range checks {
		if !errors.Is(err, vector.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

// TestBadInput checks that every kind of bad input gets its typed error and
// leaves the stored items as they were.
func TestBadInput(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Index: op.kind, Dim: 3})
		stored := []cairn.Item{
			{ID: "a", Embedding: []float32{1, 0, 0}, Text: "A", Metadata: map[string]any{"k": "v"}},
			{ID: "b", Embedding: []float32{0, 1, 0}, Text: "B"},
		}
		if err := c.Add(ctx, stored...); err != nil {
			t.Fatal(err)
		}
		nan, inf := float32(math.NaN()), float32(math.Inf(1))
		good := cairn.Item{ID: "new", Embedding: []float32{0, 0, 1}}
		cases := []struct {
			name string
			call func() error
			want error
		}{
			{"wrong dimension", func() error { return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{1, 2}}) }, vector.ErrDimensionMismatch},
			{"missing embedding", func() error { return c.Add(ctx, good, cairn.Item{ID: "x"}) }, vector.ErrDimensionMismatch},
			{"NaN", func() error { return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{nan, 0, 1}}) }, vector.ErrNonFinite},
			{"Inf", func() error { return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{0, inf, 1}}) }, vector.ErrNonFinite},
			{"zero vector", func() error { return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{0, 0, 0}}) }, vector.ErrZeroVector},
			{"empty id", func() error { return c.Add(ctx, good, cairn.Item{Embedding: []float32{0, 0, 1}}) }, vector.ErrEmptyID},
			{"duplicate id", func() error { return c.Add(ctx, good, cairn.Item{ID: "a", Embedding: []float32{0, 0, 1}}) }, vector.ErrDuplicateID},
			{"repeated id", func() error { return c.Add(ctx, good, good) }, vector.ErrDuplicateID},
			{"repeated id later in the batch", func() error {
				return c.Add(ctx, good, cairn.Item{ID: "y", Embedding: []float32{0, 1, 1}}, good)
			}, vector.ErrDuplicateID},
			{"upsert repeated stored id", func() error { return c.Upsert(ctx, good, stored[0], stored[0]) }, vector.ErrDuplicateID},
			{"upsert repeated new id", func() error { return c.Upsert(ctx, stored[1], good, good) }, vector.ErrDuplicateID},
			{"repeated id needing the embedder", func() error {
				return c.Add(ctx, cairn.Item{ID: "t", Text: "hi"}, cairn.Item{ID: "t", Text: "hi"})
			}, vector.ErrDuplicateID},
			{"bad metadata", func() error {
				return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{0, 0, 1}, Metadata: map[string]any{"l": []int{1}}})
			}, vector.ErrInvalidOptions},
			{"NaN metadata", func() error {
				return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{0, 0, 1}, Metadata: map[string]any{"f": math.NaN()}})
			}, vector.ErrInvalidOptions},
			// Not valid UTF-8: refused alike in memory and in a file, which
			// could keep them only by rewriting them.
			{"metadata key not UTF-8", func() error {
				return c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{0, 0, 1}, Metadata: map[string]any{"k\xff": "v"}})
			}, vector.ErrInvalidOptions},
			{"metadata value not UTF-8", func() error {
				return c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0, 0}, Metadata: map[string]any{"k": "v\xc3"}})
			}, vector.ErrInvalidOptions},
			{"id not UTF-8", func() error { return c.Add(ctx, good, cairn.Item{ID: "x\x80", Embedding: []float32{0, 0, 1}}) }, vector.ErrInvalidOptions},
			{"text not UTF-8", func() error { return c.Upsert(ctx, cairn.Item{ID: "b", Embedding: []float32{0, 1, 0}, Text: "B\xfe"}) }, vector.ErrInvalidOptions},
			{"text without embedder", func() error { return c.Add(ctx, good, cairn.Item{ID: "x", Text: "hi"}) }, cairn.ErrNoEmbedder},
			{"upsert wrong dimension", func() error { return c.Upsert(ctx, stored[0], cairn.Item{ID: "x", Embedding: []float32{1}}) }, vector.ErrDimensionMismatch},
			{"upsert zero vector", func() error {
				return c.Upsert(ctx, cairn.Item{ID: "a", Embedding: []float32{0, 0, 0}})
			}, vector.ErrZeroVector},
			{"query wrong dimension", func() error { _, err := c.Query(ctx, []float32{1}, 1, nil); return err }, vector.ErrDimensionMismatch},
			{"query NaN", func() error { _, err := c.Query(ctx, []float32{nan, 1, 1}, 1, nil); return err }, vector.ErrNonFinite},
			{"query zero", func() error { _, err := c.Query(ctx, []float32{0, 0, 0}, 1, nil); return err }, vector.ErrZeroVector},
			{"query zero filtered to none", func() error {
				_, err := c.Query(ctx, []float32{0, 0, 0}, 1, &cairn.QueryOptions{Filter: cairn.Eq("k", "none")})
				return err
			}, vector.ErrZeroVector},
			{"k = 0", func() error { _, err := c.Query(ctx, []float32{1, 1, 1}, 0, nil); return err }, vector.ErrInvalidK},
			{"k < 0", func() error { _, err := c.Query(ctx, []float32{1, 1, 1}, -3, nil); return err }, vector.ErrInvalidK},
			{"query text k = 0", func() error { _, err := c.QueryText(ctx, "x", 0, nil); return err }, vector.ErrInvalidK},
			{"query text without embedder", func() error { _, err := c.QueryText(ctx, "x", 1, nil); return err }, cairn.ErrNoEmbedder},
			{"malformed filter", func() error {
				_, err := c.Query(ctx, []float32{1, 1, 1}, 1, &cairn.QueryOptions{Filter: cairn.And(cairn.Eq("k", "v"), nil)})
				return err
			}, vector.ErrInvalidOptions},
			{"range on a string", func() error {
				_, err := c.Query(ctx, []float32{1, 1, 1}, 1, &cairn.QueryOptions{Filter: cairn.Gt("k", "v")})
				return err
			}, vector.ErrInvalidOptions},
			{"NaN min similarity", func() error {
				_, err := c.Query(ctx, []float32{1, 1, 1}, 1, &cairn.QueryOptions{MinSimilarity: new(math.NaN())})
				return err
			}, vector.ErrInvalidOptions},
			{"malformed delete filter", func() error { _, err := c.DeleteWhere(ctx, cairn.Eq("", 1)); return err }, vector.ErrInvalidOptions},
			{"unknown collection", func() error { _, err := db.Collection(ctx, "nope"); return err }, vector.ErrNotFound},
			{"delete unknown collection", func() error { return db.DeleteCollection(ctx, "nope") }, vector.ErrNotFound},
			{"get unknown id", func() error { _, err := c.Get(ctx, "a", "nope"); return err }, vector.ErrNotFound},
			{"delete unknown id", func() error { return c.Delete(ctx, "a", "nope") }, vector.ErrNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.call()
				if !errors.Is(err, tc.want) {
					t.Fatalf("error %v, want %v", err, tc.want)
				}
				if cairn.MustCount(t, c) != len(stored) {
					t.Fatalf("Count = %d after a failed call, want %d", cairn.MustCount(t, c), len(stored))
				}
				got, err := c.Get(ctx, "a", "b")
				if err != nil {
					t.Fatal(err)
				}
				for i, it := range got {
					if it.Text != stored[i].Text || !slices.Equal(it.Embedding, stored[i].Embedding) || fmt.Sprint(it.Metadata) != fmt.Sprint(stored[i].Metadata) {
						t.Fatalf("item %s changed: %+v", it.ID, it)
					}
				}
				res, err := c.Query(ctx, []float32{1, 0.1, 0}, 3, nil)
				if err != nil || !slices.Equal(ids(res), []string{"a", "b"}) {
					t.Fatalf("query after failed call: %v, %v", ids(res), err)
				}
			})
		}
		// No failed call left a reservation behind: the ids they tried
		// are free.
		if err := c.Add(ctx, good, cairn.Item{ID: "x", Embedding: []float32{1, 1, 0}}, cairn.Item{ID: "y", Embedding: []float32{0, 1, 1}}); err != nil {
			t.Fatalf("Add of the ids the failed calls tried: %v", err)
		}
	})
}

func TestEmbedder(t *testing.T) {
	ctx := context.Background()
	var calls int
	var mu sync.Mutex
	// A toy embedder: the vector counts the letters a, b and c.
	emb := cairn.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		out := make([][]float32, len(texts))
		for i, s := range texts {
			v := make([]float32, 3)
			for _, r := range s {
				if r >= 'a' && r <= 'c' {
					v[r-'a']++
				}
			}
			out[i] = v
		}
		return out, nil
	})
	db := cairn.OpenMemory(&cairn.Options{Embedder: emb})
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 3})
	err := c.Add(ctx,
		cairn.Item{ID: "1", Text: "aaa"},
		cairn.Item{ID: "2", Text: "bbb"},
		cairn.Item{ID: "3", Text: "ccc", Embedding: []float32{1, 1, 1}}, // given: not embedded
	)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("%d embedder calls for one batch, want 1", calls)
	}
	res, err := c.QueryText(ctx, "ab b", 1, nil)
	if err != nil || res[0].ID != "2" {
		t.Fatalf("QueryText = %v, %v", res, err)
	}
	if err := c.Add(ctx, cairn.Item{ID: "4", Text: "zzz"}); !errors.Is(err, vector.ErrZeroVector) {
		t.Errorf("embedding to a zero vector: %v", err)
	}

	failing := errors.New("model offline")
	bad := []struct {
		name string
		emb  cairn.EmbedderFunc
	}{
		{"error", func(context.Context, []string) ([][]float32, error) { return nil, failing }},
		{"short", func(context.Context, []string) ([][]float32, error) { return [][]float32{{1, 1, 1}}, nil }},
		{"wrong dimension", func(_ context.Context, t []string) ([][]float32, error) {
			return slices.Repeat([][]float32{{1, 1}}, len(t)), nil
		}},
	}
	for _, tc := range bad {
		db := cairn.OpenMemory(&cairn.Options{Embedder: tc.emb})
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 3})
		err := c.Add(ctx, cairn.Item{ID: "1", Text: "a"}, cairn.Item{ID: "2", Text: "b"})
		if err == nil || cairn.MustCount(t, c) != 0 {
			t.Errorf("%s: Add = %v, Count %d", tc.name, err, cairn.MustCount(t, c))
		}
		if tc.name == "short" && !errors.Is(err, cairn.ErrWrongNumberOfVectors) {
			t.Errorf("short: Add = %v, want an error wrapping ErrWrongNumberOfVectors", err)
		}
		if _, err := c.QueryText(ctx, "a", 1, nil); err == nil && tc.name != "short" {
			t.Errorf("%s: QueryText succeeded", tc.name)
		}
		db.Close()
	}
}

// TestConcurrent runs writers, deleters and readers at once; run it with
// -race.
func TestConcurrent(t *testing.T) {
	for _, op := range openers {
		for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.Auto} {
			t.Run(op.name+"/"+kind.String(), func(t *testing.T) { testConcurrent(t, op, kind) })
		}
	}
}

func testConcurrent(t *testing.T, op opener, kind cairn.IndexKind) {
	{
		{
			ctx := context.Background()
			db := op.open(t, nil)
			const dim = 8
			c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: dim, Index: kind, AutoThreshold: 150})
			var wg sync.WaitGroup
			errs := make(chan error, 100)
			for w := range 4 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 9))
					for i := range 100 {
						id := fmt.Sprintf("w%d-%d", w, i)
						if err := c.Add(ctx, cairn.Item{ID: id, Embedding: randVec(r, dim), Metadata: map[string]any{"w": w}}); err != nil {
							errs <- err
							return
						}
						if i%3 == 0 {
							if err := c.Delete(ctx, id); err != nil {
								errs <- err
								return
							}
						}
					}
				})
			}
			for w := range 3 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 10))
					for range 100 {
						f := cairn.Eq("w", w)
						res, err := c.Query(ctx, randVec(r, dim), 5, &cairn.QueryOptions{Filter: f})
						if err != nil {
							errs <- err
							return
						}
						for _, x := range res {
							if x.Metadata["w"] != float64(w) {
								errs <- fmt.Errorf("result %s does not match filter %v", x.ID, f)
								return
							}
						}
						cairn.MustCount(t, c)
						db.Collections(ctx)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if want := 4 * (100 - 34); cairn.MustCount(t, c) != want {
				t.Errorf("Count = %d, want %d", cairn.MustCount(t, c), want)
			}
		}
	}
}

// TestPostingsFollowWrites checks that equality filters, answered from
// posting lists built on first use, see every later write: they must agree
// with the same condition written so that every item is scanned.
func TestPostingsFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	r := rand.New(rand.NewPCG(7, 7))
	colors := []string{"red", "green", "blue"}
	item := func(i int) cairn.Item {
		return cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, 2), Metadata: map[string]any{"color": colors[r.IntN(3)], "n": r.IntN(4)}}
	}
	check := func(step string) {
		t.Helper()
		for _, f := range []*cairn.Filter{
			cairn.Eq("color", "red"),
			cairn.In("color", "green", "blue", "green"),
			cairn.And(cairn.Eq("color", "blue"), cairn.Gte("n", 2)),
			cairn.And(cairn.In("n", 1, 3), cairn.Eq("color", "red")),
		} {
			q := []float32{1, 0}
			got, err := c.Query(ctx, q, 1000, &cairn.QueryOptions{Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.Query(ctx, q, 1000, &cairn.QueryOptions{Filter: cairn.Not(cairn.Not(f))})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("%s: %v gives %v, a scan gives %v", step, f, ids(got), ids(want))
			}
		}
	}
	for i := range 200 {
		if err := c.Add(ctx, item(i)); err != nil {
			t.Fatal(err)
		}
	}
	check("after adds")
	for i := 0; i < 200; i += 3 {
		if err := c.Upsert(ctx, item(i)); err != nil {
			t.Fatal(err)
		}
	}
	check("after upserts")
	for i := 1; i < 200; i += 5 {
		if err := c.Delete(ctx, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteWhere(ctx, cairn.And(cairn.Eq("color", "green"), cairn.Eq("n", 0))); err != nil {
		t.Fatal(err)
	}
	check("after deletes")
	for i := 200; i < 300; i++ {
		if err := c.Add(ctx, item(i)); err != nil {
			t.Fatal(err)
		}
	}
	check("after more adds")
}

func TestFind(t *testing.T) {
	forEachDB(t, func(t *testing.T, op opener) {
		ctx := context.Background()
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Index: op.kind, Dim: 2})
		for i := range 10 {
			if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint("m", i), Embedding: []float32{1, float32(i)}, Text: fmt.Sprint(i),
				Metadata: map[string]any{"kind": []string{"fact", "pref"}[i%2]}}); err != nil {
				t.Fatal(err)
			}
		}
		c.Upsert(ctx, cairn.Item{ID: "m2", Embedding: []float32{1, 2}, Text: "two", Metadata: map[string]any{"kind": "fact"}})
		c.Delete(ctx, "m4")
		itemIDs := func(items []cairn.Item) []string {
			out := make([]string, len(items))
			for i, it := range items {
				out[i] = it.ID
			}
			return out
		}
		all, err := c.Find(ctx, nil, 0)
		if err != nil || !slices.Equal(itemIDs(all), []string{"m0", "m1", "m3", "m5", "m6", "m7", "m8", "m9", "m2"}) {
			t.Fatalf("Find(nil) = %v, %v", itemIDs(all), err)
		}
		if all[8].Text != "two" || len(all[8].Embedding) != 2 {
			t.Errorf("upserted item = %+v", all[8])
		}
		facts, err := c.Find(ctx, cairn.Eq("kind", "fact"), 3)
		if err != nil || !slices.Equal(itemIDs(facts), []string{"m0", "m6", "m8"}) {
			t.Errorf("Find(facts, 3) = %v, %v", itemIDs(facts), err)
		}
		if _, err := c.Find(ctx, cairn.Lt("kind", "x"), 0); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("malformed filter: %v", err)
		}
	})
}

// TestCheckEmbedding: a config says of an embedding what a write to its
// collection would, defaults applied (cosine refuses a zero vector).
func TestCheckEmbedding(t *testing.T) {
	for _, tc := range []struct {
		cfg  cairn.CollectionConfig
		v    []float32
		want error
	}{
		{cairn.CollectionConfig{Dim: 2}, []float32{1, 2}, nil},
		{cairn.CollectionConfig{Dim: 2}, []float32{0, 0}, vector.ErrZeroVector},
		{cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, []float32{0, 0}, nil},
		{cairn.CollectionConfig{Dim: 2}, []float32{1}, vector.ErrDimensionMismatch},
		{cairn.CollectionConfig{Dim: 2}, []float32{float32(math.Inf(1)), 1}, vector.ErrNonFinite},
	} {
		err := tc.cfg.CheckEmbedding(tc.v)
		if !errors.Is(err, tc.want) {
			t.Errorf("%+v.CheckEmbedding(%v) = %v, want %v", tc.cfg, tc.v, err, tc.want)
		}
		db := cairn.OpenMemory(nil)
		c := mustCollection(t, db, "c", tc.cfg)
		if werr := c.Add(context.Background(), cairn.Item{ID: "a", Embedding: tc.v}); !errors.Is(werr, tc.want) {
			t.Errorf("Add of %v under %+v = %v, want %v as CheckEmbedding", tc.v, tc.cfg, werr, tc.want)
		}
		db.Close()
	}
}

// TestCheckItem: a config says of an item what a write of it alone to
// its collection would.
func TestCheckItem(t *testing.T) {
	cfg := cairn.CollectionConfig{Dim: 2}
	for _, tc := range []struct {
		it   cairn.Item
		want error
	}{
		{cairn.Item{ID: "a", Embedding: []float32{1, 2}, Metadata: map[string]any{"n": 1}}, nil},
		{cairn.Item{Embedding: []float32{1, 2}}, vector.ErrEmptyID},
		{cairn.Item{ID: "a", Text: "\xff", Embedding: []float32{1, 2}}, vector.ErrInvalidOptions},
		{cairn.Item{ID: "a", Embedding: []float32{1, 2}, Metadata: map[string]any{"tags": []any{"x"}}}, vector.ErrInvalidOptions},
		{cairn.Item{ID: "a", Embedding: []float32{1, 2}, ExpiresAt: time.Unix(1, 0)}, vector.ErrInvalidOptions},
		{cairn.Item{ID: "a", Embedding: []float32{1}}, vector.ErrDimensionMismatch},
	} {
		err := cfg.CheckItem(tc.it)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckItem(%+v) = %v, want %v", tc.it, err, tc.want)
		}
		db := cairn.OpenMemory(nil)
		c := mustCollection(t, db, "c", cfg)
		if werr := c.Add(context.Background(), tc.it); !errors.Is(werr, tc.want) || (tc.want == nil) != (werr == nil) {
			t.Errorf("Add of %+v = %v, want %v as CheckItem", tc.it, werr, tc.want)
		}
		db.Close()
	}
}

// A negative Options.IndexWorkers means GOMAXPROCS, as 0 does: it was
// handed to the graph, which refused it, so writes to an HNSW collection
// failed (and an Auto collection never switched, quietly).
func TestNegativeIndexWorkers(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(&cairn.Options{IndexWorkers: -1})
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 3, Index: cairn.HNSW})
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 0, 0}}, cairn.Item{ID: "b", Embedding: []float32{0, 1, 0}}); err != nil {
		t.Fatalf("Add with IndexWorkers -1: %v", err)
	}
	if res, err := c.Query(ctx, []float32{0, 1, 0}, 1, nil); err != nil || len(res) != 1 || res[0].ID != "b" {
		t.Fatalf("Query = %v, %v", res, err)
	}
}
