package cairngenkit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn"
	cairngenkit "github.com/cairndb/cairn/genkit"
	"github.com/cairndb/cairn/vector"
	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

var docs = []*ai.Document{
	ai.DocumentFromText("Cats sleep most of the day", map[string]any{"animal": "cat", "lang": "en"}),
	ai.DocumentFromText("Dogs need a walk every day", map[string]any{"animal": "dog", "lang": "en"}),
	ai.DocumentFromText("Les chats dorment beaucoup", map[string]any{"animal": "cat", "lang": "fr"}),
	ai.DocumentFromText("Goldfish remember more than three seconds", map[string]any{"animal": "fish", "lang": "en", "year": 2020}),
}

// setup defines a bag-of-words embedder counting its documents and a
// retriever over db.
func setup(t *testing.T, db *cairn.DB) (*genkit.Genkit, *cairngenkit.DocStore, ai.Retriever, *atomic.Int64) {
	t.Helper()
	g := genkit.Init(context.Background())
	var embedded atomic.Int64
	emb := genkit.DefineEmbedder(g, "test/words", nil, func(_ context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		embedded.Add(int64(len(req.Input)))
		res := &ai.EmbedResponse{}
		for _, d := range req.Input {
			res.Embeddings = append(res.Embeddings, &ai.Embedding{Embedding: bagOfWords(d.Content[0].Text)})
		}
		return res, nil
	})
	ds, r, err := cairngenkit.DefineRetriever(g, "pets", cairngenkit.Config{DB: db, Embedder: emb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g, ds, r, &embedded
}

func texts(ds []*ai.Document) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Content[0].Text
	}
	slices.Sort(out)
	return out
}

func retrieve(g *genkit.Genkit, r ai.Retriever, query string, opts any) ([]*ai.Document, error) {
	res, err := genkit.Retrieve(context.Background(), g, ai.WithRetriever(r), ai.WithTextDocs(query), ai.WithConfig(opts))
	if err != nil {
		return nil, err
	}
	return res.Documents, nil
}

