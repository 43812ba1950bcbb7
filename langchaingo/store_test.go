package langchaingo_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/langchaingo"
	"github.com/cairndb/cairn/vector"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"
)

// bagOfWords embeds a text as its words hashed into 16 buckets, so that
// texts sharing words are similar; a text without words gets a basis
// vector.
func bagOfWords(text string) []float32 {
	v := make([]float32, 16)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,?!")))
		v[h.Sum32()%16]++
	}
	if !slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
		v[0] = 1
	}
	return v
}

// newEmbedder returns langchaingo's own embedder over a client that
// embeds with bagOfWords and counts its calls.
func newEmbedder(t testing.TB, calls *atomic.Int64) embeddings.Embedder {
	e, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		if calls != nil {
			calls.Add(1)
		}
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = bagOfWords(s)
		}
		return out, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var docs = []schema.Document{
	{PageContent: "Cats sleep most of the day", Metadata: map[string]any{"animal": "cat", "lang": "en"}},
	{PageContent: "Dogs need a walk every day", Metadata: map[string]any{"animal": "dog", "lang": "en"}},
	{PageContent: "Les chats dorment beaucoup", Metadata: map[string]any{"animal": "cat", "lang": "fr"}},
	{PageContent: "Goldfish remember more than three seconds", Metadata: map[string]any{"animal": "fish", "lang": "en", "year": 2020}},
}

func newStore(t *testing.T, opts ...langchaingo.Option) (*langchaingo.Store, *cairn.DB) {
	t.Helper()
	db := cairn.OpenMemory(nil)
	t.Cleanup(func() { db.Close() })
	s, err := langchaingo.New(db, newEmbedder(t, nil), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

func contents(ds []schema.Document) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.PageContent
	}
	return out
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t)
	ids, err := s.AddDocuments(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(docs) || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(docs) {
		t.Fatalf("ids %q: want %d distinct", ids, len(docs))
	}
	c, err := db.Collection(ctx, langchaingo.DefaultCollection)
	if err != nil || mustCount(t, c) != len(docs) || c.Config().Dim != 16 {
		t.Fatalf("collection: %v, %d items, dim %d", err, mustCount(t, c), c.Config().Dim)
	}

	got, err := s.SimilaritySearch(ctx, "how much do cats sleep during the day", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].PageContent != docs[0].PageContent || got[0].Metadata["animal"] != "cat" {
		t.Fatalf("search: %+v", got)
	}
	if !(got[0].Score > got[1].Score && got[0].Score <= 1 && got[1].Score > 0) {
		t.Errorf("scores %v, %v: want descending in (0, 1]", got[0].Score, got[1].Score)
	}

	// A score threshold between the two drops the second.
	mid := (got[0].Score + got[1].Score) / 2
	got2, err := s.SimilaritySearch(ctx, "how much do cats sleep during the day", 2, vectorstores.WithScoreThreshold(mid))
	if err != nil || len(got2) != 1 || got2[0].PageContent != docs[0].PageContent {
		t.Fatalf("with threshold %v: %+v, %v", mid, got2, err)
	}

	// Filters: a map of equalities, all required, and a cairn filter.
	got, err = s.SimilaritySearch(ctx, "cats", 4, vectorstores.WithFilters(map[string]any{"animal": "cat", "lang": "fr"}))
	if err != nil || !slices.Equal(contents(got), []string{docs[2].PageContent}) {
		t.Fatalf("map filter: %q, %v", contents(got), err)
	}
	got, err = s.SimilaritySearch(ctx, "cats", 4, vectorstores.WithFilters(cairn.Or(cairn.Eq("animal", "dog"), cairn.Gte("year", 2000))))
	if err != nil || len(got) != 2 || !slices.Contains(contents(got), docs[1].PageContent) || !slices.Contains(contents(got), docs[3].PageContent) {
		t.Fatalf("cairn filter: %q, %v", contents(got), err)
	}

	// Delete is all or nothing.
	if err := s.Delete(ctx, []string{ids[0], "no-such-id"}); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("delete with an unknown id: %v", err)
	}
	if mustCount(t, c) != len(docs) {
		t.Fatalf("a failed delete removed items: %d left", mustCount(t, c))
	}
	if err := s.Delete(ctx, ids[:1]); err != nil {
		t.Fatal(err)
	}
	got, err = s.SimilaritySearch(ctx, "how much do cats sleep during the day", 1, vectorstores.WithFilters(map[string]any{"lang": "en"}))
	if err != nil || got[0].PageContent == docs[0].PageContent {
		t.Fatalf("after delete: %q, %v", contents(got), err)
	}
}

