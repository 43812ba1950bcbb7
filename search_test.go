package cairn_test

// This file tests the query modes: keyword and hybrid search, kept in
// step with writes and reopening; fusion, MMR, reranking and their bad
// input.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/keyword"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"

	_ "modernc.org/sqlite" // the reference of TestKeywordScoresAreFTS5
)

// wordsFixture is testdata/luceneutil-minilm-384: real all-MiniLM-L6-v2
// vectors of one- and two-word strings, with the strings.
type wordsFixture struct {
	base, queries []vector.Vector
	baseText      []string
	queryText     []string
}

func loadWords(t *testing.T) *wordsFixture {
	t.Helper()
	dir := filepath.Join("testdata", "luceneutil-minilm-384")
	base, err := recall.LoadVectors(filepath.Join(dir, "base.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := recall.LoadVectors(filepath.Join(dir, "query.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "terms.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) != len(base)+len(qs) {
		t.Fatalf("%d lines of text for %d + %d vectors", len(lines), len(base), len(qs))
	}
	return &wordsFixture{base: base, queries: qs, baseText: lines[:len(base)], queryText: lines[len(base):]}
}

// TestHybridFindsRareWord: an item whose text holds a word no other item
// holds (a name, a code), which vector search does not rank in its top k
// for a query about it, is in the top k of the hybrid query that carries
// the word. The fixture's query vectors are real embeddings of strings
// holding the word ("index.php" embeds far from "php": vector rank ~1,550
// of 1,580).
func TestHybridFindsRareWord(t *testing.T) {
	fx := loadWords(t)
	ctx := context.Background()
	const k = 10
	// holders[w] are the base items whose text has the word w.
	holders := map[string][]int{}
	for i, s := range fx.baseText {
		for _, w := range keyword.Tokens(s) {
			if h := holders[w]; len(h) == 0 || h[len(h)-1] != i {
				holders[w] = append(h, i)
			}
		}
	}
	forEachDB(t, func(t *testing.T, op opener) {
		if cairn.RaceEnabled && op.kind == cairn.HNSW {
			t.Skip("HNSW builds are slow under -race; the plain run covers them")
		}
		db := op.open(t, nil)
		c := mustCollection(t, db, "words", cairn.CollectionConfig{Dim: 384, Index: op.kind})
		items := make([]cairn.Item, len(fx.base))
		for i, v := range fx.base {
			items[i] = cairn.Item{ID: fmt.Sprintf("b%04d", i), Embedding: v, Text: fx.baseText[i]}
		}
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
		cases := 0
		for j, q := range fx.queries {
			text := fx.queryText[j]
			var rare []string
			for _, w := range keyword.Tokens(text) {
				if len(holders[w]) == 1 {
					rare = append(rare, w)
				}
			}
			if len(rare) == 0 {
				continue
			}
			vec, err := c.Query(ctx, q, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range rare {
				h := holders[w]
				id := items[h[0]].ID
				if slices.Contains(ids(vec), id) {
					continue // vector search finds it anyway
				}
				cases++
				hyb, err := c.Query(ctx, q, k, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: w})
				if err != nil {
					t.Fatal(err)
				}
				at := slices.Index(ids(hyb), id)
				if at < 0 {
					t.Errorf("query %q, keyword %q: hybrid top %d %v lacks %s (%q)", text, w, k, ids(hyb), id, fx.baseText[h[0]])
					continue
				}
				if r := hyb[at]; r.KeywordRank != 1 || r.Similarity == 0 {
					t.Errorf("query %q: %s found with keyword rank %d, similarity %v", text, id, r.KeywordRank, r.Similarity)
				}
			}
		}
		// 13 such cases with exact search; HNSW may differ a little.
		if cases < 10 {
			t.Errorf("only %d queries with a rare word that vector search misses; the fixture should give 13", cases)
		}
		t.Logf("%d queries with a rare word vector search misses in its top %d, all found by hybrid", cases, k)
	})
}

// notes is a small corpus for the mode tests: texts with names and
// codes, embeddings drawn at random, a metadata field to filter on.
func notes(rng *rand.Rand, dim int) []cairn.Item {
	texts := []string{
		"Ada Lovelace wrote the first program",
		"error E1234: connection refused by postgres",
		"the deploy failed with error E9999",
		"Zoë prefers crème brûlée",
		"meeting with Ada about the deploy",
		`quoted "NEAR" and * stars - minus`,
		"nothing to see here",
		"postgres replica lag alert",
		"",
	}
	items := make([]cairn.Item, len(texts))
	for i, s := range texts {
		items[i] = cairn.Item{ID: fmt.Sprintf("n%d", i), Text: s, Embedding: randVec(rng, dim),
			Metadata: map[string]any{"even": i%2 == 0}}
	}
	return items
}

func TestKeywordMode(t *testing.T) {
	ctx := context.Background()
	forEachDB(t, func(t *testing.T, op opener) {
		rng := rand.New(rand.NewPCG(1, 1))
		db := op.open(t, nil)
		c := mustCollection(t, db, "notes", cairn.CollectionConfig{Dim: 8, Index: op.kind})
		if err := c.Add(ctx, notes(rng, 8)...); err != nil {
			t.Fatal(err)
		}
		kw := &cairn.QueryOptions{Mode: cairn.KeywordMode}
		got, err := c.QueryText(ctx, "ADA", 10, kw) // no embedder needed
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"n0", "n4"}; !slices.Equal(ids(got), want) && !slices.Equal(ids(got), []string{"n4", "n0"}) {
			t.Fatalf("ada: %v, want %v", ids(got), want)
		}
		for i, r := range got {
			if r.KeywordRank != i+1 || r.VectorRank != 0 || r.Score != r.KeywordScore || r.Score <= 0 || r.Similarity != 0 {
				t.Errorf("result %d: %+v", i, r)
			}
		}
		// Diacritics and case fold; operators are words.
		for q, want := range map[string]string{"creme BRULEE": "n3", "zoe": "n3", "e1234": "n1", `"near"*`: "n5", "-minus": "n5"} {
			got, err := c.QueryText(ctx, q, 1, kw)
			if err != nil || len(got) != 1 || got[0].ID != want {
				t.Errorf("%q: %v, %v; want %s", q, ids(got), err, want)
			}
		}
		// Through Query, with Keywords and no embedding.
		got, err = c.Query(ctx, nil, 5, &cairn.QueryOptions{Mode: cairn.KeywordMode, Keywords: "postgres"})
		if err != nil || len(got) != 2 {
			t.Fatalf("Query keyword postgres: %v, %v", ids(got), err)
		}
		// The filter applies inside the keyword list.
		got, err = c.QueryText(ctx, "error deploy postgres", 10, &cairn.QueryOptions{Mode: cairn.KeywordMode, Filter: cairn.Eq("even", true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.Metadata["even"] != true {
				t.Errorf("filtered keyword query returned %s", r.ID)
			}
		}
		if len(got) != 2 { // n2 and n4
			t.Errorf("filtered keyword query: %v, want n2 and n4", ids(got))
		}
		// A word no item holds.
		if got, err := c.QueryText(ctx, "absent", 3, kw); err != nil || len(got) != 0 {
			t.Errorf("absent word: %v, %v", got, err)
		}
	})
}

// TestKeywordFollowsWrites: the keyword list sees every Upsert and Delete
// at once, and a reopened file matches what the store held.
func TestKeywordFollowsWrites(t *testing.T) {
	ctx := context.Background()
	forEachDB(t, func(t *testing.T, op opener) {
		rng := rand.New(rand.NewPCG(2, 2))
		db := op.open(t, nil)
		c := mustCollection(t, db, "notes", cairn.CollectionConfig{Dim: 8, Index: op.kind})
		if err := c.Add(ctx, notes(rng, 8)...); err != nil {
			t.Fatal(err)
		}
		kw := &cairn.QueryOptions{Mode: cairn.KeywordMode}
		find := func(q string) []string {
			t.Helper()
			got, err := c.QueryText(ctx, q, 10, kw)
			if err != nil {
				t.Fatal(err)
			}
			s := ids(got)
			slices.Sort(s)
			return s
		}
		if err := c.Upsert(ctx, cairn.Item{ID: "n1", Text: "all good now", Embedding: randVec(rng, 8)}); err != nil {
			t.Fatal(err)
		}
		if got := find("E1234"); len(got) != 0 {
			t.Errorf("E1234 after its text was replaced: %v", got)
		}
		if got := find("good"); !slices.Equal(got, []string{"n1"}) {
			t.Errorf("good: %v", got)
		}
		if err := c.Delete(ctx, "n0"); err != nil {
			t.Fatal(err)
		}
		if got := find("ada"); !slices.Equal(got, []string{"n4"}) {
			t.Errorf("ada after deleting n0: %v", got)
		}
		if _, err := c.DeleteWhere(ctx, cairn.Eq("even", true)); err != nil {
			t.Fatal(err)
		}
		if got := find("ada deploy postgres"); !slices.Equal(got, []string{"n7"}) {
			t.Errorf("after DeleteWhere: %v", got)
		}
		scores := func(c *cairn.Collection) []cairn.Result {
			got, err := c.QueryText(ctx, "postgres alert good now", 10, kw)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		before := scores(c)
		// Rebuilt from the rows at open, identical: same ids, same scores.
		if op.name == "sqlite" {
			path := filepath.Join(t.TempDir(), "reopen.db")
			db2, err := cairn.Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			c2 := mustCollection(t, db2, "notes", cairn.CollectionConfig{Dim: 8, Index: op.kind})
			all, err := c.Find(ctx, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := c2.Add(ctx, all...); err != nil {
				t.Fatal(err)
			}
			if err := db2.Close(); err != nil {
				t.Fatal(err)
			}
			db3, err := cairn.Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db3.Close()
			c3, err := db3.Collection(ctx, "notes")
			if err != nil {
				t.Fatal(err)
			}
			after := scores(c3)
			if len(after) != len(before) {
				t.Fatalf("after reopen: %v, before %v", ids(after), ids(before))
			}
			for i := range before {
				if after[i].ID != before[i].ID || after[i].KeywordScore != before[i].KeywordScore {
					t.Errorf("after reopen, result %d = %s %v, before %s %v", i, after[i].ID, after[i].KeywordScore, before[i].ID, before[i].KeywordScore)
				}
			}
		}
	})
}

func TestHybridMode(t *testing.T) {
	ctx := context.Background()
	forEachDB(t, func(t *testing.T, op opener) {
		rng := rand.New(rand.NewPCG(3, 3))
		db := op.open(t, nil)
		c := mustCollection(t, db, "notes", cairn.CollectionConfig{Dim: 8, Index: op.kind})
		items := notes(rng, 8)
		if err := c.Add(ctx, items...); err != nil {
			t.Fatal(err)
		}
		q := items[6].Embedding // "nothing to see here" is the nearest
		o := &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "E9999"}
		got, err := c.Query(ctx, q, 3, o)
		if err != nil {
			t.Fatal(err)
		}
		vec, _ := c.Query(ctx, q, len(items), nil)
		// n6 is first in the vector list; n2 is first (alone) in the
		// keyword list and also in the vector list's window (all 9 items),
		// so it leads.
		if len(got) != 3 || got[0].ID != "n2" || got[1].ID != "n6" || got[0].KeywordRank != 1 || got[1].KeywordRank != 0 {
			t.Fatalf("hybrid: %+v", got)
		}
		for _, r := range got {
			vr := slices.Index(ids(vec), r.ID) + 1
			if r.VectorRank != vr {
				t.Errorf("%s: vector rank %d, the vector query ranks it %d", r.ID, r.VectorRank, vr)
			}
			want := 1 / (60 + float64(vr))
			if r.KeywordRank > 0 {
				want += 1 / (60 + float64(r.KeywordRank))
			}
			if math.Abs(r.Score-want) > 1e-12 {
				t.Errorf("%s: score %v, want %v", r.ID, r.Score, want)
			}
			if d := r.Similarity - vec[vr-1].Similarity; math.Abs(d) > 1e-6 {
				t.Errorf("%s: similarity %v, the vector query says %v", r.ID, r.Similarity, vec[vr-1].Similarity)
			}
		}
		// Weights: the keyword list three times the vector list.
		got, _ = c.Query(ctx, q, 2, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "E9999",
			Fusion: &cairn.Fusion{KeywordWeight: 3}})
		if got[0].ID != "n2" {
			t.Errorf("keyword-weighted hybrid: %v", ids(got))
		}
		// An item only the keyword list finds, beyond the vector window,
		// still gets its similarity. Window 1 leaves one vector candidate.
		got, err = c.Query(ctx, q, 9, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "postgres", Fusion: &cairn.Fusion{Window: 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.VectorRank == 0 {
				vr := slices.Index(ids(vec), r.ID)
				if math.Abs(r.Similarity-vec[vr].Similarity) > 1e-6 {
					t.Errorf("%s, keyword only: similarity %v, want %v", r.ID, r.Similarity, vec[vr].Similarity)
				}
			}
		}
		// The filter applies in both lists: k results when k items match.
		got, err = c.Query(ctx, q, 4, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "ada deploy", Filter: cairn.Eq("even", false)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Errorf("filtered hybrid: %d results, want 4", len(got))
		}
		for _, r := range got {
			if r.Metadata["even"] != false {
				t.Errorf("filtered hybrid returned %s", r.ID)
			}
		}
		// MinSimilarity drops results of either list.
		floor := vec[2].Similarity
		got, _ = c.Query(ctx, q, 9, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "ada postgres", MinSimilarity: &floor})
		for _, r := range got {
			if r.Similarity < floor {
				t.Errorf("MinSimilarity %v let through %s at %v", floor, r.ID, r.Similarity)
			}
		}
	})
}

func TestHybridQueryText(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var embedded []string
	// Embeds a text as its length and its number of 'e's: enough to rank.
	emb := cairn.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		mu.Lock()
		embedded = append(embedded, texts...)
		mu.Unlock()
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s)) + 1, float32(strings.Count(s, "e"))}
		}
		return out, nil
	})
	db := cairn.OpenMemory(&cairn.Options{Embedder: emb})
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	if err := c.Add(ctx, cairn.Item{ID: "a", Text: "kubernetes pod evicted"}, cairn.Item{ID: "b", Text: "pod"}); err != nil {
		t.Fatal(err)
	}
	embedded = nil
	got, err := c.QueryText(ctx, "evicted", 2, &cairn.QueryOptions{Mode: cairn.HybridMode})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(embedded, []string{"evicted"}) {
		t.Errorf("embedded %q, want the query", embedded)
	}
	if got[0].ID != "a" || got[0].KeywordRank != 1 || got[0].VectorRank == 0 {
		t.Errorf("hybrid QueryText: %+v", got)
	}
	// Keywords other than the text embedded.
	got, err = c.QueryText(ctx, "evicted", 2, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "pod"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.KeywordRank == 0 {
			t.Errorf("%s: not in the keyword list of \"pod\"", r.ID)
		}
	}
}

