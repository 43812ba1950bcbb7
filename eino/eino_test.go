package eino_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/eino"
	"github.com/cairndb/cairn/vector"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/embedding"
	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"
)

var docs = []*schema.Document{
	{ID: "cat-en", Content: "Cats sleep most of the day", MetaData: map[string]any{"animal": "cat", "lang": "en"}},
	{ID: "dog-en", Content: "Dogs need a walk every day", MetaData: map[string]any{"animal": "dog", "lang": "en"}},
	{ID: "cat-fr", Content: "Les chats dorment beaucoup", MetaData: map[string]any{"animal": "cat", "lang": "fr"}},
	{ID: "fish-en", Content: "Goldfish remember more than three seconds", MetaData: map[string]any{"animal": "fish", "lang": "en", "year": 2020}},
}

func ids(ds []*schema.Document) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	slices.Sort(out)
	return out
}

func setup(t *testing.T) (*cairn.DB, *eino.Indexer, *eino.Retriever) {
	t.Helper()
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	t.Cleanup(func() { db.Close() })
	idx, err := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: words{}})
	if err != nil {
		t.Fatal(err)
	}
	ret, err := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db, Embedding: words{}})
	if err != nil {
		t.Fatal(err)
	}
	return db, idx, ret
}

func TestIndexerRetriever(t *testing.T) {
	ctx := context.Background()
	db, idx, ret := setup(t)

	// Nothing stored yet: nothing found.
	if got, err := ret.Retrieve(ctx, "cats"); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	// Ids as given; a document without one gets a new one; a score left
	// in the metadata by an earlier retrieval is not stored.
	scored := (&schema.Document{Content: "Cats purr", MetaData: map[string]any{"animal": "cat"}}).WithScore(0.9)
	got, err := idx.Store(ctx, append(slices.Clone(docs), scored))
	if err != nil || len(got) != len(docs)+1 || got[0] != "cat-en" || len(got[len(docs)]) != 32 {
		t.Fatalf("Store: %q, %v", got, err)
	}
	generated := got[len(docs)]
	// Storing under an existing id replaces the document.
	if _, err := idx.Store(ctx, []*schema.Document{{ID: "dog-en", Content: "Dogs need a walk every day", MetaData: map[string]any{"animal": "dog", "lang": "en", "v": 2}}}); err != nil {
		t.Fatal(err)
	}
	c, err := db.Collection(ctx, eino.DefaultCollection)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx); n != len(docs)+1 {
		t.Fatalf("%d stored, want %d", n, len(docs)+1)
	}
	stored, err := c.Get(ctx, generated, "dog-en")
	if err != nil || stored[0].Metadata["_score"] != nil || stored[1].Metadata["v"] != 2.0 {
		t.Fatalf("stored metadata %v, %v; %v", stored[0].Metadata, stored[1].Metadata, err)
	}

	// Default TopK, most similar first, with scores.
	found, err := ret.Retrieve(ctx, "how much do cats sleep during the day")
	if err != nil || len(found) != eino.DefaultTopK || found[0].ID != "cat-en" || found[0].MetaData["animal"] != "cat" {
		t.Fatalf("default retrieval: %v, %v", ids(found), err)
	}
	s0, s1 := found[0].Score(), found[1].Score()
	if !(s0 > s1 && s0 <= 1 && s1 > 0) {
		t.Fatalf("scores %v, %v", s0, s1)
	}
	found, err = ret.Retrieve(ctx, "how much do cats sleep during the day", retriever.WithScoreThreshold((s0+s1)/2))
	if err != nil || len(found) != 1 {
		t.Fatalf("with a threshold: %v, %v", ids(found), err)
	}

	for _, tc := range []struct {
		name string
		opts []retriever.Option
		want []string
	}{
		{"TopK", []retriever.Option{retriever.WithTopK(1)}, []string{"cat-en"}},
		{"map", []retriever.Option{eino.WithFilter(map[string]any{"animal": "cat", "lang": "fr"})}, []string{"cat-fr"}},
		{"operators", []retriever.Option{eino.WithFilter(map[string]any{"$or": []any{map[string]any{"animal": "dog"}, map[string]any{"year": map[string]any{"$gte": 2000}}}})}, []string{"dog-en", "fish-en"}},
		{"string", []retriever.Option{eino.WithFilter(`{"animal": {"$in": ["fish"]}}`)}, []string{"fish-en"}},
		{"cairn.Filter", []retriever.Option{eino.WithFilter(cairn.Eq("v", 2))}, []string{"dog-en"}},
		{"{}", []retriever.Option{retriever.WithTopK(10), eino.WithFilter("{}")}, []string{"cat-en", "cat-fr", "dog-en", "fish-en", generated}},
		{"other index", []retriever.Option{retriever.WithIndex("none")}, []string{}},
		{"empty index: the configured one", []retriever.Option{retriever.WithTopK(1), retriever.WithIndex("")}, []string{"cat-en"}},
	} {
		got, err := ret.Retrieve(ctx, "how much do cats sleep during the day", tc.opts...)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if err != nil || !slices.Equal(ids(got), slices.Compact(want)) {
			t.Errorf("%s: %q, %v; want %q", tc.name, ids(got), err, want)
		}
	}
}