func TestStoreOptions(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, langchaingo.WithCollection("main"), langchaingo.WithConfig(cairn.CollectionConfig{Index: cairn.Flat}))
	if _, err := s.AddDocuments(ctx, docs[:2]); err != nil {
		t.Fatal(err)
	}

	// WithNameSpace names another collection, for adding and searching.
	if _, err := s.AddDocuments(ctx, docs[2:], vectorstores.WithNameSpace("other")); err != nil {
		t.Fatal(err)
	}
	got, err := s.SimilaritySearch(ctx, "goldfish", 4, vectorstores.WithNameSpace("other"))
	if err != nil || len(got) != 2 || got[0].PageContent != docs[3].PageContent {
		t.Fatalf("namespace other: %q, %v", contents(got), err)
	}
	got, err = s.SimilaritySearch(ctx, "goldfish", 4)
	if err != nil || len(got) != 2 || slices.Contains(contents(got), docs[3].PageContent) {
		t.Fatalf("namespace main: %q, %v", contents(got), err)
	}
	got, err = s.SimilaritySearch(ctx, "goldfish", 4, vectorstores.WithNameSpace("never-written"))
	if err != nil || len(got) != 0 {
		t.Fatalf("a namespace never written: %q, %v", contents(got), err)
	}
	if c, _ := db.Collection(ctx, "main"); c.Config().Index != cairn.Flat {
		t.Errorf("WithConfig not applied: %+v", c.Config())
	}

	// WithEmbedder replaces the store's embedder for one call.
	var calls atomic.Int64
	other := newEmbedder(t, &calls)
	if _, err := s.SimilaritySearch(ctx, "dogs", 1, vectorstores.WithEmbedder(other)); err != nil || calls.Load() != 1 {
		t.Fatalf("WithEmbedder on search: %d calls, %v", calls.Load(), err)
	}
	if _, err := s.AddDocuments(ctx, docs[:1], vectorstores.WithEmbedder(other), vectorstores.WithNameSpace("third")); err != nil || calls.Load() != 2 {
		t.Fatalf("WithEmbedder on add: %d calls, %v", calls.Load(), err)
	}

	// WithDeduplicater skips documents, which get no id.
	ids, err := s.AddDocuments(ctx, docs, vectorstores.WithNameSpace("dedup"), vectorstores.WithDeduplicater(func(_ context.Context, d schema.Document) bool {
		return d.Metadata["lang"] == "fr"
	}))
	if err != nil || len(ids) != 3 {
		t.Fatalf("dedup: %q, %v", ids, err)
	}
	if c, _ := db.Collection(ctx, "dedup"); mustCount(t, c) != 3 {
		t.Fatalf("dedup stored %d", mustCount(t, c))
	}
}