func TestMMRAndEmbeddings(t *testing.T) {
	ctx := context.Background()
	forEachDB(t, func(t *testing.T, op opener) {
		db := op.open(t, nil)
		c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Index: op.kind})
		// a1, a2, a3 nearly the same direction; b off to the side.
		err := c.Add(ctx,
			cairn.Item{ID: "a1", Embedding: []float32{1, 0.01}},
			cairn.Item{ID: "a2", Embedding: []float32{1, 0.02}},
			cairn.Item{ID: "a3", Embedding: []float32{1, 0.03}},
			cairn.Item{ID: "b", Embedding: []float32{0.6, 0.8}},
		)
		if err != nil {
			t.Fatal(err)
		}
		q := []float32{1, 0}
		plain, _ := c.Query(ctx, q, 2, nil)
		if !slices.Equal(ids(plain), []string{"a1", "a2"}) {
			t.Fatalf("plain: %v", ids(plain))
		}
		// After a1, a2 scores 0.3·1.0 − 0.7·1.0 = −0.4 and b
		// 0.3·0.6 − 0.7·0.61 ≈ −0.25.
		got, err := c.Query(ctx, q, 2, &cairn.QueryOptions{MMR: &cairn.MMR{Lambda: 0.3}, WithEmbeddings: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), []string{"a1", "b"}) {
			t.Errorf("MMR λ=0.3: %v, want [a1 b]", ids(got))
		}
		if len(got[1].Embedding) != 2 || math.Abs(float64(got[1].Embedding[0])-0.6) > 1e-6 {
			t.Errorf("embedding of b: %v", got[1].Embedding)
		}
		if got, _ := c.Query(ctx, q, 2, &cairn.QueryOptions{MMR: &cairn.MMR{Lambda: 1}}); !slices.Equal(ids(got), ids(plain)) {
			t.Errorf("MMR λ=1: %v, want the plain order %v", ids(got), ids(plain))
		}
		if plain[0].Embedding != nil {
			t.Error("embedding returned without WithEmbeddings")
		}
	})
}

