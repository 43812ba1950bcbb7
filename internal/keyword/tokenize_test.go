// This file checks the tokenizer against FTS5's unicode61 on written
// texts, random bytes and fuzzed input.
package keyword

import (
	"database/sql"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tokenTexts are texts whose tokens are checked against FTS5: scripts,
// case, diacritics, punctuation, operators of FTS5's query syntax, and
// broken UTF-8.
var tokenTexts = []string{
	"",
	"   ",
	"Hello, World! hello-world HELLO_world",
	"error E1234: connection refused (ECONNREFUSED) at 10.0.0.1:8080",
	`"quoted" * NEAR(a b) -minus +plus ^caret col:umn AND OR NOT`,
	"Crème brûlée à la façon de Zoë; naïve coöperation, ÅNGSTRÖM",
	"Straße, STRASSE, ǅemal, ǈ, İstanbul, ıi, Σίσυφος ΣΊΣΥΦΟΣ",
	"Ελληνικά, русский язык, Українська, ქართული, Հայերեն",
	"中文分词 日本語のテキスト 한국어 텍스트",
	"عربي فارسی עברית हिन्दी தமிழ் ไทย",
	"e\u0301 a\u0300\u0301b \u0301start mid\u0308dle",
	"emoji 😀 party🎉time ♥ ☃ ①②③ ¹²³ ½ Ⅻ",
	"𐐀𐐁 Deseret 𐐨; 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math; \U000F0000 private \U0010FFFD",
	"tabs\tand\nnewlines\r\nand\x00nul\x1fcontrol",
	"\u00a0nbsp\u2003em\u3000ideographic\u200bzero-width\ufeffbom",
	"broken \xff\xfe utf8 \xc3 \x80\xbf lone \xe2\x82 short \xf0\x9f\x98 cut",
	"overlong \xc0\xaf \xe0\x80\xaf surrogate \xed\xa0\x80 \xef\xbf\xbe \xef\xbf\xbf",
	"beyond \xf4\x90\x80\x80 \xf7\xbf\xbf\xbf \xf8\x88\x80\x80\x80 \xfc\x84\x80\x80\x80\x80 \xfe\xff",
	"many continuations \xc2\x80\x80\x80\x80\x80\x80\x80\x80\x80x",
	"ªº µ ß ÿ Ÿ Ǆ ǆ ﬁ ﬀ ᾼ ῼ K Å",
	strings.Repeat("a", 40000) + " tail",
	strings.Repeat("é", 20000),
}

func TestTokensMatchFTS5(t *testing.T) {
	texts := slices.Clone(tokenTexts)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		texts = append(texts, randomText(rng, 1+rng.IntN(80)))
	}
	db := openFTS5(t)
	want := fts5Tokens(t, db, texts)
	for i, text := range texts {
		checkTokens(t, text, Tokens(text), want[i])
	}
}

// checkTokens reports where got, the tokens of text, differ from want,
// FTS5's.
func checkTokens(t *testing.T, text string, got []string, want []fts5Token) {
	t.Helper()
	short := text
	if len(short) > 80 {
		short = short[:80] + "…"
	}
	if len(got) != len(want) {
		t.Errorf("%q: %d tokens, FTS5 %d:\n got %q\nwant %v", short, len(got), len(want), clip(got), want[:min(len(want), 20)])
		return
	}
	for j, w := range want {
		if w.off != j || w.term != got[j] {
			t.Errorf("%q: token %d = %q, FTS5 %q at offset %d", short, j, clip(got[j : j+1])[0], w.term, w.off)
			return
		}
	}
}

func clip(toks []string) []string {
	out := make([]string, len(toks))
	for i, s := range toks {
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		out[i] = s
	}
	return out
}

// randomText draws n pieces from a mix of ASCII, Latin, Greek, combining
// marks, CJK, astral code points and raw bytes.
func randomText(rng *rand.Rand, n int) string {
	pieces := []string{" ", "a", "Z", "9", "-", "\"", "*", "é", "É", "\u0301", "\u0305", "ß", "Σ", "ς", "中", "😀", "𐐀", "\U000F0001", "\xff", "\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\x00", "\t"}
	var b strings.Builder
	for range n {
		if rng.IntN(4) == 0 {
			b.WriteRune(rune(rng.IntN(0x110000)))
		} else {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
	}
	return b.String()
}

// fts5Tokenizer tokenizes one text at a time with FTS5, for fuzzing.
type fts5Tokenizer struct {
	db  *sql.DB
	ins *sql.Stmt
	sel *sql.Stmt
	del *sql.Stmt
}

func newFTS5Tokenizer(t testing.TB) *fts5Tokenizer {
	db := openFTS5(t)
	fts5Table(t, db, "fz", nil)
	prep := func(q string) *sql.Stmt {
		s, err := db.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return &fts5Tokenizer{
		db:  db,
		ins: prep("INSERT INTO fz(rowid, body) VALUES (1, ?)"),
		sel: prep("SELECT offset, CAST(term AS BLOB) FROM fz_v WHERE doc = 1 ORDER BY offset"),
		del: prep("DELETE FROM fz WHERE rowid = 1"),
	}
}

func (f *fts5Tokenizer) tokens(t testing.TB, text string) []fts5Token {
	if _, err := f.ins.Exec(text); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := f.del.Exec(); err != nil {
			t.Fatal(err)
		}
	}()
	rows, err := f.sel.Query()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []fts5Token
	for rows.Next() {
		var tok fts5Token
		var term []byte
		if err := rows.Scan(&tok.off, &term); err != nil {
			t.Fatal(err)
		}
		tok.term = string(term)
		out = append(out, tok)
	}
	return out
}

// FuzzTokens checks that the tokens of any bytes are FTS5's.
func FuzzTokens(f *testing.F) {
	for _, s := range tokenTexts {
		if len(s) < 1000 {
			f.Add(s)
		}
	}
	ref := newFTS5Tokenizer(f)
	f.Fuzz(func(t *testing.T, text string) {
		checkTokens(t, text, Tokens(text), ref.tokens(t, text))
	})
}

func TestTokensExamples(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"E1234-b", []string{"e1234", "b"}},
		{"Zoë CRÈME", []string{"zoe", "creme"}},
		{"e\u0301x", []string{"ex"}},
		{"\u0301x", []string{"x"}},
		{`"a" *b NEAR(c)`, []string{"a", "b", "near", "c"}},
		{"", nil},
	} {
		if got := Tokens(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