func TestStoreErrors(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t)
	if _, err := s.AddDocuments(ctx, docs); err != nil {
		t.Fatal(err)
	}
	noEmb, err := langchaingo.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"threshold below 0", search(s, vectorstores.WithScoreThreshold(-0.1)), langchaingo.ErrInvalidScoreThreshold},
		{"threshold above 1", search(s, vectorstores.WithScoreThreshold(1.5)), vector.ErrInvalidOptions},
		{"threshold NaN", search(s, vectorstores.WithScoreThreshold(float32(math.NaN()))), langchaingo.ErrInvalidScoreThreshold},
		{"filters of a wrong type", search(s, vectorstores.WithFilters([]string{"a"})), langchaingo.ErrInvalidFilters},
		{"filter value of a wrong type", search(s, vectorstores.WithFilters(map[string]any{"a": []int{1}})), vector.ErrInvalidOptions},
		{"k < 0", func() error { _, err := s.SimilaritySearch(ctx, "x", -1); return err }(), vector.ErrInvalidK},
		{"bad JSON filter", search(s, vectorstores.WithFilters(`{"year": {"$near": 1}}`)), vector.ErrInvalidOptions},
		{"k = 0 with a bad filter", func() error {
			_, err := s.SimilaritySearch(ctx, "x", 0, vectorstores.WithFilters(`{"year":`))
			return err
		}(), vector.ErrInvalidOptions},
		{"no embedder", search(noEmb), langchaingo.ErrNoEmbedder},
		{"add with filters", func() error {
			_, err := s.AddDocuments(ctx, docs, vectorstores.WithFilters(map[string]any{"a": 1}))
			return err
		}(), langchaingo.ErrUnsupportedOptions},
		{"nested metadata", func() error {
			_, err := s.AddDocuments(ctx, []schema.Document{docs[0], {PageContent: "x", Metadata: map[string]any{"tags": []string{"a"}}}})
			return err
		}(), vector.ErrInvalidOptions},
		{"nil DB", func() error { _, err := langchaingo.New(nil, nil); return err }(), vector.ErrInvalidOptions},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want an error wrapping %v", tt.name, tt.err, tt.want)
		}
	}
	if c, _ := db.Collection(ctx, langchaingo.DefaultCollection); mustCount(t, c) != len(docs) {
		t.Errorf("the failed calls changed the collection: %d items", mustCount(t, c))
	}
}

func search(s *langchaingo.Store, opts ...vectorstores.Option) error {
	_, err := s.SimilaritySearch(context.Background(), "cats", 2, opts...)
	return err
}

// recordingLLM is langchaingo's fake LLM, remembering the prompts it was
// given.
type recordingLLM struct {
	*fake.LLM
	prompts []string
}

func (m *recordingLLM) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if tp, ok := p.(llms.TextContent); ok {
				m.prompts = append(m.prompts, tp.Text)
			}
		}
	}
	return m.LLM.GenerateContent(ctx, msgs, opts...)
}

