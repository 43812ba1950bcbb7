// Package memorytest holds the conformance suite of the memory-store API:
// Run checks any [cairn.MemoryStore] through the interface alone, so that
// the local store (cairn.Local) and a cluster (package weaviate) are shown
// to answer the same calls the same way.
package memorytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// Opener returns the store under test, with emb as its embedder (nil for
// none). The store may hold other collections; the suite uses names of its
// own and deletes its collections when done. Opener should register the
// store's Close with t.Cleanup.
type Opener func(t *testing.T, emb cairn.Embedder) cairn.MemoryStore

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	t.Run("Collections", func(t *testing.T) { collections(t, open) })
	for _, m := range []vector.Metric{vector.Cosine, vector.Dot, vector.L2} {
		t.Run("RoundTrip/"+m.String(), func(t *testing.T) { roundTrip(t, open, m) })
		t.Run("Query/"+m.String(), func(t *testing.T) { query(t, open, m) })
	}
	t.Run("BadInput", func(t *testing.T) { badInput(t, open) })
	t.Run("Upsert", func(t *testing.T) { upsert(t, open) })
	t.Run("Delete", func(t *testing.T) { deleteItems(t, open) })
	t.Run("Filters", func(t *testing.T) { filters(t, open) })
	t.Run("Find", func(t *testing.T) { find(t, open) })
	t.Run("Text", func(t *testing.T) { text(t, open) })
	t.Run("Concurrent", func(t *testing.T) { concurrent(t, open) })
}

var seq atomic.Int64

// Name returns a collection name unique to this run and test, which a
// store that outlives the test (a cluster) does not hold yet.
func Name(t *testing.T) string {
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, t.Name())
	return fmt.Sprintf("mt-%s-%d-%d", base, time.Now().UnixNano()%1e9, seq.Add(1))
}

// create makes a collection for the test and deletes it at the end.
func create(t *testing.T, s cairn.MemoryStore, cfg cairn.CollectionConfig) cairn.MemoryCollection {
	t.Helper()
	ctx := context.Background()
	name := Name(t)
	c, err := s.CreateCollection(ctx, name, cfg)
	if err != nil {
		t.Fatalf("CreateCollection(%q): %v", name, err)
	}
	t.Cleanup(func() { s.DeleteCollection(context.Background(), name) })
	return c
}

// fixture is a collection filled with items whose metadata the filter
// tests know.
type fixture struct {
	c     cairn.MemoryCollection
	items []cairn.Item
	m     vector.Metric
}

var kinds = []string{"fact", "event", "note"}

func item(r *rand.Rand, i, dim int) cairn.Item {
	v := make([]float32, dim)
	for j := range v {
		v[j] = r.Float32()*2 - 1
	}
	md := map[string]any{"year": 2018 + i%8, "score": float64(i) / 4, "pinned": i%3 == 0}
	if i%7 != 0 { // every seventh item has no kind
		md["kind"] = kinds[i%3]
	}
	return cairn.Item{ID: fmt.Sprintf("item-%03d", i), Embedding: v, Text: fmt.Sprintf("text %d", i), Metadata: md}
}

func fill(t *testing.T, s cairn.MemoryStore, m vector.Metric, dim, n int) *fixture {
	t.Helper()
	c := create(t, s, cairn.CollectionConfig{Dim: dim, Metric: m, Index: cairn.Flat})
	r := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	f := &fixture{c: c, m: m}
	for i := range n {
		f.items = append(f.items, item(r, i, dim))
	}
	if err := c.Add(context.Background(), f.items...); err != nil {
		t.Fatalf("Add(%d items): %v", n, err)
	}
	wantCount(t, c, n)
	return f
}

func wantCount(t *testing.T, c cairn.MemoryCollection, n int) {
	t.Helper()
	got, err := c.Count(context.Background())
	if err != nil || got != n {
		t.Fatalf("Count = %d, %v; want %d", got, err, n)
	}
}