func TestRerank(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	for i := range 30 {
		if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint("i", i), Text: fmt.Sprint("item ", i), Embedding: []float32{1, float32(i) / 10}}); err != nil {
			t.Fatal(err)
		}
	}
	q := []float32{1, 0}
	var gotQuery string
	var given int
	reverse := func(ctx context.Context, query string, cands []cairn.Result) ([]string, error) {
		gotQuery, given = query, len(cands)
		out := make([]string, len(cands))
		for i, r := range cands {
			out[len(cands)-1-i] = r.ID
		}
		return out, nil
	}
	got, err := c.Query(ctx, q, 3, &cairn.QueryOptions{Rerank: &cairn.Rerank{Func: reverse, Pool: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), []string{"i4", "i3", "i2"}) || given != 5 || gotQuery != "" {
		t.Errorf("reversed: %v (given %d, query %q)", ids(got), given, gotQuery)
	}
	// The default pool is max(4k, 20), and hybrid tells the reranker the words.
	if _, err := c.Query(ctx, q, 3, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "item", Rerank: &cairn.Rerank{Func: reverse}}); err != nil || given != 20 || gotQuery != "item" {
		t.Errorf("default pool: given %d, query %q, %v", given, gotQuery, err)
	}
	// Dropping candidates is allowed.
	first := func(ctx context.Context, _ string, cands []cairn.Result) ([]string, error) {
		return []string{cands[2].ID}, nil
	}
	if got, err := c.Query(ctx, q, 3, &cairn.QueryOptions{Rerank: &cairn.Rerank{Func: first}}); err != nil || !slices.Equal(ids(got), []string{"i2"}) {
		t.Errorf("dropping: %v, %v", ids(got), err)
	}
	for name, f := range map[string]cairn.Reranker{
		"unknown id": func(context.Context, string, []cairn.Result) ([]string, error) { return []string{"nope"}, nil },
		"twice": func(_ context.Context, _ string, c []cairn.Result) ([]string, error) {
			return []string{c[0].ID, c[0].ID}, nil
		},
	} {
		if _, err := c.Query(ctx, q, 3, &cairn.QueryOptions{Rerank: &cairn.Rerank{Func: f}}); !errors.Is(err, cairn.ErrBadRerank) {
			t.Errorf("%s: %v, want ErrBadRerank", name, err)
		}
	}
	boom := errors.New("boom")
	if _, err := c.Query(ctx, q, 3, &cairn.QueryOptions{Rerank: &cairn.Rerank{Func: func(context.Context, string, []cairn.Result) ([]string, error) { return nil, boom }}}); !errors.Is(err, boom) {
		t.Errorf("reranker error: %v", err)
	}
	// The reranker runs without the collection's lock: it may write.
	write := func(ctx context.Context, _ string, cands []cairn.Result) ([]string, error) {
		return nil, c.Add(ctx, cairn.Item{ID: "new", Embedding: []float32{0, 1}})
	}
	if _, err := c.Query(ctx, q, 3, &cairn.QueryOptions{Rerank: &cairn.Rerank{Func: write}}); err != nil {
		t.Errorf("reranker that writes: %v", err)
	}
}

