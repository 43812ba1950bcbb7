// This file checks Index.Search against FTS5's MATCH and bm25() on the
// same corpus, through adds, replacements and removals.
package keyword

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairndb/cairn/vector"
)

// vocabulary is the words the test corpus is drawn from, a few of them
// with case and diacritics that fold together.
var vocabulary = strings.Fields(`the of and to in a is that for it as was with be by on not he this are
	or his from at which but have an they you were her she there one all we their can has been if more
	when will would who so no memory vector search index agent keyword Crème crème CREME naïve naive
	Straße Σίσυφος 東京 E1234 ECONNREFUSED kubernetes postgres NEAR AND OR NOT`)

// zipfCorpus draws n texts of 1 to maxLen words from vocabulary, common
// words far more often than rare ones, so that terms repeat in a text.
func zipfCorpus(rng *rand.Rand, n, maxLen int) []string {
	z := rand.NewZipf(rng, 1.2, 2, uint64(len(vocabulary)-1))
	seps := []string{" ", " ", " ", ", ", ". ", "-", " \"", "* "}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := range 1 + rng.IntN(maxLen) {
			if j > 0 {
				b.WriteString(seps[rng.IntN(len(seps))])
			}
			b.WriteString(vocabulary[z.Uint64()])
		}
		out[i] = b.String()
	}
	return out
}

// corpus is the test's documents: texts by id, kept in step in an Index
// and an FTS5 table.
type corpus struct {
	db   *sql.DB
	x    *Index
	text map[vector.ID]string
}

func newCorpus(t *testing.T, texts []string) *corpus {
	c := &corpus{db: openFTS5(t), x: New(), text: map[vector.ID]string{}}
	fts5Table(t, c.db, "docs", texts)
	for i, s := range texts {
		c.x.Add(vector.ID(i+1), s)
		c.text[vector.ID(i+1)] = s
	}
	return c
}

func (c *corpus) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := c.db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// set gives id the text s in both (a new document, or a replacement).
func (c *corpus) set(t *testing.T, id vector.ID, s string) {
	c.exec(t, "DELETE FROM docs WHERE rowid = ?", id)
	c.exec(t, "INSERT INTO docs(rowid, body) VALUES (?, ?)", id, s)
	c.x.Add(id, s)
	c.text[id] = s
}

func (c *corpus) remove(t *testing.T, ids ...vector.ID) {
	for _, id := range ids {
		c.exec(t, "DELETE FROM docs WHERE rowid = ?", id)
		delete(c.text, id)
	}
	c.x.Remove(ids...)
}