func collections(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, nil)
	name := Name(t)
	cfg := cairn.CollectionConfig{Dim: 4, Metric: vector.L2, Index: cairn.HNSW}
	c, err := s.CreateCollection(ctx, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.DeleteCollection(context.Background(), name) })
	if c.Name() != name || c.Config().Dim != 4 || c.Config().Metric != vector.L2 || c.Config().Index != cairn.HNSW {
		t.Fatalf("collection %q has config %+v", c.Name(), c.Config())
	}
	if _, err := s.CreateCollection(ctx, name, cfg); !errors.Is(err, cairn.ErrCollectionExists) {
		t.Fatalf("CreateCollection(taken) = %v, want ErrCollectionExists", err)
	}
	if _, err := s.CreateCollection(ctx, "", cfg); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("CreateCollection(\"\") = %v, want ErrInvalidOptions", err)
	}
	if _, err := s.CreateCollection(ctx, name+"-bad", cairn.CollectionConfig{}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("CreateCollection(Dim 0) = %v, want ErrInvalidOptions", err)
	}
	if err := c.Add(ctx, cairn.Item{ID: "a", Embedding: []float32{1, 2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	again, err := s.Collection(ctx, name)
	if err != nil || again.Config().Dim != 4 || again.Config().Metric != vector.L2 {
		t.Fatalf("Collection(%q) = %v, %v", name, again, err)
	}
	wantCount(t, again, 1)
	infos, err := s.Collections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(infos, func(ci cairn.CollectionInfo) bool { return ci.Name == name })
	if i < 0 || infos[i].Count != 1 || infos[i].Config.Dim != 4 {
		t.Fatalf("Collections() = %+v, want %q with 1 item", infos, name)
	}
	if !slices.IsSortedFunc(infos, func(a, b cairn.CollectionInfo) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatalf("Collections() not sorted by name")
	}
	if err := s.DeleteCollection(ctx, name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Collection(ctx, name); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Collection(deleted) = %v, want ErrNotFound", err)
	}
	if err := s.DeleteCollection(ctx, name); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("DeleteCollection(deleted) = %v, want ErrNotFound", err)
	}
}

func roundTrip(t *testing.T, open Opener, m vector.Metric) {
	ctx := context.Background()
	f := fill(t, open(t, nil), m, 8, 20)
	ids := []string{"item-007", "item-003", "item-019"}
	got, err := f.c.Get(ctx, ids...)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		want := f.items[slices.IndexFunc(f.items, func(it cairn.Item) bool { return it.ID == id })]
		g := got[i]
		if g.ID != id || g.Text != want.Text {
			t.Fatalf("Get[%d] = %q %q, want %q %q", i, g.ID, g.Text, id, want.Text)
		}
		pv, _ := vector.Prepare(want.Embedding, 8, m)
		for j := range pv {
			if math.Abs(float64(g.Embedding[j]-pv[j])) > 1e-5 {
				t.Fatalf("Get(%q).Embedding = %v, want the stored form %v", id, g.Embedding, pv)
			}
		}
		if !sameMetadata(g.Metadata, want.Metadata) {
			t.Fatalf("Get(%q).Metadata = %v, want %v", id, g.Metadata, want.Metadata)
		}
	}
	if _, err := f.c.Get(ctx, "item-001", "nope"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
	}
}

// sameMetadata compares metadata after the normalisation the store does:
// every number a float64.
func sameMetadata(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		if n, isInt := w.(int); isInt {
			w = float64(n)
		}
		if g != w {
			return false
		}
	}
	return true
}

// reference is the exact answer to a query over items that pass allow.
func reference(m vector.Metric, items []cairn.Item, q []float32, k int, allow func(map[string]any) bool) []string {
	type hit struct {
		id string
		d  float64
	}
	var hits []hit
	for _, it := range items {
		if allow == nil || allow(it.Metadata) {
			hits = append(hits, hit{it.ID, m.Distance(q, it.Embedding)})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.d < b.d {
			return -1
		}
		if a.d > b.d {
			return 1
		}
		return 0
	})
	var out []string
	for i := 0; i < len(hits) && i < k; i++ {
		out = append(out, hits[i].id)
	}
	return out
}