func TestQueryModesBadInput(t *testing.T) {
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2})
	if err := c.Add(ctx, cairn.Item{ID: "a", Text: "alpha", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	q := []float32{1, 0}
	nan := math.NaN()
	rr := func(context.Context, string, []cairn.Result) ([]string, error) { return nil, nil }
	for name, o := range map[string]*cairn.QueryOptions{
		"keywords in vector mode":  {Keywords: "alpha"},
		"empty keywords":           {Mode: cairn.HybridMode},
		"only punctuation":         {Mode: cairn.HybridMode, Keywords: `"*" - ()`},
		"huge keywords":            {Mode: cairn.HybridMode, Keywords: strings.Repeat("x", cairn.MaxKeywordBytes+1)},
		"too many words":           {Mode: cairn.HybridMode, Keywords: strings.Repeat("w ", 1) + manyWords(cairn.MaxKeywords+1)},
		"invalid UTF-8":            {Mode: cairn.HybridMode, Keywords: "alpha \xff"},
		"unknown mode":             {Mode: cairn.QueryMode(7)},
		"MMR λ < 0":                {MMR: &cairn.MMR{Lambda: -0.1}},
		"MMR λ > 1":                {MMR: &cairn.MMR{Lambda: 1.5}},
		"MMR λ NaN":                {MMR: &cairn.MMR{Lambda: nan}},
		"MMR pool":                 {MMR: &cairn.MMR{Lambda: 0.5, Pool: cairn.MaxCandidates + 1}},
		"MMR and Rerank":           {MMR: &cairn.MMR{Lambda: 0.5}, Rerank: &cairn.Rerank{Func: rr}},
		"Rerank without Func":      {Rerank: &cairn.Rerank{}},
		"Fusion K < 0":             {Mode: cairn.HybridMode, Keywords: "alpha", Fusion: &cairn.Fusion{K: -1}},
		"Fusion weight NaN":        {Mode: cairn.HybridMode, Keywords: "alpha", Fusion: &cairn.Fusion{VectorWeight: nan}},
		"Fusion weight < 0":        {Mode: cairn.HybridMode, Keywords: "alpha", Fusion: &cairn.Fusion{KeywordWeight: -1}},
		"Fusion window":            {Mode: cairn.HybridMode, Keywords: "alpha", Fusion: &cairn.Fusion{Window: -1}},
		"MinSimilarity in keyword": {Mode: cairn.KeywordMode, Keywords: "alpha", MinSimilarity: new(0.5)},
		"MMR in keyword mode":      {Mode: cairn.KeywordMode, Keywords: "alpha", MMR: &cairn.MMR{Lambda: 0.5}},
	} {
		emb := q
		if o.Mode == cairn.KeywordMode {
			emb = nil
		}
		if _, err := c.Query(ctx, emb, 1, o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", name, err)
		}
	}
	if _, err := c.Query(ctx, q, 1, &cairn.QueryOptions{Mode: cairn.KeywordMode, Keywords: "alpha"}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("embedding in keyword mode: %v", err)
	}
	if _, err := c.Query(ctx, nil, 1, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "alpha"}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("hybrid without embedding: %v", err)
	}
	if _, err := c.QueryText(ctx, "", 1, &cairn.QueryOptions{Mode: cairn.KeywordMode}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("empty keyword QueryText: %v", err)
	}
	if _, err := c.Query(ctx, []float32{1}, 1, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "alpha"}); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("hybrid with a bad embedding: %v", err)
	}
	if _, err := c.QueryText(ctx, "alpha", 0, &cairn.QueryOptions{Mode: cairn.KeywordMode}); !errors.Is(err, vector.ErrInvalidK) {
		t.Errorf("k = 0: %v", err)
	}
	// Nothing stored changed.
	if got, err := c.QueryText(ctx, "alpha", 1, &cairn.QueryOptions{Mode: cairn.KeywordMode}); err != nil || len(got) != 1 {
		t.Errorf("after bad queries: %v, %v", got, err)
	}
}

