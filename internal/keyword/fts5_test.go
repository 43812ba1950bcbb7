// This file holds the reference the package is tested against: SQLite's
// own FTS5, as modernc.org/sqlite compiles it, asked for tokens and BM25
// scores.
package keyword

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// openFTS5 opens an in-memory SQLite database on one connection (each
// connection to ":memory:" is a database of its own).
func openFTS5(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// fts5Table creates an FTS5 table named name (default tokenizer) with an
// instance vocabulary table name_v, and fills it with texts, row i+1
// holding texts[i].
func fts5Table(t testing.TB, db *sql.DB, name string, texts []string) {
	t.Helper()
	stmts := []string{
		fmt.Sprintf("DROP TABLE IF EXISTS %s", name),
		fmt.Sprintf("DROP TABLE IF EXISTS %s_v", name),
		fmt.Sprintf("CREATE VIRTUAL TABLE %s USING fts5(body)", name),
		fmt.Sprintf("CREATE VIRTUAL TABLE %s_v USING fts5vocab(%s, 'instance')", name, name),
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(fmt.Sprintf("INSERT INTO %s(rowid, body) VALUES (?, ?)", name))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if _, err := ins.Exec(i+1, s); err != nil {
			t.Fatalf("insert %q: %v", s, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// fts5Token is one token FTS5 indexed: its position in its row and its
// bytes.
type fts5Token struct {
	off  int
	term string
}

// fts5Tokens returns the tokens FTS5 stores for each of texts, in order.
func fts5Tokens(t testing.TB, db *sql.DB, texts []string) [][]fts5Token {
	t.Helper()
	fts5Table(t, db, "tok", texts)
	rows, err := db.Query("SELECT doc, offset, CAST(term AS BLOB) FROM tok_v ORDER BY doc, offset")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make([][]fts5Token, len(texts))
	for rows.Next() {
		var doc, off int
		var term []byte
		if err := rows.Scan(&doc, &off, &term); err != nil {
			t.Fatal(err)
		}
		out[doc-1] = append(out[doc-1], fts5Token{off, string(term)})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fts5Hit is one row FTS5 matched, with its bm25() score negated (larger
// is better, as Index.Search reports it).
type fts5Hit struct {
	row   int64
	score float64
}

// fts5Search runs the OR of terms (each quoted, so that nothing in it is
// an operator) against table name, best first, ties by rowid.
func fts5Search(t testing.TB, db *sql.DB, name string, terms []string) []fts5Hit {
	t.Helper()
	quoted := make([]string, len(terms))
	for i, term := range terms {
		quoted[i] = `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
	}
	q := fmt.Sprintf("SELECT rowid, bm25(%s) FROM %s WHERE %s MATCH ? ORDER BY bm25(%s), rowid", name, name, name, name)
	rows, err := db.Query(q, strings.Join(quoted, " OR "))
	if err != nil {
		t.Fatalf("%s (%v): %v", q, terms, err)
	}
	defer rows.Close()
	var out []fts5Hit
	for rows.Next() {
		var h fts5Hit
		if err := rows.Scan(&h.row, &h.score); err != nil {
			t.Fatal(err)
		}
		h.score = -h.score
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