// checkQuery runs a query and compares it with the reference: the same ids
// in the same order (allowing near-ties to swap), distances and
// similarities right.
func (f *fixture) checkQuery(t *testing.T, q []float32, k int, flt *cairn.Filter, allow func(map[string]any) bool) []cairn.Result {
	t.Helper()
	got, err := f.c.Query(context.Background(), q, k, &cairn.QueryOptions{Filter: flt})
	if err != nil {
		t.Fatalf("Query(filter %v): %v", flt, err)
	}
	want := reference(f.m, f.items, q, k, allow)
	if len(got) != len(want) {
		t.Fatalf("Query(filter %v) returned %d results, want %d", flt, len(got), len(want))
	}
	byID := map[string]cairn.Item{}
	for _, it := range f.items {
		byID[it.ID] = it
	}
	tol := 1e-4 * float64(len(q))
	for i, g := range got {
		it, ok := byID[g.ID]
		if !ok {
			t.Fatalf("result %q was never added", g.ID)
		}
		if allow != nil && !allow(it.Metadata) {
			t.Fatalf("result %q (metadata %v) does not pass filter %v", g.ID, it.Metadata, flt)
		}
		ref := f.m.Distance(q, it.Embedding)
		if math.Abs(ref-g.Distance) > tol {
			t.Fatalf("distance of %q = %v, reference %v", g.ID, g.Distance, ref)
		}
		wd := f.m.Distance(q, byID[want[i]].Embedding)
		if math.Abs(wd-g.Distance) > tol {
			t.Fatalf("rank %d: got %q at %v, want %q at %v", i, g.ID, g.Distance, want[i], wd)
		}
		if g.Text != it.Text || !sameMetadata(g.Metadata, it.Metadata) {
			t.Fatalf("result %q carries %q %v, want %q %v", g.ID, g.Text, g.Metadata, it.Text, it.Metadata)
		}
		var sim float64
		switch f.m {
		case vector.Cosine:
			sim = 1 - g.Distance
		case vector.Dot:
			sim = -g.Distance
		default:
			sim = 1 / (1 + math.Sqrt(g.Distance))
		}
		if math.Abs(sim-g.Similarity) > 1e-6 {
			t.Fatalf("similarity of %q = %v, want %v for distance %v", g.ID, g.Similarity, sim, g.Distance)
		}
	}
	return got
}