func manyWords(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "word%d ", i)
	}
	return b.String()
}

// TestKeywordConcurrent runs keyword and hybrid queries while items are
// replaced: every result's text holds the query's word (no stale version
// matched), and the race detector watches the index.
func TestKeywordConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, op := range openers {
		t.Run(op.name, func(t *testing.T) {
			db := op.open(t, nil)
			c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 4})
			rng := rand.New(rand.NewPCG(4, 4))
			for i := range 50 {
				if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint(i), Text: "red", Embedding: randVec(rng, 4)}); err != nil {
					t.Fatal(err)
				}
			}
			var g sync.WaitGroup
			stop := make(chan struct{})
			g.Go(func() {
				defer close(stop)
				r := rand.New(rand.NewPCG(5, 5))
				for i := range 120 {
					color := []string{"red", "blue"}[i%2]
					if err := c.Upsert(ctx, cairn.Item{ID: fmt.Sprint(r.IntN(50)), Text: color + " " + fmt.Sprint(i), Embedding: randVec(r, 4)}); err != nil {
						t.Error(err)
						return
					}
				}
			})
			for range 2 {
				g.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						for _, mode := range []cairn.QueryMode{cairn.KeywordMode, cairn.HybridMode} {
							var q []float32
							if mode == cairn.HybridMode {
								q = []float32{1, 0, 0, 0}
							}
							got, err := c.Query(ctx, q, 10, &cairn.QueryOptions{Mode: mode, Keywords: "blue"})
							if err != nil {
								t.Error(err)
								return
							}
							for _, r := range got {
								if r.KeywordRank > 0 && !strings.Contains(r.Text, "blue") {
									t.Errorf("%v: %s matched blue with text %q", mode, r.ID, r.Text)
									return
								}
							}
						}
					}
				})
			}
			g.Wait()
		})
	}
}