// check runs query against both and compares: the same documents in the
// same order, scores equal to within 1e-12 of their size.
func (c *corpus) check(t *testing.T, query string) {
	t.Helper()
	terms, err := ParseQuery(query)
	if err != nil {
		t.Fatalf("ParseQuery(%q): %v", query, err)
	}
	want := fts5Search(t, c.db, "docs", terms)
	got := c.x.Search(terms, len(c.text)+1, nil, nil)
	if len(got) != len(want) {
		t.Fatalf("%q: %d hits, FTS5 %d", query, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if int64(g.ID) != w.row || math.Abs(g.Score-w.score) > 1e-12*math.Abs(w.score) {
			t.Fatalf("%q: hit %d = %d (%.17g), FTS5 %d (%.17g)", query, i, g.ID, g.Score, w.row, w.score)
		}
	}
	if c.x.Len() != len(c.text) {
		t.Fatalf("Len = %d, want %d", c.x.Len(), len(c.text))
	}
}

// queries draws n queries of 1 to 4 words, some of them absent from the
// corpus, some with operators FTS5 would read as syntax.
func queries(rng *rand.Rand, n int) []string {
	extra := []string{"absent", `"the`, "memory*", "-agent", "NEAR(the", "OR", "crème)", "e1234:"}
	out := make([]string, n)
	for i := range out {
		words := make([]string, 1+rng.IntN(4))
		for j := range words {
			if rng.IntN(5) == 0 {
				words[j] = extra[rng.IntN(len(extra))]
			} else {
				words[j] = vocabulary[rng.IntN(len(vocabulary))]
			}
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

func TestSearchMatchesFTS5(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, nq := 2000, 150
	if raceEnabled {
		n, nq = 400, 30 // see race_test.go
	}
	texts := append(zipfCorpus(rng, n, 30), tokenTexts...)
	c := newCorpus(t, texts)
	qs := queries(rng, nq)
	for _, q := range qs {
		c.check(t, q)
	}

	// Replace some documents, remove others (singly and in a batch), add
	// new ones and reuse freed slots: the statistics must follow.
	for range n / 20 {
		id := vector.ID(1 + rng.IntN(len(texts)))
		c.set(t, id, zipfCorpus(rng, 1, 12)[0])
	}
	c.remove(t, 5)
	c.remove(t, 5) // again: ignored
	var batch []vector.ID
	for id := vector.ID(100); id < vector.ID(n/2+100); id += 3 {
		batch = append(batch, id)
	}
	c.remove(t, batch...)
	for i, s := range zipfCorpus(rng, n/7, 20) {
		c.set(t, vector.ID(5000+i), s)
	}
	for _, q := range qs {
		c.check(t, q)
	}

	// Remove every document holding "kubernetes": the term must go, and a
	// query for it match nothing in either.
	var holders []vector.ID
	for id, s := range c.text {
		if slices.Contains(Tokens(s), "kubernetes") {
			holders = append(holders, id)
		}
	}
	if len(holders) == 0 {
		t.Fatal("no document holds kubernetes")
	}
	c.remove(t, holders...)
	c.check(t, "kubernetes")
	c.check(t, "kubernetes the")
	if _, ok := c.x.terms["kubernetes"]; ok {
		t.Error("a term no document holds is still in the index")
	}
}

func TestSearchTopKAndFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := newCorpus(t, zipfCorpus(rng, 500, 20))
	for _, q := range queries(rng, 40) {
		terms, _ := ParseQuery(q)
		all := c.x.Search(terms, 1000, nil, nil)
		even := func(id vector.ID) bool { return id%2 == 0 }
		var wantEven []Hit
		for _, h := range all {
			if even(h.ID) {
				wantEven = append(wantEven, h)
			}
		}
		for _, k := range []int{1, 3, 10} {
			if got := c.x.Search(terms, k, nil, nil); !slices.Equal(got, all[:min(k, len(all))]) {
				t.Fatalf("%q k=%d: %v, want the first %d of %v", q, k, got, k, all)
			}
			if got := c.x.Search(terms, k, even, nil); !slices.Equal(got, wantEven[:min(k, len(wantEven))]) {
				t.Fatalf("%q k=%d, even ids: %v, want %v", q, k, got, wantEven[:min(k, len(wantEven))])
			}
		}
	}
	if got := c.x.Search([]string{"the"}, 0, nil, nil); got != nil {
		t.Errorf("k = 0: %v", got)
	}
	if got := New().Search([]string{"the"}, 5, nil, nil); got != nil {
		t.Errorf("empty index: %v", got)
	}
}

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
		err  error
	}{
		{"Hello hello HELLO world", []string{"hello", "world"}, nil},
		{`"E1234" NEAR(x*) -y OR z`, []string{"e1234", "near", "x", "y", "or", "z"}, nil},
		{"", nil, ErrEmptyQuery},
		{" \"*-() ", nil, ErrEmptyQuery},
		{strings.Repeat("a", MaxQueryBytes+1), nil, ErrQueryTooLong},
		{strings.Repeat("a ", MaxQueryTerms+1), []string{"a"}, nil},
	} {
		got, err := ParseQuery(c.q)
		if !slices.Equal(got, c.want) || err != c.err && !strings.Contains(fmt.Sprint(err), fmt.Sprint(c.err)) {
			t.Errorf("ParseQuery(%.30q) = %q, %v; want %q, %v", c.q, got, err, c.want, c.err)
		}
	}
	var many []string
	for i := range MaxQueryTerms + 1 {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	if _, err := ParseQuery(strings.Join(many, " ")); err == nil || !strings.Contains(err.Error(), "distinct") {
		t.Errorf("%d distinct words: %v", len(many), err)
	}
	if _, err := ParseQuery(strings.Join(many[:MaxQueryTerms], " ")); err != nil {
		t.Errorf("%d distinct words: %v", MaxQueryTerms, err)
	}
}

// FuzzParseQuery checks that any query parses without panic into
// distinct words that are the query's own tokens, within the limits, and
// that searching with them matches FTS5.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"hello", `"a" OR b*`, "NEAR(a b, 3)", "-x +y ^z", "\xff\xfe", "e\u0301"} {
		f.Add(s)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	texts := append(zipfCorpus(rng, 200, 10), tokenTexts[:len(tokenTexts)-2]...)
	db := openFTS5(f)
	fts5Table(f, db, "docs", texts)
	x := New()
	for i, s := range texts {
		x.Add(vector.ID(i+1), s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		terms, err := ParseQuery(q)
		if err != nil {
			if err != ErrEmptyQuery && !strings.Contains(err.Error(), ErrQueryTooLong.Error()) {
				t.Fatalf("ParseQuery(%q): unexpected error %v", q, err)
			}
			return
		}
		toks := Tokens(q)
		for i, term := range terms {
			if !slices.Contains(toks, term) || slices.Index(terms, term) != i {
				t.Fatalf("ParseQuery(%q) = %q: not the distinct tokens %q", q, terms, toks)
			}
		}
		if !utf8.ValidString(q) {
			// A term cut from bytes that are not UTF-8 may hold a code
			// point that, written as UTF-8 for FTS5's query, tokenizes
			// otherwise ("\xfc\xb8\x9f\x88\xb70" is the token "🈷0",
			// which FTS5 reads as the separator U+1F237 and "0").
			// Collections refuse such keywords.
			return
		}
		want := fts5Search(t, db, "docs", terms)
		got := x.Search(terms, len(texts), nil, nil)
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits, FTS5 %d", q, len(got), len(want))
		}
		for i, w := range want {
			if int64(got[i].ID) != w.row || math.Abs(got[i].Score-w.score) > 1e-12*math.Abs(w.score) {
				t.Fatalf("%q: hit %d = %v, FTS5 %v", q, i, got[i], w)
			}
		}
	})
}