// A config's filter and threshold apply until an option overrides them.
func TestRetrieverConfig(t *testing.T) {
	ctx := context.Background()
	db, idx, _ := setup(t)
	if _, err := idx.Store(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ret, err := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db, Embedding: words{}, TopK: 10, Filter: `{"lang": "en"}`})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ret.Retrieve(ctx, "cats")
	if err != nil || !slices.Equal(ids(got), []string{"cat-en", "dog-en", "fish-en"}) {
		t.Fatalf("config filter: %q, %v", ids(got), err)
	}
	got, err = ret.Retrieve(ctx, "cats", eino.WithFilter(nil))
	if err != nil || len(got) != len(docs) {
		t.Fatalf("filter overridden by nil: %q, %v", ids(got), err)
	}
}

// Integers beyond 2^53 stay exact through the store, a file, and a filter.
func TestExactIntegers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "eino.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: words{}})
	if err != nil {
		t.Fatal(err)
	}
	const big = int64(1) << 53
	if _, err := idx.Store(ctx, []*schema.Document{
		{ID: "a", Content: "cats sleep", MetaData: map[string]any{"n": big}},
		{ID: "b", Content: "cats eat", MetaData: map[string]any{"n": big + 1}},
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = cairn.Open(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ret, err := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db, Embedding: words{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []any{map[string]any{"n": big + 1}, `{"n": 9007199254740993}`, `{"n": {"$gt": 9007199254740992}}`} {
		got, err := ret.Retrieve(ctx, "cats", eino.WithFilter(f))
		if err != nil || len(got) != 1 || got[0].ID != "b" || got[0].MetaData["n"] != big+1 {
			t.Errorf("filter %v: %q, %v", f, ids(got), err)
		}
	}
}

// Store and Retrieve report to Eino's callbacks: start and end, or error.
func TestCallbacks(t *testing.T) {
	ctx := context.Background()
	_, idx, ret := setup(t)
	var mu sync.Mutex
	var events []string
	h := callbacks.NewHandlerBuilder().
		OnStartFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, "start "+string(info.Component)+" "+info.Type)
			return ctx
		}).
		OnEndFn(func(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
			mu.Lock()
			defer mu.Unlock()
			switch o := out.(type) {
			case *indexer.CallbackOutput:
				events = append(events, "end Indexer "+o.IDs[0])
			case *retriever.CallbackOutput:
				events = append(events, "end Retriever "+o.Docs[0].ID)
			}
			return ctx
		}).
		OnErrorFn(func(ctx context.Context, info *callbacks.RunInfo, err error) context.Context {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, "error "+string(info.Component))
			return ctx
		}).Build()
	ctx = callbacks.InitCallbacks(ctx, nil, h)
	if _, err := idx.Store(ctx, docs[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := ret.Retrieve(ctx, "cats"); err != nil {
		t.Fatal(err)
	}
	if _, err := ret.Retrieve(ctx, "cats", retriever.WithTopK(-1)); err == nil {
		t.Fatal("TopK -1: no error")
	}
	want := []string{"start Indexer Cairn", "end Indexer cat-en", "start Retriever Cairn", "end Retriever cat-en", "start Retriever Cairn", "error Retriever"}
	if !slices.Equal(events, want) {
		t.Errorf("callbacks %q, want %q", events, want)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	db, idx, ret := setup(t)
	if _, err := idx.Store(ctx, docs); err != nil {
		t.Fatal(err)
	}
	noEmb, err := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	search := func(opts ...retriever.Option) error { _, err := ret.Retrieve(ctx, "cats", opts...); return err }
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"TopK 0", search(retriever.WithTopK(0)), vector.ErrInvalidK},
		{"threshold above 1", search(retriever.WithScoreThreshold(1.5)), vector.ErrInvalidOptions},
		{"threshold NaN", search(retriever.WithScoreThreshold(math.NaN())), vector.ErrInvalidOptions},
		{"filter of a wrong type", search(eino.WithFilter([]string{"a"})), eino.ErrInvalidFilter},
		{"bad filter", search(eino.WithFilter(`{"a": {"$near": 1}}`)), vector.ErrInvalidOptions},
		{"no embedding", func() error { _, err := noEmb.Retrieve(ctx, "cats"); return err }(), eino.ErrNoEmbedding},
		{"sub-indexes", func() error { _, err := idx.Store(ctx, docs, indexer.WithSubIndexes([]string{"a"})); return err }(), eino.ErrSubIndexes},
		{"nested metadata", func() error {
			_, err := idx.Store(ctx, []*schema.Document{{ID: "x", Content: "x", MetaData: map[string]any{"tags": []string{"a"}}}})
			return err
		}(), vector.ErrInvalidOptions},
		{"nil DB", func() error { _, err := eino.NewIndexer(ctx, nil); return err }(), vector.ErrInvalidOptions},
		{"bad config filter", func() error {
			_, err := eino.NewRetriever(ctx, &eino.RetrieverConfig{DB: db, Filter: 3})
			return err
		}(), eino.ErrInvalidFilter},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want an error wrapping %v", tc.name, tc.err, tc.want)
		}
	}
}

