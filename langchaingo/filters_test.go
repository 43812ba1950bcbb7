package langchaingo_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"
)

// WithFilters takes the JSON filter language of cairn.ParseFilter, as a
// map, a string or bytes, like `cairn query -filter` and MCP.
func TestJSONFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	if _, err := s.AddDocuments(ctx, docs); err != nil {
		t.Fatal(err)
	}
	all := contents(docs)
	for _, tc := range []struct {
		name    string
		filters any
		want    []string
	}{
		{"map range", map[string]any{"year": map[string]any{"$gte": 2000}}, []string{all[3]}},
		{"map $and", map[string]any{"$and": []any{
			map[string]any{"animal": "cat"},
			map[string]any{"lang": map[string]any{"$ne": "fr"}},
		}}, []string{all[0]}},
		{"map $in", map[string]any{"animal": map[string]any{"$in": []string{"dog"}}}, []string{all[1]}},
		{"string $or", `{"$or": [{"lang": "fr"}, {"year": {"$lt": 2000}}]}`, []string{all[2]}},
		{"bytes", []byte(`{"animal": "dog"}`), []string{all[1]}},
		{"raw message", json.RawMessage(`{"animal": {"$nin": ["cat", "dog"]}}`), []string{all[3]}},
		{"nil", nil, all},
		{"empty map", map[string]any{}, all},
		{"{} string", ` {} `, all},
		{"empty string", "", all},
		{"nil *cairn.Filter", (*cairn.Filter)(nil), all},
	} {
		got, err := s.SimilaritySearch(ctx, "cats", len(docs), vectorstores.WithFilters(tc.filters))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		g, w := contents(got), slices.Clone(tc.want)
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Errorf("%s: found %q, want %q", tc.name, g, w)
		}
	}
}

// Integers beyond 2^53, which one float64 stands for, stay apart through
// the store, its filters and the documents it returns.
func TestExactIntegers(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	const big = int64(1) << 53
	in := []schema.Document{
		{PageContent: "cats sleep", Metadata: map[string]any{"n": big}},
		{PageContent: "cats eat", Metadata: map[string]any{"n": big + 1}},
	}
	if _, err := s.AddDocuments(ctx, in); err != nil {
		t.Fatal(err)
	}
	for _, f := range []any{
		map[string]any{"n": big + 1},
		map[string]any{"n": map[string]any{"$gt": big}},
		`{"n": 9007199254740993}`,
		cairn.Eq("n", big+1),
	} {
		got, err := s.SimilaritySearch(ctx, "cats", 10, vectorstores.WithFilters(f))
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if len(got) != 1 || got[0].PageContent != "cats eat" {
			t.Errorf("filter %v found %q, want only the 2^53+1 document", f, contents(got))
			continue
		}
		if n := got[0].Metadata["n"]; n != big+1 {
			t.Errorf("filter %v: n read back as %v (%T), want 2^53+1", f, n, n)
		}
	}
	got, err := s.SimilaritySearch(ctx, "cats", 10, vectorstores.WithFilters(map[string]any{"n": big}))
	if err != nil || len(got) != 1 || got[0].PageContent != "cats sleep" || got[0].Metadata["n"] != float64(big) {
		t.Errorf("filter n = 2^53: %+v, %v", got, err)
	}
}

// numDocuments 0 returns no documents, as langchaingo's pgvector store
// does, rather than an error.
func TestZeroDocuments(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.AddDocuments(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	got, err := s.SimilaritySearch(context.Background(), "cats", 0)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("numDocuments 0: %v, %v; want an empty list", got, err)
	}
}

// TestFloat32Filters: a float32 in a filter map finds the document whose
// metadata holds the same float32, as with every other number type.
func TestFloat32Filters(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	if _, err := s.AddDocuments(ctx, []schema.Document{{PageContent: "cats", Metadata: map[string]any{"w": float32(2.7)}}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []any{
		map[string]any{"w": float32(2.7)},
		map[string]any{"w": map[string]any{"$lte": float32(2.7)}},
	} {
		got, err := s.SimilaritySearch(ctx, "cats", 1, vectorstores.WithFilters(f))
		if err != nil || len(got) != 1 {
			t.Errorf("filter %v found %d documents, %v; want 1", f, len(got), err)
		}
	}
}