func TestRetriever(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	g, ds, r, embedded := setup(t, db)

	// Before anything is indexed, nothing is found.
	if got, err := retrieve(g, r, "cats", nil); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	if !cairngenkit.IsDefinedRetriever(g, "pets") || cairngenkit.Retriever(g, "pets") == nil || r.Name() != "cairn/pets" {
		t.Fatalf("retriever %q not registered as cairn/pets", r.Name())
	}
	if err := cairngenkit.Index(ctx, docs, ds); err != nil {
		t.Fatal(err)
	}
	// Indexing again stores and embeds nothing more: ids are content hashes.
	if err := ds.Index(ctx, append(slices.Clone(docs), docs[0])); err != nil {
		t.Fatal(err)
	}
	c, err := db.Collection(ctx, "pets")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx); n != len(docs) || embedded.Load() != int64(len(docs)) {
		t.Fatalf("%d stored, %d embedded; want %d of each", n, embedded.Load(), len(docs))
	}

	// Default K is 3, most similar first, each with its score.
	got, err := retrieve(g, r, "how much do cats sleep during the day", nil)
	if err != nil || len(got) != cairngenkit.DefaultK || got[0].Content[0].Text != "Cats sleep most of the day" {
		t.Fatalf("default retrieval: %v, %v", texts(got), err)
	}
	s0, _ := got[0].Metadata[cairngenkit.ScoreKey].(float64)
	s1, _ := got[1].Metadata[cairngenkit.ScoreKey].(float64)
	if !(s0 > s1 && s0 <= 1 && s1 > 0) || got[0].Metadata["animal"] != "cat" {
		t.Fatalf("scores %v, %v and metadata %v", s0, s1, got[0].Metadata)
	}
	// A threshold between the first two scores keeps the first.
	got, err = retrieve(g, r, "how much do cats sleep during the day", &cairngenkit.RetrieverOptions{K: 4, ScoreThreshold: (s0 + s1) / 2})
	if err != nil || len(got) != 1 {
		t.Fatalf("with a threshold: %v, %v", texts(got), err)
	}

	// Filters in every form, and the options as JSON (the developer UI).
	for _, tc := range []struct {
		name string
		opts any
		want []string
	}{
		{"map", &cairngenkit.RetrieverOptions{K: 4, Filter: map[string]any{"animal": "cat", "lang": "fr"}}, []string{"Les chats dorment beaucoup"}},
		{"operators", &cairngenkit.RetrieverOptions{K: 4, Filter: map[string]any{"$or": []any{map[string]any{"animal": "dog"}, map[string]any{"year": map[string]any{"$gte": 2000}}}}},
			[]string{"Dogs need a walk every day", "Goldfish remember more than three seconds"}},
		{"string", &cairngenkit.RetrieverOptions{K: 4, Filter: `{"animal": {"$in": ["dog"]}}`}, []string{"Dogs need a walk every day"}},
		{"cairn.Filter", &cairngenkit.RetrieverOptions{K: 4, Filter: cairn.Eq("animal", "fish")}, []string{"Goldfish remember more than three seconds"}},
		{"{}", &cairngenkit.RetrieverOptions{K: 4, Filter: "{}"}, texts(docs)},
		{"value", cairngenkit.RetrieverOptions{K: 1, Filter: map[string]any{"animal": "dog"}}, []string{"Dogs need a walk every day"}},
		{"JSON", map[string]any{"k": 4, "filter": map[string]any{"lang": map[string]any{"$ne": "en"}}}, []string{"Les chats dorment beaucoup"}},
		{"JSON string filter", map[string]any{"k": 4, "filter": `{"animal": "dog"}`}, []string{"Dogs need a walk every day"}},
	} {
		got, err := retrieve(g, r, "cats", tc.opts)
		if err != nil || !slices.Equal(texts(got), tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, texts(got), err, tc.want)
		}
	}

	// Delete by the ids Index gave.
	id, err := cairngenkit.DocID(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Delete(ctx, id, "no-such-id"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("delete with an unknown id: %v", err)
	}
	if err := ds.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx); n != len(docs)-1 {
		t.Fatalf("%d left after a delete", n)
	}
}

// Integers beyond 2^53 stay exact through the store, a file, and a filter.
func TestExactIntegers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "genkit.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ds, _, _ := setup(t, db)
	const big = int64(1) << 53
	if err := ds.Index(ctx, []*ai.Document{
		ai.DocumentFromText("cats sleep", map[string]any{"n": big}),
		ai.DocumentFromText("cats eat", map[string]any{"n": big + 1}),
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = cairn.Open(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g, _, r, _ := setup(t, db)
	for _, opts := range []any{
		&cairngenkit.RetrieverOptions{Filter: map[string]any{"n": big + 1}},
		&cairngenkit.RetrieverOptions{Filter: `{"n": {"$gt": 9007199254740992}}`},
		map[string]any{"filter": map[string]any{"n": big + 1}},
	} {
		got, err := retrieve(g, r, "cats", opts)
		if err != nil || len(got) != 1 || got[0].Metadata["n"] != big+1 {
			t.Errorf("filter n = 2^53+1 (%v): %v, %v", opts, texts(got), err)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	g, ds, r, _ := setup(t, db)
	if err := ds.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	search := func(opts any) error { _, err := retrieve(g, r, "cats", opts); return err }
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"options of a wrong type", func() error { // genkit's schema check refuses them first
			_, err := ds.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("cats", nil), Options: 42})
			return err
		}(), cairngenkit.ErrInvalidOptions},
		{"negative K", search(&cairngenkit.RetrieverOptions{K: -1}), vector.ErrInvalidK},
		{"threshold above 1", search(&cairngenkit.RetrieverOptions{ScoreThreshold: 1.5}), vector.ErrInvalidOptions},
		{"threshold NaN", func() error { // genkit's schema check refuses it first
			_, err := ds.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("cats", nil), Options: &cairngenkit.RetrieverOptions{ScoreThreshold: math.NaN()}})
			return err
		}(), vector.ErrInvalidOptions},
		{"filter of a wrong type", search(&cairngenkit.RetrieverOptions{Filter: []string{"a"}}), cairngenkit.ErrInvalidFilter},
		{"bad filter", search(&cairngenkit.RetrieverOptions{Filter: `{"a": {"$near": 1}}`}), vector.ErrInvalidOptions},
		{"media document", ds.Index(ctx, []*ai.Document{{Content: []*ai.Part{ai.NewMediaPart("image/png", "data:,")}}}), cairngenkit.ErrNotText},
		{"nested metadata", ds.Index(ctx, []*ai.Document{ai.DocumentFromText("x", map[string]any{"tags": []string{"a"}})}), vector.ErrInvalidOptions},
		{"no embedder", func() error {
			_, _, err := cairngenkit.DefineRetriever(g, "x", cairngenkit.Config{DB: db}, nil)
			return err
		}(), cairngenkit.ErrNoEmbedder},
		{"no DB", func() error { _, err := cairngenkit.NewDocStore("x", cairngenkit.Config{}); return err }(), vector.ErrInvalidOptions},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want an error wrapping %v", tc.name, tc.err, tc.want)
		}
	}
}