func query(t *testing.T, open Opener, m vector.Metric) {
	f := fill(t, open(t, nil), m, 8, 60)
	r := rand.New(rand.NewPCG(7, uint64(m)))
	for range 5 {
		q := make([]float32, 8)
		for j := range q {
			q[j] = r.Float32()*2 - 1
		}
		f.checkQuery(t, q, 10, nil, nil)
	}
	for _, k := range []int{100, 1 << 40, math.MaxInt} { // k beyond the size
		f.checkQuery(t, f.items[0].Embedding, k, nil, nil)
	}
	if m != vector.Dot {
		got := f.checkQuery(t, f.items[31].Embedding, 1, nil, nil)
		if got[0].ID != f.items[31].ID {
			t.Fatalf("nearest to a stored vector is %q, want %q", got[0].ID, f.items[31].ID)
		}
	}
	// WithEmbeddings returns the stored form of each result's vector, and
	// a vector query ranks by similarity.
	withVecs, err := f.c.Query(context.Background(), f.items[3].Embedding, 5, &cairn.QueryOptions{WithEmbeddings: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range withVecs {
		it := f.items[slices.IndexFunc(f.items, func(it cairn.Item) bool { return it.ID == h.ID })]
		pv, _ := vector.Prepare(it.Embedding, len(it.Embedding), m)
		if len(h.Embedding) != len(pv) || math.Abs(float64(h.Embedding[0]-pv[0])) > 1e-5 {
			t.Fatalf("WithEmbeddings: result %q carries %v, want %v", h.ID, h.Embedding, pv)
		}
		if h.Score != h.Similarity {
			t.Fatalf("vector query: Score %v differs from Similarity %v", h.Score, h.Similarity)
		}
	}
	// MinSimilarity drops results below it.
	all, err := f.c.Query(context.Background(), f.items[5].Embedding, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut := all[9].Similarity
	some, err := f.c.Query(context.Background(), f.items[5].Embedding, 20, &cairn.QueryOptions{MinSimilarity: &cut})
	if err != nil {
		t.Fatal(err)
	}
	if len(some) < 10 || len(some) == 20 {
		t.Fatalf("MinSimilarity %v kept %d of 20 results, want 10 (or a few more on ties)", cut, len(some))
	}
	for _, h := range some {
		if h.Similarity < cut {
			t.Fatalf("result below MinSimilarity: %+v", h)
		}
	}
}

func badInput(t *testing.T, open Opener) {
	ctx := context.Background()
	f := fill(t, open(t, nil), vector.Cosine, 4, 10)
	c := f.c
	nan := []float32{1, float32(math.NaN()), 0, 0}
	inf := []float32{1, 0, float32(math.Inf(-1)), 0}
	good := []float32{1, 2, 3, 4}
	cases := []struct {
		name  string
		items []cairn.Item
		want  error
	}{
		{"short", []cairn.Item{{ID: "x1", Embedding: []float32{1, 2, 3}}}, vector.ErrDimensionMismatch},
		{"long", []cairn.Item{{ID: "x1", Embedding: []float32{1, 2, 3, 4, 5}}}, vector.ErrDimensionMismatch},
		{"nan", []cairn.Item{{ID: "x1", Embedding: nan}}, vector.ErrNonFinite},
		{"inf", []cairn.Item{{ID: "x1", Embedding: inf}}, vector.ErrNonFinite},
		{"zero", []cairn.Item{{ID: "x1", Embedding: make([]float32, 4)}}, vector.ErrZeroVector},
		{"empty id", []cairn.Item{{ID: "x1", Embedding: good}, {ID: "", Embedding: good}}, vector.ErrEmptyID},
		{"repeated id", []cairn.Item{{ID: "x1", Embedding: good}, {ID: "x1", Embedding: good}}, vector.ErrDuplicateID},
		{"stored id", []cairn.Item{{ID: "x1", Embedding: good}, {ID: "item-002", Embedding: good}}, vector.ErrDuplicateID},
		{"bad metadata", []cairn.Item{{ID: "x1", Embedding: good, Metadata: map[string]any{"k": struct{}{}}}}, vector.ErrInvalidOptions},
		{"nan metadata", []cairn.Item{{ID: "x1", Embedding: good, Metadata: map[string]any{"k": math.NaN()}}}, vector.ErrInvalidOptions},
		{"no embedder", []cairn.Item{{ID: "x1", Text: "no vector"}}, cairn.ErrNoEmbedder},
	}
	for _, cs := range cases {
		if err := c.Add(ctx, cs.items...); !errors.Is(err, cs.want) {
			t.Errorf("Add(%s) = %v, want %v", cs.name, err, cs.want)
		}
		if cs.name != "stored id" && cs.name != "repeated id" {
			if err := c.Upsert(ctx, cs.items...); !errors.Is(err, cs.want) {
				t.Errorf("Upsert(%s) = %v, want %v", cs.name, err, cs.want)
			}
		}
	}
	if _, err := c.Get(ctx, "x1"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Get(x1) after rejected writes = %v, want ErrNotFound", err)
	}
	wantCount(t, c, 10)
	for _, k := range []int{0, -3} {
		if _, err := c.Query(ctx, good, k, nil); !errors.Is(err, vector.ErrInvalidK) {
			t.Errorf("Query(k=%d) = %v, want ErrInvalidK", k, err)
		}
		if _, err := c.QueryText(ctx, "q", k, nil); !errors.Is(err, vector.ErrInvalidK) {
			t.Errorf("QueryText(k=%d) = %v, want ErrInvalidK", k, err)
		}
	}
	for _, q := range [][]float32{{1, 2}, nan, inf, make([]float32, 4)} {
		if _, err := c.Query(ctx, q, 3, nil); err == nil {
			t.Errorf("Query(%v) succeeded", q)
		}
	}
	if _, err := c.Query(ctx, []float32{1, 2}, 3, nil); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("Query(short) = %v, want ErrDimensionMismatch", err)
	}
	if _, err := c.Query(ctx, nan, 3, nil); !errors.Is(err, vector.ErrNonFinite) {
		t.Errorf("Query(NaN) = %v, want ErrNonFinite", err)
	}
	if _, err := c.QueryText(ctx, "q", 3, nil); !errors.Is(err, cairn.ErrNoEmbedder) {
		t.Errorf("QueryText without embedder = %v, want ErrNoEmbedder", err)
	}
	badFilters := []*cairn.Filter{cairn.Eq("", 1), cairn.Lt("year", "2020"), cairn.Not(nil), cairn.And(cairn.Eq("k", []int{1})), {}}
	for _, bf := range badFilters {
		if _, err := c.Query(ctx, good, 3, &cairn.QueryOptions{Filter: bf}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Query(filter %v) = %v, want ErrInvalidOptions", bf, err)
		}
		if _, err := c.Find(ctx, bf, 0); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Find(filter %v) = %v, want ErrInvalidOptions", bf, err)
		}
		if _, err := c.DeleteWhere(ctx, bf); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("DeleteWhere(filter %v) = %v, want ErrInvalidOptions", bf, err)
		}
	}
	if _, err := c.DeleteWhere(ctx, nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("DeleteWhere(nil) = %v, want ErrInvalidOptions", err)
	}
	if err := c.Delete(ctx, "item-001", "nope"); !errors.Is(err, vector.ErrNotFound) {
		t.Errorf("Delete(missing) = %v, want ErrNotFound", err)
	}
	wantCount(t, c, 10) // the Delete that named a missing id deleted nothing
}