// TestSearchUnseen checks that documents passed as unseen count in no
// statistic: the hits and scores are FTS5's over the table without them,
// as if they had been removed.
func TestSearchUnseen(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	texts := zipfCorpus(rng, 400, 20)
	c := newCorpus(t, texts)
	var unseen []vector.ID
	for id := range c.text {
		if rng.IntN(3) == 0 {
			unseen = append(unseen, id)
		}
	}
	unseen = append(unseen, vector.ID(len(texts)+7)) // not in the index: ignored
	hide := map[vector.ID]bool{}
	for _, id := range unseen {
		hide[id] = true
	}
	allow := func(id vector.ID) bool { return !hide[id] }
	held := New()
	for id, s := range c.text {
		held.Add(id, s)
	}
	c.remove(t, unseen[:len(unseen)-1]...)
	for _, q := range queries(rng, 40) {
		terms, _ := ParseQuery(q)
		want := fts5Search(t, c.db, "docs", terms)
		got := held.Search(terms, len(texts)+1, allow, unseen)
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits, FTS5 without the unseen %d", q, len(got), len(want))
		}
		for i, w := range want {
			if g := got[i]; int64(g.ID) != w.row || math.Abs(g.Score-w.score) > 1e-12*math.Abs(w.score) {
				t.Fatalf("%q: hit %d = %d (%.17g), FTS5 %d (%.17g)", q, i, g.ID, g.Score, w.row, w.score)
			}
		}
	}
}