// TestIndexTogether indexes at once, round after round, the first
// documents of a new collection through two DocStores of one DB, and one
// document through two calls of one DocStore: every call succeeds, and
// the document is stored once (one call used to fail with
// ErrCollectionExists, the other with ErrDuplicateID).
func TestIndexTogether(t *testing.T) {
	ctx := context.Background()
	for round := range 30 {
		db := cairn.OpenMemory(nil)
		_, ds, _, _ := setup(t, db)
		_, other, _, _ := setup(t, db)
		same := ai.DocumentFromText("the same document", nil)
		errs := make([]error, 4)
		var g sync.WaitGroup
		g.Go(func() { errs[0] = ds.Index(ctx, []*ai.Document{ai.DocumentFromText("one", nil)}) })
		g.Go(func() { errs[1] = other.Index(ctx, []*ai.Document{ai.DocumentFromText("two", nil)}) })
		g.Wait()
		g.Go(func() { errs[2] = ds.Index(ctx, []*ai.Document{same}) })
		g.Go(func() { errs[3] = ds.Index(ctx, []*ai.Document{same}) })
		g.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		c, err := db.Collection(ctx, "pets")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := c.Count(ctx); err != nil || n != 3 {
			t.Fatalf("round %d: %d documents, %v; want 3", round, n, err)
		}
		db.Close()
	}
}