func upsert(t *testing.T, open Opener) {
	ctx := context.Background()
	f := fill(t, open(t, nil), vector.L2, 4, 10)
	up := []cairn.Item{
		{ID: "item-004", Embedding: []float32{9, 9, 9, 9}, Text: "new", Metadata: map[string]any{"kind": "changed"}},
		{ID: "fresh", Embedding: []float32{-9, 0, 0, 0}, Text: "fresh"},
	}
	if err := f.c.Upsert(ctx, up...); err != nil {
		t.Fatal(err)
	}
	wantCount(t, f.c, 11)
	got, err := f.c.Get(ctx, "item-004", "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Text != "new" || got[0].Embedding[0] != 9 || !sameMetadata(got[0].Metadata, up[0].Metadata) {
		t.Fatalf("upserted item = %+v", got[0])
	}
	if got[1].Text != "fresh" || len(got[1].Metadata) != 0 {
		t.Fatalf("fresh item = %+v", got[1])
	}
	hits, err := f.c.Query(ctx, []float32{9, 9, 9, 9}, 1, &cairn.QueryOptions{Filter: cairn.Eq("kind", "changed")})
	if err != nil || len(hits) != 1 || hits[0].ID != "item-004" || hits[0].Distance != 0 {
		t.Fatalf("query for the upserted item = %+v, %v", hits, err)
	}
	// The old metadata no longer matches.
	old, err := f.c.Find(ctx, cairn.Eq("kind", kinds[4%3]), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range old {
		if it.ID == "item-004" {
			t.Fatalf("item-004 still matches its old metadata")
		}
	}
}

func deleteItems(t *testing.T, open Opener) {
	ctx := context.Background()
	f := fill(t, open(t, nil), vector.Cosine, 4, 30)
	if err := f.c.Delete(ctx, "item-001", "item-002", "item-001"); err != nil {
		t.Fatal(err)
	}
	wantCount(t, f.c, 28)
	if _, err := f.c.Get(ctx, "item-001"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("Get(deleted) = %v", err)
	}
	n, err := f.c.DeleteWhere(ctx, cairn.Eq("kind", "fact"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, it := range f.items[3:] {
		if it.Metadata["kind"] == "fact" {
			want++
		}
	}
	if n != want {
		t.Fatalf("DeleteWhere(kind = fact) = %d, want %d", n, want)
	}
	wantCount(t, f.c, 28-want)
	left, err := f.c.Find(ctx, cairn.Eq("kind", "fact"), 0)
	if err != nil || len(left) != 0 {
		t.Fatalf("Find(kind = fact) after DeleteWhere = %d items, %v", len(left), err)
	}
	if n, err := f.c.DeleteWhere(ctx, cairn.Eq("kind", "fact")); err != nil || n != 0 {
		t.Fatalf("second DeleteWhere = %d, %v", n, err)
	}
	// A deleted id can be added again.
	if err := f.c.Add(ctx, cairn.Item{ID: "item-001", Embedding: []float32{0, 0, 0, 1}}); err != nil {
		t.Fatalf("re-Add: %v", err)
	}
	if n, err := f.c.DeleteWhere(ctx, cairn.And()); err != nil || n != 28-want+1 {
		t.Fatalf("DeleteWhere(And()) = %d, %v; want %d", n, err, 28-want+1)
	}
	wantCount(t, f.c, 0)
}

// filterCases pairs filters with the predicate they mean.
func filterCases() []struct {
	f     *cairn.Filter
	allow func(map[string]any) bool
} {
	num := func(md map[string]any, k string) (float64, bool) {
		switch v := md[k].(type) {
		case int:
			return float64(v), true
		case float64:
			return v, true
		}
		return 0, false
	}
	return []struct {
		f     *cairn.Filter
		allow func(map[string]any) bool
	}{
		{cairn.Eq("kind", "fact"), func(md map[string]any) bool { return md["kind"] == "fact" }},
		{cairn.Ne("kind", "fact"), func(md map[string]any) bool { return md["kind"] != "fact" }},
		{cairn.Eq("year", 2020), func(md map[string]any) bool { y, _ := num(md, "year"); return y == 2020 }},
		{cairn.Eq("year", "2020"), func(map[string]any) bool { return false }},
		{cairn.Eq("missing", "x"), func(map[string]any) bool { return false }},
		{cairn.Ne("missing", "x"), func(map[string]any) bool { return true }},
		{cairn.Eq("pinned", true), func(md map[string]any) bool { return md["pinned"] == true }},
		{cairn.In("kind", "fact", "note", 3), func(md map[string]any) bool { return md["kind"] == "fact" || md["kind"] == "note" }},
		{cairn.In("kind"), func(map[string]any) bool { return false }},
		{cairn.Gte("year", 2022), func(md map[string]any) bool { y, _ := num(md, "year"); return y >= 2022 }},
		{cairn.Lt("score", 3.5), func(md map[string]any) bool { s, _ := num(md, "score"); return s < 3.5 }},
		{cairn.Lt("kind", 3), func(map[string]any) bool { return false }},
		{cairn.And(cairn.Gt("year", 2019), cairn.Lte("year", 2023), cairn.Ne("pinned", true)), func(md map[string]any) bool {
			y, _ := num(md, "year")
			return y > 2019 && y <= 2023 && md["pinned"] != true
		}},
		{cairn.Or(cairn.Eq("kind", "event"), cairn.Gte("score", 12)), func(md map[string]any) bool {
			s, _ := num(md, "score")
			return md["kind"] == "event" || s >= 12
		}},
		{cairn.Not(cairn.Or(cairn.Eq("kind", "event"), cairn.Eq("pinned", false))), func(md map[string]any) bool {
			return !(md["kind"] == "event" || md["pinned"] == false)
		}},
		{cairn.And(), func(map[string]any) bool { return true }},
		{cairn.Or(), func(map[string]any) bool { return false }},
	}
}

func filters(t *testing.T, open Opener) {
	f := fill(t, open(t, nil), vector.Cosine, 8, 60)
	q := f.items[10].Embedding
	for _, fc := range filterCases() {
		f.checkQuery(t, q, 7, fc.f, fc.allow)
		got, err := f.c.Find(context.Background(), fc.f, 0)
		if err != nil {
			t.Fatalf("Find(%v): %v", fc.f, err)
		}
		var want []string
		for _, it := range f.items {
			if fc.allow(it.Metadata) {
				want = append(want, it.ID)
			}
		}
		var ids []string
		for _, it := range got {
			ids = append(ids, it.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, want) {
			t.Fatalf("Find(%v) = %v, want %v", fc.f, ids, want)
		}
	}
	// A filter given as JSON means the same.
	jf, err := cairn.ParseFilter([]byte(`{"year": {"$gte": 2020, "$lt": 2024}, "kind": {"$nin": ["note"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	f.checkQuery(t, q, 10, jf, func(md map[string]any) bool {
		y := float64(md["year"].(int))
		return y >= 2020 && y < 2024 && md["kind"] != "note"
	})
}

func find(t *testing.T, open Opener) {
	ctx := context.Background()
	f := fill(t, open(t, nil), vector.Dot, 4, 12)
	time.Sleep(5 * time.Millisecond)
	late := cairn.Item{ID: "aaa-late", Embedding: []float32{1, 1, 1, 1}, Metadata: map[string]any{"kind": "fact"}}
	if err := f.c.Add(ctx, late); err != nil {
		t.Fatal(err)
	}
	all, err := f.c.Find(ctx, nil, 0)
	if err != nil || len(all) != 13 {
		t.Fatalf("Find(nil) = %d items, %v; want 13", len(all), err)
	}
	if all[12].ID != "aaa-late" {
		t.Fatalf("Find(nil) does not list the last added item last: %q", all[12].ID)
	}
	if all[12].Embedding[0] != 1 || all[12].Metadata["kind"] != "fact" {
		t.Fatalf("Find returned %+v", all[12])
	}
	three, err := f.c.Find(ctx, cairn.Eq("kind", "fact"), 3)
	if err != nil || len(three) != 3 {
		t.Fatalf("Find(limit 3) = %d items, %v", len(three), err)
	}
}

// embedder maps a text to a vector by its letters, so that equal texts
// embed equally and the suite needs no model.
var embedder = cairn.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 4)
		for j, r := range s {
			v[j%4] += float32(r%17) + 1
		}
		out[i] = v
	}
	return out, nil
})

func text(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, embedder)
	c := create(t, s, cairn.CollectionConfig{Dim: 4, Index: cairn.Flat})
	items := []cairn.Item{{ID: "a", Text: "the user likes go"}, {ID: "b", Text: "the cat is called miso"}, {ID: "c", Text: "zzzz"}}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	hits, err := c.QueryText(ctx, "the cat is called miso", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != "b" || hits[0].Text != "the cat is called miso" || hits[0].Similarity < 0.9999 {
		t.Fatalf("QueryText = %+v", hits)
	}
}

func concurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, nil)
	c := create(t, s, cairn.CollectionConfig{Dim: 4, Index: cairn.Flat})
	var wg sync.WaitGroup
	var dupWins atomic.Int32
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range 10 {
				v := []float32{r.Float32() + 0.1, r.Float32(), r.Float32(), r.Float32()}
				if err := c.Add(ctx, cairn.Item{ID: fmt.Sprintf("w%d-%d", w, i), Embedding: v}); err != nil {
					t.Errorf("Add: %v", err)
					return
				}
				if _, err := c.Query(ctx, v, 3, nil); err != nil {
					t.Errorf("Query: %v", err)
					return
				}
			}
		})
		wg.Go(func() {
			err := c.Add(ctx, cairn.Item{ID: "contested", Embedding: []float32{1, 0, 0, float32(w)}})
			switch {
			case err == nil:
				dupWins.Add(1)
			case !errors.Is(err, vector.ErrDuplicateID):
				t.Errorf("contested Add: %v", err)
			}
		})
	}
	wg.Wait()
	if dupWins.Load() != 1 {
		t.Fatalf("%d of 3 concurrent Adds of one id succeeded, want 1", dupWins.Load())
	}
	wantCount(t, c, 31)
}