// FuzzKeywordQuery checks that any keyword text, in keyword and hybrid
// mode, either is refused with ErrInvalidOptions or returns results each
// of which holds one of the query's words (as the tokenizer reads both).
func FuzzKeywordQuery(f *testing.F) {
	for _, s := range []string{"ada", `"E1234" OR *`, "NEAR(a b)", "-minus", "\xff", "Crème", strings.Repeat("x ", 70)} {
		f.Add(s)
	}
	ctx := context.Background()
	db := cairn.OpenMemory(nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 8})
	if err != nil {
		f.Fatal(err)
	}
	if err := c.Add(ctx, notes(rand.New(rand.NewPCG(9, 9)), 8)...); err != nil {
		f.Fatal(err)
	}
	q := randVec(rand.New(rand.NewPCG(10, 10)), 8)
	f.Fuzz(func(t *testing.T, words string) {
		for _, mode := range []cairn.QueryMode{cairn.KeywordMode, cairn.HybridMode} {
			emb := q
			if mode == cairn.KeywordMode {
				emb = nil
			}
			got, err := c.Query(ctx, emb, 5, &cairn.QueryOptions{Mode: mode, Keywords: words})
			if err != nil {
				if !errors.Is(err, vector.ErrInvalidOptions) {
					t.Fatalf("%v %q: %v", mode, words, err)
				}
				continue
			}
			qw := keyword.Tokens(words)
			for _, r := range got {
				if r.KeywordRank == 0 {
					continue
				}
				if !slices.ContainsFunc(keyword.Tokens(r.Text), func(w string) bool { return slices.Contains(qw, w) }) {
					t.Fatalf("%v %q: %s (%q) holds none of the words %q", mode, words, r.ID, r.Text, qw)
				}
			}
		}
	})
}

