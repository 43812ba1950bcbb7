package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/sqlitestore"
)

// fixture is a stream of two collections that every command test starts
// from.
const fixture = `{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"}}
{"id":"a","text":"alpha","metadata":{"kind":"fact","year":2021},"embedding":[1,0,0]}
{"id":"b","text":"beta","metadata":{"kind":"pref","year":2019},"embedding":[0,1,0]}
{"id":"c","text":"gamma","metadata":{"kind":"fact","year":2024},"embedding":[0.5,0.5,0.1],"created_at":"2026-01-01T00:00:00Z","later":{"x":[1]}}
{"collection":{"name":"empty","dim":2,"metric":"l2","index":"hnsw","hnsw":{"m":8,"target_recall":0.95}}}
`

// newFile returns the path of a new file holding fixture.
func newFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, fixture, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	return path
}

func TestCommands(t *testing.T) {
	path := newFile(t)
	missing := filepath.Join(t.TempDir(), "missing.db")
	notDB := filepath.Join(t.TempDir(), "text.db")
	if err := os.WriteFile(notDB, []byte("not a database, just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // each must appear
		stderr     []string
		noStdout   []string // none may appear
		wantStderr bool
	}{
		{name: "no args", args: nil, code: exitUsage, stderr: []string{"Usage:", "cairn mcp"}},
		{name: "help", args: []string{"help"}, code: exitOK, stdout: []string{"cairn info FILE", "cairn export"}},
		{name: "unknown", args: []string{"frobnicate"}, code: exitUsage, stderr: []string{`unknown command "frobnicate"`}},
		{name: "info", args: []string{"info", path}, code: exitOK,
			stdout: []string{"notes", "cosine", "flat", "empty", "l2", "hnsw", "M=8 efConstruction=200 targetRecall=0.95@10"}},
		{name: "info json", args: []string{"info", "-json", path}, code: exitOK,
			stdout: []string{`"name": "notes"`, `"items": 3`, `"saved_graph": "none"`}},
		{name: "info missing file", args: []string{"info", missing}, code: exitFail, stderr: []string{"missing.db: no such file"}},
		{name: "info not a database", args: []string{"info", notDB}, code: exitFail, stderr: []string{"text.db: not a cairn database"}},
		{name: "info two files", args: []string{"info", path, path}, code: exitUsage, stderr: []string{"want one FILE, got 2"}},
		{name: "check", args: []string{"check", path}, code: exitOK, stdout: []string{"ok (2 collections, 0 tenants, 3 items"}},
		{name: "query vector", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0.1,0]", "-k", "2"}, code: exitOK,
			stdout: []string{"1     a", "2     c", "alpha"}, noStdout: []string{"beta"}},
		{name: "query filter json", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0.1,0]", "-filter", `{"year":{"$lt":2020}}`, "-json"}, code: exitOK,
			stdout: []string{`[{"id":"b","similarity":0.0995`, `"metadata":{"kind":"pref","year":2019}`}},
		{name: "query bad filter", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-filter", `{"year":{"$near":1}}`}, code: exitUsage,
			stderr: []string{"-filter:", "$near"}},
		{name: "query empty filter", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-filter", ` {} `, "-json"}, code: exitOK,
			stdout: []string{`"id":"a"`, `"id":"b"`, `"id":"c"`}},
		{name: "query null filter", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-filter", `null`, "-json"}, code: exitOK,
			stdout: []string{`"id":"a"`, `"id":"b"`, `"id":"c"`}},
		{name: "query bad vector", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0"}, code: exitUsage, stderr: []string{"-vector: not a JSON array"}},
		{name: "query wrong dimension", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0]"}, code: exitFail,
			stderr: []string{"t.db:", "dimension"}},
		{name: "query unknown collection", args: []string{"query", path, "-collection", "nope", "-vector", "[1,0,0]"}, code: exitFail,
			stderr: []string{"t.db:", `"nope"`, "not found"}},
		{name: "query text without embedder", args: []string{"query", path, "-collection", "notes", "-text", "hi"}, code: exitUsage, stderr: []string{"-text needs an embedder"}},
		{name: "query keyword without embedder", args: []string{"query", path, "-collection", "notes", "-text", "gamma", "-mode", "keyword", "-json"}, code: exitOK,
			stdout: []string{`[{"id":"c","similarity":0,"score":`, `"text":"gamma"`}, noStdout: []string{`"id":"a"`}},
		{name: "query bad mode", args: []string{"query", path, "-collection", "notes", "-text", "x", "-mode", "fuzzy"}, code: exitUsage, stderr: []string{"-mode: want vector, keyword or hybrid"}},
		{name: "query keyword without text", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-mode", "keyword"}, code: exitUsage, stderr: []string{"-mode keyword needs -text"}},
		{name: "query neither", args: []string{"query", path, "-collection", "notes"}, code: exitUsage, stderr: []string{"give one of -text and -vector"}},
		{name: "query k", args: []string{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-k", "0"}, code: exitUsage, stderr: []string{"-k must be positive"}},
		{name: "export one", args: []string{"export", path, "-collection", "notes"}, code: exitOK,
			stdout:   []string{`{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"}}`, `{"id":"b","text":"beta","metadata":{"kind":"pref","year":2019},"embedding":[0,1,0],"created_at":"`},
			noStdout: []string{`"empty"`}},
		{name: "export unknown collection", args: []string{"export", path, "-collection", "nope"}, code: exitFail, stderr: []string{`"nope"`}},
		{name: "compact", args: []string{"compact", path}, code: exitOK, stdout: []string{"t.db:", "KiB →"}},
		{name: "compact missing", args: []string{"compact", missing}, code: exitFail, stderr: []string{"no such file"}},
		{name: "mcp without db", args: []string{"mcp", "-embed-url", "http://127.0.0.1:1/v1", "-embed-model", "m"}, code: exitUsage, stderr: []string{"-db is required"}},
		{name: "mcp without embedder", args: []string{"mcp", "-db", path}, code: exitUsage, stderr: []string{"an embedder is required"}},
		{name: "flag help", args: []string{"info", "-h"}, code: exitOK, stdout: []string{"usage: cairn info", "-json"}},
		{name: "bad flag", args: []string{"info", "-frob", path}, code: exitUsage, stderr: []string{"-frob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.noStdout {
				if strings.Contains(r.stdout, s) {
					t.Errorf("stdout has %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if tt.code == exitFail && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("a failure is reported on more than one line:\n%s", r.stderr)
			}
		})
	}
	// Nothing above created the missing file.
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a command created %s (stat: %v)", missing, err)
	}
}

// TestCheckAndInfoFindProblems damages a file behind cairn's back and
// checks that check reports it, one problem a line, with exit status 1,
// and that info tells a current saved graph from a stale one.
func TestCheckAndInfoFindProblems(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "g", cairn.CollectionConfig{Dim: 2, Index: cairn.HNSW})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, cairn.Item{ID: "x", Embedding: []float32{1, 0}}, cairn.Item{ID: "y", Embedding: []float32{0, 1}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if r := runCmd(t, "", "info", path); r.code != 0 || !strings.Contains(r.stdout, "current") {
		t.Fatalf("info: %+v", r)
	}
	if r := runCmd(t, "", "check", path); r.code != 0 || !strings.Contains(r.stdout, "1 saved graphs verified") {
		t.Fatalf("check: %+v", r)
	}

	// A row without a key, written with sqlitestore alone.
	sdb, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sdb.Collection(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.PutItems(ctx, []sqlitestore.Item{{ID: 99, Vector: []float32{1, 1}}}); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	r := runCmd(t, "", "check", path)
	if r.code != exitFail || !strings.Contains(r.stdout, `t.db: collection "g": row 99 ("") has no id`) || !strings.Contains(r.stderr, "check failed: 1 problems") {
		t.Fatalf("check of a damaged file: %+v", r)
	}
	if r := runCmd(t, "", "info", path); r.code != 0 || !strings.Contains(r.stdout, "stale") {
		t.Fatalf("info after a write behind the graph: %+v", r)
	}
}

// TestLocked checks that the commands that read a file work while
// another owner writes it, and that those that write it report it as
// locked, in one line.
func TestLocked(t *testing.T) {
	path := newFile(t)
	db, err := cairn.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, args := range [][]string{
		{"info", path}, {"check", path}, {"export", path},
		{"query", path, "-collection", "notes", "-vector", "[1,0,0]"},
	} {
		if r := runCmd(t, "", args...); r.code != 0 || r.stderr != "" {
			t.Errorf("%s beside a writer: exit %d, stderr %q; want 0", args[0], r.code, r.stderr)
		}
	}
	r := runCmd(t, "", "compact", path)
	if r.code != exitFail || !strings.Contains(r.stderr, "t.db: the file is locked by another process") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("compact: exit %d, stderr %q; want 1 and one line saying the file is locked", r.code, r.stderr)
	}
	r = runCmd(t, `{"id":"z","embedding":[1,0,0]}`, "import", "-collection", "notes", path)
	if r.code != exitFail || !strings.Contains(r.stderr, "locked by another process") {
		t.Errorf("import: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestExportImportRoundTrip checks that export | import | export gives
// back the same bytes, and that import into an existing file adds.
func TestExportImportRoundTrip(t *testing.T) {
	path := newFile(t)
	// Items with awkward values: unicode, escapes, numbers that need all
	// their digits, an item without text or metadata.
	extra := `{"id":"ü/1","text":"line1\nline2 \"quoted\" \u2028 tab\t","metadata":{"pi":3.141592653589793,"big":9007199254740991,"neg":-0.000001,"flag":false,"s":"ß"},"embedding":[0.1,0.2,0.3]}
{"id":"bare","embedding":[1e-7,3.4028235e+38,-2.5]}
{"id":"timed","embedding":[1,1,1],"created_at":"2026-01-02T03:04:05.123456789Z","updated_at":"2026-01-03T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"}
{"id":"gone","embedding":[1,0,1],"expires_at":"2001-01-01T00:00:00Z"}
`
	if r := runCmd(t, extra, "import", "-collection", "notes", path); r.code != 0 || !strings.Contains(r.stderr, "skipped 1 expired items") {
		t.Fatalf("import extra: %+v", r)
	}
	ttl := `{"collection":{"name":"ttl","dim":2,"metric":"cosine","index":"flat","ttl":"1h0m0s","history":{"for":"720h0m0s","versions":3}}}` + "\n"
	if r := runCmd(t, ttl, "import", "-q", path); r.code != 0 {
		t.Fatalf("import ttl: %+v", r)
	}
	first := runCmd(t, "", "export", path)
	if first.code != 0 {
		t.Fatalf("export: %+v", first)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if r := runCmd(t, first.stdout, "import", "-batch", "2", copyPath); r.code != 0 || !strings.Contains(r.stderr, "imported 6 items") {
		t.Fatalf("import: %+v", r)
	}
	second := runCmd(t, "", "export", copyPath)
	if second.code != 0 {
		t.Fatalf("export of the copy: %+v", second)
	}
	if first.stdout != second.stdout {
		t.Fatalf("export of the copy differs:\n%s\nwant:\n%s", second.stdout, first.stdout)
	}
	if !strings.Contains(first.stdout, `{"collection":{"name":"empty","dim":2,"metric":"l2","index":"hnsw","hnsw":{"m":8,"target_recall":0.95}}}`) {
		t.Errorf("the header of empty lost its configuration:\n%s", first.stdout)
	}
	if n := strings.Count(first.stdout, "\n"); n != 9 { // 3 headers, 6 items
		t.Fatalf("export has %d lines, want 9:\n%s", n, first.stdout)
	}
	if !strings.Contains(first.stdout, `{"id":"timed","embedding":[1,1,1],"created_at":"2026-01-02T03:04:05.123456789Z","updated_at":"2026-01-03T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"}`) {
		t.Errorf("the times of an item did not survive import and export:\n%s", first.stdout)
	}
	if !strings.Contains(first.stdout, `"ttl":"1h0m0s","history":{"for":"720h0m0s","versions":3}`) {
		t.Errorf("a collection's TTL and history policy were not exported:\n%s", first.stdout)
	}
	for _, l := range strings.Split(strings.TrimSpace(first.stdout), "\n") {
		if !strings.Contains(l, `"collection"`) && !strings.Contains(l, `"created_at":"`) {
			t.Errorf("an item exported without its CreatedAt: %s", l)
		}
	}
}

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name, stdin string
		args        []string
		stderr      string
		stored      int // items in "notes" afterwards; -1: no file at all
	}{
		{name: "bad json", stdin: fixture + "{\"id\":\n", stderr: "line 6: bad line", stored: -1},
		{name: "no id", stdin: fixture + `{"text":"x","embedding":[1,0,0]}` + "\n", stderr: "line 6: bad line: item without an id", stored: -1},
		{name: "no header", stdin: `{"id":"x","embedding":[1,0,0]}`, stderr: "line 1: an item before any collection header", stored: -1},
		{name: "bad header", stdin: `{"collection":{"name":"x","dim":0}}`, stderr: "line 1: bad line: collection \"x\"", stored: -1},
		{name: "negative dimension", stdin: `{"collection":{"name":"x","dim":-3}}`, stderr: "dimension -3 must be positive (nothing stored)", stored: -1},
		{name: "duplicate in a batch rolls the batch back", args: []string{"-batch", "3"},
			stdin:  fixture[:strings.Index(fixture, `{"collection":{"name":"empty"`)] + `{"id":"d","embedding":[1,1,0]}` + "\n" + `{"id":"a","embedding":[1,1,1]}` + "\n",
			stderr: "lines 5-6: add \"a\": duplicate id (3 items stored before it; fix it and rerun with line 1 and the lines from line 5 on", stored: 3},
		{name: "wrong dimension", stdin: fixture + `{"collection":{"name":"notes","dim":4,"metric":"cosine"}}` + "\n", stderr: "exists with dim 3", stored: -1},
		{name: "no embedding and no embedder", args: []string{"-collection", "fresh"}, stdin: `{"id":"x","text":"hello"}`, stderr: "has no embedding", stored: -1},
		{name: "two collections renamed", args: []string{"-collection", "one"}, stdin: fixture, stderr: "line 5: -collection renames one collection", stored: -1},
		{name: "a line too long", stdin: fixture + `{"id":"long","text":"` + strings.Repeat("x", maxLine) + `"}` + "\n", stderr: "line 6: longer than 64 MiB", stored: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			r := runCmd(t, tt.stdin, append(append([]string{"import", "-q"}, tt.args...), path)...)
			if r.code != exitFail || !strings.Contains(r.stderr, tt.stderr) || !strings.Contains(r.stderr, "t.db:") {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tt.stderr)
			}
			if tt.stored < 0 {
				if names := dirNames(t, filepath.Dir(path)); len(names) != 0 {
					t.Errorf("the failed import left %q", names)
				}
				return
			}
			db, err := cairn.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			c, err := db.Collection(context.Background(), "notes")
			switch {
			case err != nil:
				t.Errorf("collection notes: %v", err)
			case mustCount(t, c) != tt.stored:
				t.Errorf("notes holds %d items, want %d", mustCount(t, c), tt.stored)
			}
		})
	}
}

// TestImportBOM checks that a byte order mark before the first line, as
// some editors write, is no error.
func TestImportBOM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, "\uFEFF"+fixture, "import", "-q", path); r.code != exitOK {
		t.Fatalf("import after a BOM: %+v", r)
	}
	if r := runCmd(t, "", "export", path); r.code != exitOK || !strings.Contains(r.stdout, `"name":"notes"`) {
		t.Fatalf("export: %+v", r)
	}
}