// TestFailedFirstIndexMakesNothing: a first Index whose vectors cairn
// refuses (all zero under cosine, uneven lengths) fails and makes no
// collection, so that a later Index, of another dimension, makes it for
// its own; an embedder that answers nothing for a document, and metadata
// JSON cannot hold, are refused as the package says.
func TestFailedFirstIndexMakesNothing(t *testing.T) {
	ctx := context.Background()
	g := genkit.Init(ctx)
	define := func(name string, vecs ...[]float32) ai.Embedder {
		return genkit.DefineEmbedder(g, name, nil, func(_ context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
			res := &ai.EmbedResponse{}
			for i := range req.Input {
				if vecs[i] == nil {
					res.Embeddings = append(res.Embeddings, nil)
					continue
				}
				res.Embeddings = append(res.Embeddings, &ai.Embedding{Embedding: vecs[i]})
			}
			return res, nil
		})
	}
	for i, bad := range [][][]float32{{{0, 0}}, {{1, 0}, {1, 0, 0}}} {
		db := cairn.OpenMemory(nil)
		defer db.Close()
		ds, err := cairngenkit.NewDocStore("pets", cairngenkit.Config{DB: db, Embedder: define(fmt.Sprint("test/bad", i), bad...)})
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.Index(ctx, docs[:len(bad)]); err == nil {
			t.Fatalf("Index of %v succeeded", bad)
		}
		if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
			t.Fatalf("a failed Index left collections %v, %v", infos, err)
		}
		good, err := cairngenkit.NewDocStore("pets", cairngenkit.Config{DB: db, Embedder: define(fmt.Sprint("test/good", i), []float32{1, 2, 3, 4})})
		if err != nil {
			t.Fatal(err)
		}
		if err := good.Index(ctx, docs[:1]); err != nil {
			t.Fatalf("Index after a failed one: %v", err)
		}
	}
	db := cairn.OpenMemory(nil)
	defer db.Close()
	ds, err := cairngenkit.NewDocStore("pets", cairngenkit.Config{DB: db, Embedder: holey{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Index(ctx, docs[:2]); !errors.Is(err, cairngenkit.ErrWrongNumberOfVectors) {
		t.Errorf("Index with a nil embedding: %v, want ErrWrongNumberOfVectors", err)
	}
	if err := ds.Index(ctx, []*ai.Document{ai.DocumentFromText("x", map[string]any{"score": math.NaN()})}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Index with NaN metadata: %v, want ErrInvalidOptions", err)
	}
}

// holey is an ai.Embedder not made by genkit, whose answers genkit does
// not check: nil for every document after the first.
type holey struct{ ai.Embedder }

func (holey) Embed(_ context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	res := &ai.EmbedResponse{Embeddings: make([]*ai.Embedding, len(req.Input))}
	res.Embeddings[0] = &ai.Embedding{Embedding: []float32{1, 0}}
	return res, nil
}

// TestRefusedMetadataMakesNothing: a first Index refused for its
// metadata (a list, which cairn does not store) makes no collection.
func TestRefusedMetadataMakesNothing(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	_, ds, _, _ := setup(t, db)
	nested := ai.DocumentFromText("Cats purr", map[string]any{"tags": []any{"cat"}})
	if err := ds.Index(ctx, []*ai.Document{nested}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("Index of a list in metadata: %v, want ErrInvalidOptions", err)
	}
	if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
		t.Errorf("a refused Index left collections %v, %v", infos, err)
	}
}

// A retrieved document, which carries its score under ScoreKey, indexed
// again is the document stored: not a second copy, nor its score.
func TestIndexRetrievedAgain(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	g, ds, ret, _ := setup(t, db)
	docs := []*ai.Document{ai.DocumentFromText("cats sleep", map[string]any{"lang": "en"}), ai.DocumentFromText("dogs run", nil)}
	if err := ds.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	res, err := genkit.Retrieve(ctx, g, ai.WithRetriever(ret), ai.WithTextDocs("cats"), ai.WithConfig(&cairngenkit.RetrieverOptions{K: 10}))
	if err != nil || len(res.Documents) != 2 {
		t.Fatalf("Retrieve: %v, %v", res, err)
	}
	if err := ds.Index(ctx, res.Documents); err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Documents[0].Metadata[cairngenkit.ScoreKey]; !ok {
		t.Error("Index took the score out of the caller's document")
	}
	c, err := db.Collection(ctx, "pets")
	if err != nil {
		t.Fatal(err)
	}
	items, err := c.Find(ctx, nil, 0)
	if err != nil || len(items) != 2 {
		t.Fatalf("after indexing the retrieved documents again: %d items, %v; want 2", len(items), err)
	}
	for _, it := range items {
		if _, ok := it.Metadata[cairngenkit.ScoreKey]; ok {
			t.Errorf("item %s stored with a score: %v", it.ID, it.Metadata)
		}
	}
}

// DefineRetriever reads the options it is given and leaves them as they
// were: it filled in the caller's ConfigSchema.
func TestDefineRetrieverLeavesOptions(t *testing.T) {
	db := cairn.OpenMemory(nil)
	defer db.Close()
	g := genkit.Init(context.Background())
	emb := genkit.DefineEmbedder(g, "test/none", nil, func(context.Context, *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		return &ai.EmbedResponse{}, nil
	})
	opts := &ai.RetrieverOptions{Label: "pets"}
	if _, _, err := cairngenkit.DefineRetriever(g, "pets", cairngenkit.Config{DB: db, Embedder: emb}, opts); err != nil {
		t.Fatal(err)
	}
	if opts.ConfigSchema != nil || opts.Label != "pets" {
		t.Errorf("DefineRetriever changed the caller's options: %+v", opts)
	}
}