// TestKeywordScoresAreFTS5 checks a collection's keyword query end to end
// against SQLite's FTS5 over the same texts (the fixture's 1,580 strings,
// in memory and in a file): the same items, in the same order (ties in
// the order added, FTS5's rowid), with the same BM25 scores.
func TestKeywordScoresAreFTS5(t *testing.T) {
	fx := loadWords(t)
	ctx := context.Background()
	ref, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ref.SetMaxOpenConns(1)
	if _, err := ref.Exec("CREATE VIRTUAL TABLE docs USING fts5(body)"); err != nil {
		t.Fatal(err)
	}
	items := make([]cairn.Item, len(fx.base))
	for i, v := range fx.base {
		items[i] = cairn.Item{ID: fmt.Sprintf("b%04d", i), Embedding: v, Text: fx.baseText[i]}
		if _, err := ref.Exec("INSERT INTO docs(rowid, body) VALUES (?, ?)", i+1, fx.baseText[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range openers {
		t.Run(op.name, func(t *testing.T) {
			db := op.open(t, nil)
			c := mustCollection(t, db, "words", cairn.CollectionConfig{Dim: 384, Index: cairn.Flat})
			if err := c.Add(ctx, items...); err != nil {
				t.Fatal(err)
			}
			for _, text := range fx.queryText[:300] {
				var quoted []string // the distinct words, each a quoted FTS5 string
				for _, w := range keyword.Tokens(text) {
					if q := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`; !slices.Contains(quoted, q) {
						quoted = append(quoted, q)
					}
				}
				if len(quoted) == 0 {
					continue
				}
				rows, err := ref.Query("SELECT rowid, -bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT 20", strings.Join(quoted, " OR "))
				if err != nil {
					t.Fatal(err)
				}
				type hit struct {
					id    string
					score float64
				}
				var want []hit
				for rows.Next() {
					var row int
					var h hit
					if err := rows.Scan(&row, &h.score); err != nil {
						t.Fatal(err)
					}
					h.id = fmt.Sprintf("b%04d", row-1)
					want = append(want, h)
				}
				rows.Close()
				got, err := c.QueryText(ctx, text, 20, &cairn.QueryOptions{Mode: cairn.KeywordMode})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%q: %d results, FTS5 %d", text, len(got), len(want))
				}
				for i, w := range want {
					if got[i].ID != w.id || math.Abs(got[i].KeywordScore-w.score) > 1e-12*math.Abs(w.score) {
						t.Fatalf("%q: result %d = %s %.17g, FTS5 %s %.17g", text, i, got[i].ID, got[i].KeywordScore, w.id, w.score)
					}
				}
			}
		})
	}
}

// TestQueryHugeK checks that a k far beyond the collection's size, up to
// the largest int, returns every item in each mode, with each index, in
// memory and in a file: a keyword list sized its heap by k (a k of 2⁴⁰
// ended the process out of memory), and so did the graph's walk.
func TestQueryHugeK(t *testing.T) {
	ctx := context.Background()
	first := func(_ context.Context, _ string, cands []cairn.Result) ([]string, error) { return ids(cands), nil }
	for _, kind := range []cairn.IndexKind{cairn.Flat, cairn.HNSW, cairn.QFlat} {
		for _, file := range []bool{false, true} {
			db := cairn.OpenMemory(nil)
			if file {
				var err error
				if db, err = cairn.Open(ctx, filepath.Join(t.TempDir(), "k.cairn"), nil); err != nil {
					t.Fatal(err)
				}
			}
			c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 3, Index: kind})
			for i := range 20 {
				if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint("i", i), Text: "word", Embedding: []float32{float32(i), 1, 1}}); err != nil {
					t.Fatal(err)
				}
			}
			q := []float32{1, 1, 1}
			for _, k := range []int{1 << 40, math.MaxInt} {
				for name, o := range map[string]struct {
					q []float32
					o *cairn.QueryOptions
				}{
					"vector":  {q, nil},
					"keyword": {nil, &cairn.QueryOptions{Mode: cairn.KeywordMode, Keywords: "word"}},
					"hybrid":  {q, &cairn.QueryOptions{Mode: cairn.HybridMode, Keywords: "word"}},
					"mmr":     {q, &cairn.QueryOptions{MMR: &cairn.MMR{Lambda: 0.5}}},
					"rerank":  {q, &cairn.QueryOptions{Rerank: &cairn.Rerank{Func: first}}},
					"recency": {q, &cairn.QueryOptions{Recency: &cairn.Recency{HalfLife: time.Hour}}},
				} {
					got, err := c.Query(ctx, o.q, k, o.o)
					if err != nil || len(got) != 20 {
						t.Errorf("%v (file %v), %s, k %d: %d results, %v; want all 20", kind, file, name, k, len(got), err)
					}
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