// TestImportInterruptWhileIdle interrupts an import whose input has sent
// a line and then waits (a terminal, a stalled pipe): it stops at once,
// saying so; staged, it stores nothing (with -batch, the batches before
// stay, as the message says). It read on until the input ended, and with
// nothing pending then said "imported 0 items", exit 0.
func TestImportInterruptWhileIdle(t *testing.T) {
	for _, batch := range []string{"", "-batch=1"} {
		path := newFile(t)
		before := fileSum(t, path)
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		args := []string{"import", "-q", "-collection", "notes", "-upsert"}
		if batch != "" {
			args = append(args, batch)
		}
		go func() { done <- run(ctx, append(args, path), pr, &out, &errb) }()
		if _, err := io.WriteString(pw, `{"id":"new","embedding":[1,1,1]}`+"\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case code := <-done:
			if code != exitFail || !strings.Contains(errb.String(), "canceled") {
				t.Errorf("%s: exit %d, stderr %q; want 1 and canceled", batch, code, errb.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the import went on reading 10 s after the interrupt", batch)
		}
		if batch == "" && fileSum(t, path) != before {
			t.Error("an interrupted import changed the file")
		}
	}
}

// fullWriter fails every write, as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputNotWritten: a command whose output cannot be written fails.
// check, compact and version exited 0; info, query and export 1, but
// without saying which command failed.
func TestOutputNotWritten(t *testing.T) {
	path := newFile(t)
	for _, args := range [][]string{{"check", path}, {"info", path}, {"export", path}, {"compact", path}, {"version"},
		{"query", path, "-collection", "notes", "-vector", "[1,0,0]"}, {"help"}, {"--help"}, {"export", "-h"}} {
		var errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), fullWriter{}, &errb)
		if code != exitFail || !strings.Contains(errb.String(), "cairn "+args[0]+": writing the output: no space left on device") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestHardLinkedFile: a file with a second name is refused by every
// command, saying why, and left as it was.
func TestHardLinkedFile(t *testing.T) {
	path := newFile(t)
	if err := os.Link(path, path+".link"); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	for _, args := range [][]string{{"info", path}, {"export", path + ".link"}, {"check", path}, {"import", "-q", path}} {
		r := runCmd(t, fixture, args...)
		if r.code != exitFail || !strings.Contains(r.stderr, "more than one name (hard links)") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if fileSum(t, path) != before {
		t.Error("the file changed")
	}
}

// TestImportEmbeds checks that import embeds items given only as text,
// and query -text finds them, with the embeddings server on loopback.
func TestImportEmbeds(t *testing.T) {
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "t.db")
	stdin := `{"id":"cat","text":"the cat sat on the mat"}
{"id":"go","text":"Go has goroutines and channels"}
`
	emb := []string{"-embed-url", srv.url(), "-embed-model", "bow"}
	if r := runCmd(t, stdin, append([]string{"import", "-q", "-collection", "docs", path}, emb...)...); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	r := runCmd(t, "", append([]string{"query", path, "-collection", "docs", "-text", "goroutines and channels", "-k", "1", "-json"}, emb...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, `[{"id":"go"`) {
		t.Fatalf("query: %+v", r)
	}
	srv.down.Store(true)
	r = runCmd(t, "", append([]string{"query", path, "-collection", "docs", "-text", "cats", "-embed-retries", "0"}, emb...)...)
	if r.code != exitFail || !strings.Contains(r.stderr, "HTTP 503") || !strings.Contains(r.stderr, "t.db:") {
		t.Fatalf("query with the embedder down: %+v", r)
	}
}

// TestFileErrors checks the one line a command prints about a file it
// cannot use: the file named once, the reason once, no package layers.
func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, err := os.ReadFile(newFile(t))
	if err != nil {
		t.Fatal(err)
	}
	locked := write("locked.db", good)
	db, err := cairn.Open(context.Background(), locked, nil) // another writer
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct {
		path   string
		cmds   [][]string
		reason string
	}{
		{write("text.db", []byte("not a database, just text\n")), [][]string{{"info"}, {"check"}, {"export"}, {"compact"}}, "not a cairn database: 26 bytes is too short for a SQLite header"},
		{write("empty.db", nil), [][]string{{"info"}, {"check"}, {"export"}, {"compact"}}, "not a cairn database: empty file"},
		{write("trunc.db", good[:5000]), [][]string{{"info"}, {"check"}, {"export"}, {"compact"}}, "the file is damaged: file size 5000 is not a multiple of the page size"},
		{locked, [][]string{{"compact"}, {"import"}}, "the file is locked by another process"},
		{filepath.Join(dir, "missing.db"), [][]string{{"info"}, {"check"}, {"export"}, {"compact"}}, "no such file"},
		{dir, [][]string{{"info"}, {"check"}, {"export"}, {"compact"}, {"import"}}, "is a directory, not a cairn file"},
	}
	for _, tt := range tests {
		for _, cmd := range tt.cmds {
			r := runCmd(t, "", append(cmd, tt.path)...)
			line := strings.TrimSuffix(r.stderr, "\n")
			want := "cairn: " + tt.path + ": " + tt.reason
			if r.code != exitFail || strings.Contains(line, "\n") || !strings.HasPrefix(line, want) ||
				strings.Count(line, tt.path) != 1 || strings.Contains(line, "sqlitestore") || strings.Count(line, "cairn: ") != 1 {
				t.Errorf("%s %s: status %d, stderr %q; want one line starting %q", cmd[0], filepath.Base(tt.path), r.code, r.stderr, want)
			}
		}
	}
}

// TestFlagErrors checks how a bad command line is reported: once, with
// the usage line, and status 2; -h prints the flags to stdout.
func TestFlagErrors(t *testing.T) {
	path := newFile(t)
	for _, args := range [][]string{
		{"info", "-x", path},
		{"mcp", "-zz"},
		{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-ef", "-5"},
		{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-ef", "99999999"},
		{"query", path, "-collection", "notes", "-vector", "[1,0,0]", "-filter", `{"year":{"$gt":"x"}}`},
		{"query", path, "-collection", "notes", "-text", "tea", "-embed-url", "http://127.0.0.1:1/v1", "-embed-model", "m", "-embed-dims", "-1"},
		{"mcp", "-db", path, "-embed-url", "http://127.0.0.1:1/v1", "-embed-model", "m", "-embed-dims", "-1"},
		{"query", path, "-collection", "notes", "-text", "tea", "-embed-url", "http://127.0.0.1:1/v1", "-embed-model", "m", "-embed-retries", "-1"},
		{"query", path, "-collection", "notes", "-text", "tea", "-embed-url", "http://127.0.0.1:1/v1", "-embed-model", "m", "-embed-timeout", "0s"},
	} {
		r := runCmd(t, "", args...)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if r.code != exitUsage || len(lines) != 2 || !strings.HasPrefix(lines[0], "cairn "+args[0]+": ") ||
			!strings.HasPrefix(lines[1], "usage: cairn "+args[0]) || strings.Contains(r.stderr, path) {
			t.Errorf("%v: status %d, stderr %q", args, r.code, r.stderr)
		}
	}
	r := runCmd(t, "", "import", "-h")
	if r.code != exitOK || r.stderr != "" || !strings.Contains(r.stdout, "usage: cairn import") || !strings.Contains(r.stdout, "qflat") {
		t.Errorf("import -h: %+v", r)
	}
}

// TestExportTenants: export writes each tenant of a collection after its
// own items, under a header naming the tenant, and import puts them back
// in their tenants, the collection's own items apart.
func TestExportTenants(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "mem", cairn.CollectionConfig{Dim: 2, Index: cairn.Flat})
	if err == nil {
		err = c.Add(ctx, cairn.Item{ID: "own", Embedding: []float32{1, 0}})
	}
	for _, name := range []string{"bob", "alice"} {
		var tn *cairn.Tenant
		if err == nil {
			tn, err = c.CreateTenant(ctx, name)
		}
		if err == nil {
			err = tn.Add(ctx, cairn.Item{ID: "m1", Text: name, Embedding: []float32{0, 1}})
		}
	}
	if err == nil {
		err = db.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, "", "export", path)
	want := `{"collection":{"name":"mem","dim":2,"metric":"cosine","index":"flat"}}
{"id":"own","embedding":[1,0]}
{"collection":{"name":"mem","dim":2,"metric":"cosine","index":"flat"},"tenant":"alice"}
{"id":"m1","text":"alice","embedding":[0,1]}
{"collection":{"name":"mem","dim":2,"metric":"cosine","index":"flat"},"tenant":"bob"}
{"id":"m1","text":"bob","embedding":[0,1]}
`
	// The items' times are the store's: drop them before comparing.
	got := regexp.MustCompile(`,"(created|updated)_at":"[^"]*"`).ReplaceAllString(r.stdout, "")
	if r.code != 0 || got != want {
		t.Fatalf("export: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, got, want)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if imp := runCmd(t, r.stdout, "import", copyPath); imp.code != 0 || !strings.Contains(imp.stderr, "imported 3 items") {
		t.Fatalf("import of tenants: %+v", imp)
	}
	if again := runCmd(t, "", "export", copyPath); again.code != 0 || again.stdout != r.stdout {
		t.Fatalf("export of the copy: %+v\nwant:\n%s", again, r.stdout)
	}
	db, err = cairn.Open(ctx, copyPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, c); n != 1 {
		t.Errorf("the collection holds %d items of its own, want 1", n)
	}
	tn, err := c.Tenant(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if its, err := tn.Get(ctx, "m1"); err != nil || its[0].Text != "bob" {
		t.Errorf("bob's m1: %+v, %v", its, err)
	}
}

// TestQueryTableControlID: an id holding a tab or a newline is shown
// quoted, so that each hit stays one line of the table.
func TestQueryTableControlID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	in := `{"collection":{"name":"n","dim":2,"metric":"l2","index":"flat"}}
{"id":"a\tb","embedding":[1,0]}
{"id":"c\nd","embedding":[0,1]}
`
	if r := runCmd(t, in, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	r := runCmd(t, "", "query", path, "-collection", "n", "-vector", "[1,0]", "-k", "2")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], `"a\tb"`) || !strings.Contains(lines[2], `"c\nd"`) {
		t.Fatalf("query: %+v", r)
	}
}

// TestUsageLines: the usage line a bad command line prints is the one the
// command's -h prints, and no usage line ends in a space.
func TestUsageLines(t *testing.T) {
	ctx := context.Background()
	for _, c := range commands {
		var hout, herr, bout, berr bytes.Buffer
		if code := run(ctx, []string{c.name, "-h"}, strings.NewReader(""), &hout, &herr); code != exitOK {
			t.Fatalf("%s -h: status %d, %s", c.name, code, herr.String())
		}
		help, _, _ := strings.Cut(hout.String(), "\n")
		if code := run(ctx, []string{c.name, "-no-such-flag"}, strings.NewReader(""), &bout, &berr); code != exitUsage {
			t.Fatalf("%s -no-such-flag: status %d", c.name, code)
		}
		lines := strings.Split(strings.TrimSpace(berr.String()), "\n")
		if got := lines[len(lines)-1]; got != help {
			t.Errorf("%s: a bad flag prints %q, -h prints %q", c.name, got, help)
		}
		if strings.HasSuffix(help, " ") {
			t.Errorf("%s -h: usage line %q ends in a space", c.name, help)
		}
	}
	var out, errb bytes.Buffer
	run(ctx, []string{"help"}, strings.NewReader(""), &out, &errb)
	for l := range strings.Lines(out.String()) {
		if strings.HasSuffix(strings.TrimSuffix(l, "\n"), " ") {
			t.Errorf("cairn help: line %q ends in a space", l)
		}
	}
}