// TestIndexersCreateTogether has two Indexers on one DB store the first
// documents of a new collection at once, round after round: both writes
// succeed (one of them used to fail with ErrCollectionExists, the other
// Indexer having created the collection meanwhile).
func TestIndexersCreateTogether(t *testing.T) {
	ctx := context.Background()
	for round := range 30 {
		db := cairn.OpenMemory(nil)
		errs := make([]error, 2)
		var g sync.WaitGroup
		for i := range errs {
			idx, err := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: words{}})
			if err != nil {
				t.Fatal(err)
			}
			g.Go(func() {
				_, errs[i] = idx.Store(ctx, []*schema.Document{{ID: string(rune('a' + i)), Content: "a document"}})
			})
		}
		g.Wait()
		db.Close()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// fixed is an embedding.Embedder that gives its vectors, in turn.
type fixed [][]float64

func (f fixed) EmbedStrings(_ context.Context, texts []string, _ ...embedding.Option) ([][]float64, error) {
	return f[:len(texts)], nil
}

// TestFailedFirstStoreMakesNothing: a first Store whose vectors cairn
// refuses (beyond float32, uneven lengths) fails and makes no collection,
// so that a later Store, of another dimension, makes it for its own.
func TestFailedFirstStoreMakesNothing(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []fixed{{{1e300, 1}}, {{1, 0}, {1, 0, 0}}} {
		db := cairn.OpenMemory(nil)
		defer db.Close()
		idx, err := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: bad})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := idx.Store(ctx, docs[:len(bad)]); err == nil {
			t.Fatalf("Store of %v succeeded", bad)
		}
		if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
			t.Fatalf("a failed Store left collections %v, %v", infos, err)
		}
		good, err := eino.NewIndexer(ctx, &eino.IndexerConfig{DB: db, Embedding: fixed{{1, 2, 3, 4}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := good.Store(ctx, docs[:1]); err != nil {
			t.Fatalf("Store after a failed one: %v", err)
		}
	}
}

// TestRefusedMetadataMakesNothing: a first Store refused for its
// metadata (a list, which cairn does not store) makes no collection.
func TestRefusedMetadataMakesNothing(t *testing.T) {
	ctx := context.Background()
	db, idx, _ := setup(t)
	nested := &schema.Document{ID: "a", Content: "Cats purr", MetaData: map[string]any{"tags": []any{"cat"}}}
	if _, err := idx.Store(ctx, []*schema.Document{nested}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("Store of a list in metadata: %v, want ErrInvalidOptions", err)
	}
	if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
		t.Errorf("a refused Store left collections %v, %v", infos, err)
	}
}