// TestRetrievalQA runs the store behind one of langchaingo's retriever
// chains: the documents it finds reach the LLM's prompt and come back as
// the chain's sources. The store is a file, reopened before the chain
// runs.
func TestRetrievalQA(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docs.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := langchaingo.New(db, newEmbedder(t, nil))
	if _, err := s.AddDocuments(ctx, docs); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = cairn.Open(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ = langchaingo.New(db, newEmbedder(t, nil))

	llm := &recordingLLM{LLM: fake.NewFakeLLM([]string{"They sleep most of the day."})}
	qa := chains.NewRetrievalQAFromLLM(llm, vectorstores.ToRetriever(s, 1, vectorstores.WithFilters(map[string]any{"lang": "en"})))
	qa.ReturnSourceDocuments = true
	out, err := chains.Call(ctx, qa, map[string]any{"query": "how long do cats sleep"})
	if err != nil {
		t.Fatal(err)
	}
	if out["text"] != "They sleep most of the day." {
		t.Errorf("answer %q", out["text"])
	}
	src, _ := out["source_documents"].([]schema.Document)
	if len(src) != 1 || src[0].PageContent != docs[0].PageContent {
		t.Fatalf("sources %+v", out["source_documents"])
	}
	if len(llm.prompts) != 1 || !strings.Contains(llm.prompts[0], docs[0].PageContent) || !strings.Contains(llm.prompts[0], "how long do cats sleep") {
		t.Fatalf("prompt %q lacks the document or the question", llm.prompts)
	}
}

// mustCount returns c.Count, failing the test on an error.
func mustCount(t testing.TB, c *cairn.Collection) int {
	t.Helper()
	n, err := c.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStoreTenants: with WithTenants, WithNameSpace names a tenant of the
// store's collection, apart from the others and from the collection's
// own documents.
func TestStoreTenants(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, langchaingo.WithCollection("main"), langchaingo.WithTenants())
	if _, err := s.AddDocuments(ctx, docs[:2]); err != nil {
		t.Fatal(err)
	}
	ids, err := s.AddDocuments(ctx, docs[2:], vectorstores.WithNameSpace("alice"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SimilaritySearch(ctx, "goldfish", 4, vectorstores.WithNameSpace("alice"))
	if err != nil || len(got) != 2 || got[0].PageContent != docs[3].PageContent {
		t.Fatalf("tenant alice: %q, %v", contents(got), err)
	}
	got, err = s.SimilaritySearch(ctx, "goldfish", 4)
	if err != nil || len(got) != 2 || slices.Contains(contents(got), docs[3].PageContent) {
		t.Fatalf("the collection's own: %q, %v", contents(got), err)
	}
	got, err = s.SimilaritySearch(ctx, "goldfish", 4, vectorstores.WithNameSpace("bob"))
	if err != nil || len(got) != 0 {
		t.Fatalf("a tenant never written: %q, %v", contents(got), err)
	}
	if _, err := db.Collection(ctx, "alice"); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("a namespace made a collection: %v", err)
	}
	if err := s.Delete(ctx, ids[:1], vectorstores.WithNameSpace("bob")); !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("delete of alice's document in bob: %v", err)
	}
	if err := s.Delete(ctx, ids[:1], vectorstores.WithNameSpace("alice")); err != nil {
		t.Fatal(err)
	}
	c, _ := db.Collection(ctx, "main")
	alice, err := c.Tenant(ctx, "alice")
	if n, _ := alice.Count(ctx); err != nil || n != 1 {
		t.Fatalf("alice holds %d documents (%v)", n, err)
	}
}

// TestStoresCreateTogether has two Stores on one DB add the first
// documents of a new collection at once (in tenant mode, to two tenants
// of it), round after round: both writes succeed (one of them used to
// fail with ErrCollectionExists, the other Store having created the
// collection meanwhile).
func TestStoresCreateTogether(t *testing.T) {
	ctx := context.Background()
	for _, opts := range [][]langchaingo.Option{nil, {langchaingo.WithTenants()}} {
		for round := range 30 {
			db := cairn.OpenMemory(nil)
			errs := make([]error, 2)
			var g sync.WaitGroup
			for i := range errs {
				s, err := langchaingo.New(db, newEmbedder(t, nil), opts...)
				if err != nil {
					t.Fatal(err)
				}
				var ns []vectorstores.Option
				if len(opts) > 0 {
					ns = append(ns, vectorstores.WithNameSpace(fmt.Sprint("tenant", i)))
				}
				g.Go(func() {
					_, errs[i] = s.AddDocuments(ctx, []schema.Document{{PageContent: fmt.Sprint("doc ", i)}}, ns...)
				})
			}
			g.Wait()
			db.Close()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("round %d, options %d: %v", round, len(opts), err)
			}
		}
	}
}

// TestFailedFirstAddMakesNothing: a first AddDocuments whose vectors
// cairn refuses (NaN, uneven lengths) fails and makes no collection nor
// tenant, so that a later call, with an embedder of another dimension,
// makes it for its own vectors (it used to fail for good, the collection
// made at the dimension of the refused vectors).
func TestFailedFirstAddMakesNothing(t *testing.T) {
	ctx := context.Background()
	embedder := func(vecs ...[]float32) embeddings.Embedder {
		e, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
			return vecs[:len(texts)], nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	nan := float32(math.NaN())
	for _, tenants := range []bool{false, true} {
		for _, bad := range [][][]float32{{{nan, 1}}, {{1, 0}, {1, 0, 0}}, {{1, 0}, nil}} {
			db := cairn.OpenMemory(nil)
			defer db.Close()
			var opts []langchaingo.Option
			if tenants {
				opts = append(opts, langchaingo.WithTenants())
			}
			s, err := langchaingo.New(db, embedder(bad...), opts...)
			if err != nil {
				t.Fatal(err)
			}
			two := []schema.Document{{PageContent: "a"}, {PageContent: "b"}}[:len(bad)]
			if _, err := s.AddDocuments(ctx, two, vectorstores.WithNameSpace("ns")); err == nil {
				t.Fatalf("tenants %v: AddDocuments of %v succeeded", tenants, bad)
			}
			if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
				t.Fatalf("tenants %v: a failed AddDocuments left collections %v, %v", tenants, infos, err)
			}
			good, err := langchaingo.New(db, embedder([]float32{1, 2, 3, 4}), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := good.AddDocuments(ctx, two[:1], vectorstores.WithNameSpace("ns")); err != nil {
				t.Fatalf("tenants %v: AddDocuments after a failed one: %v", tenants, err)
			}
		}
	}
}

// TestFailedAddMakesNoTenant: an add refused for its metadata or its
// vectors makes neither the collection nor, with WithTenants, the tenant
// of its namespace.
func TestFailedAddMakesNoTenant(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	vec := []float32{1, 0}
	emb, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = vec
		}
		return out, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	nested := []schema.Document{{PageContent: "a", Metadata: map[string]any{"tags": []any{"x"}}}}
	plain, _ := langchaingo.New(db, emb)
	if _, err := plain.AddDocuments(ctx, nested, vectorstores.WithNameSpace("new")); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("add of nested metadata: %v, want ErrInvalidOptions", err)
	}
	if infos, err := db.Collections(ctx); err != nil || len(infos) != 0 {
		t.Fatalf("a refused add left collections %v, %v", infos, err)
	}
	s, _ := langchaingo.New(db, emb, langchaingo.WithTenants())
	if _, err := s.AddDocuments(ctx, []schema.Document{{PageContent: "a"}}, vectorstores.WithNameSpace("ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddDocuments(ctx, nested, vectorstores.WithNameSpace("meta")); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("add of nested metadata: %v, want ErrInvalidOptions", err)
	}
	vec = []float32{float32(math.NaN()), 0}
	if _, err := s.AddDocuments(ctx, []schema.Document{{PageContent: "a"}}, vectorstores.WithNameSpace("nan")); !errors.Is(err, vector.ErrNonFinite) {
		t.Fatalf("add of a NaN vector: %v, want ErrNonFinite", err)
	}
	c, err := db.Collection(ctx, langchaingo.DefaultCollection)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := c.Tenants(ctx); err != nil || !slices.Equal(names, []string{"ok"}) {
		t.Errorf("tenants after refused adds: %q, %v; want only ok", names, err)
	}
}

// TestAddWhileCollectionDeleted: with WithTenants, an add into a new
// namespace while the collection is being deleted either stores its
// documents or fails with ErrNotFound; it does not panic on the tenant
// it could not make.
func TestAddWhileCollectionDeleted(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	s, err := langchaingo.New(db, newEmbedder(t, nil), langchaingo.WithTenants())
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				db.DeleteCollection(ctx, langchaingo.DefaultCollection)
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	failed := 0
	for i := 0; i < 5000 && failed < 20; i++ {
		_, err := s.AddDocuments(ctx, docs[:1], vectorstores.WithNameSpace(fmt.Sprint("ns", i)))
		if err != nil {
			if !errors.Is(err, vector.ErrNotFound) {
				t.Fatalf("add %d: %v, want nil or ErrNotFound", i, err)
			}
			failed++
		}
	}
}
