package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
)

// tenantFixture is a stream of two collections with tenants, as export
// writes it: the tenants of each collection after its own items, sorted,
// one of them empty, items with metadata, times and expiry, and
// embeddings not of unit length in tenants of a cosine collection
// (exported as written).
const tenantFixture = `{"collection":{"name":"mem","dim":3,"metric":"cosine","index":"flat","history":{"versions":3}}}
{"id":"own","text":"the collection's own","embedding":[1,0,0],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}
{"collection":{"name":"mem","dim":3,"metric":"cosine","index":"flat","history":{"versions":3}},"tenant":"alice"}
{"id":"m1","text":"alice likes tea","metadata":{"n":9007199254740991,"topic":"drink"},"embedding":[0,1,0],"created_at":"2026-01-02T03:04:05.123456789Z","updated_at":"2026-01-03T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"}
{"id":"own","text":"alice's own, not the collection's","embedding":[0,3,4],"created_at":"2026-01-02T00:00:00Z","updated_at":"2026-01-02T00:00:00Z"}
{"collection":{"name":"mem","dim":3,"metric":"cosine","index":"flat","history":{"versions":3}},"tenant":"bob"}
{"id":"m1","text":"bob likes coffee","metadata":{"topic":"drink"},"embedding":[1,2,0],"created_at":"2026-01-04T00:00:00Z","updated_at":"2026-01-04T00:00:00Z"}
{"collection":{"name":"mem","dim":3,"metric":"cosine","index":"flat","history":{"versions":3}},"tenant":"carol"}
{"collection":{"name":"other","dim":2,"metric":"l2","index":"hnsw","hnsw":{"m":8},"ttl":"1h0m0s"}}
{"collection":{"name":"other","dim":2,"metric":"l2","index":"hnsw","hnsw":{"m":8},"ttl":"1h0m0s"},"tenant":"s 1/ü"}
{"id":"x","embedding":[1,2],"created_at":"2026-01-05T00:00:00Z","updated_at":"2026-01-05T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"}
`

// notesTenants adds tenants to fixture's collection notes: alice with two
// items, bob with none.
const notesTenants = `{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"},"tenant":"alice"}
{"id":"a","text":"alice's a","embedding":[0,0,1]}
{"id":"z","text":"alice's z","metadata":{"kind":"fact"},"embedding":[0,1,1]}
{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"},"tenant":"bob"}
`

// newTenantFile returns the path of a new file holding fixture and
// notesTenants.
func newTenantFile(t *testing.T) string {
	t.Helper()
	path := newFile(t)
	if r := runCmd(t, notesTenants, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	return path
}

// TestImportTenantsRoundTrip checks that export | import | export gives
// back the same bytes for a file with tenants, in each of import's modes.
func TestImportTenantsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, tenantFixture, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	first := runCmd(t, "", "export", path)
	if first.code != 0 || first.stdout != tenantFixture {
		t.Fatalf("export: %+v\nwant:\n%s", first, tenantFixture)
	}
	want := map[string]int{"mem": 1, "mem/alice": 2, "mem/bob": 1, "mem/carol": 0, "other": 0, "other/s 1/ü": 1}
	if got := collectionCounts(t, path); !maps.Equal(got, want) {
		t.Errorf("the file holds %v, want %v", got, want)
	}
	for _, mode := range []struct {
		name string
		args []string
		file bool // the file exists before the import
	}{
		{name: "fresh"},
		{name: "staged", file: true},
		{name: "batched", args: []string{"-batch", "1"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			copyPath := filepath.Join(t.TempDir(), "copy.db")
			if mode.file {
				if r := runCmd(t, "", "import", "-q", copyPath); r.code != 0 {
					t.Fatalf("import of nothing: %+v", r)
				}
			}
			r := runCmd(t, first.stdout, append(append([]string{"import"}, mode.args...), copyPath)...)
			if r.code != 0 || !strings.Contains(r.stderr, "imported 5 items") {
				t.Fatalf("import: %+v", r)
			}
			if second := runCmd(t, "", "export", copyPath); second.code != 0 || second.stdout != first.stdout {
				t.Fatalf("export of the copy: %+v\nwant:\n%s", second, first.stdout)
			}
		})
	}
}

// TestImportTenantErrors checks the errors of a stream whose tenant
// headers do not fit: each fails before anything is written, and a new
// file is left out.
func TestImportTenantErrors(t *testing.T) {
	notes := `{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"}}` + "\n"
	tests := []struct {
		name, stdin string
		args        []string
		stderr      string
	}{
		{name: "tenant of an unknown collection", stdin: `{"collection":{"name":"mem","dim":2},"tenant":"bob"}` + "\n",
			stderr: `line 1: tenant "bob": collection "mem" is not in the file, and no header before starts it`},
		{name: "tenant before its collection", stdin: `{"collection":{"name":"notes","dim":3},"tenant":"bob"}` + "\n" + notes,
			stderr: `line 1: tenant "bob": collection "notes" is not in the file`},
		{name: "empty tenant name", stdin: notes + `{"collection":{"name":"notes","dim":3},"tenant":""}` + "\n",
			stderr: `line 2: bad line: collection "notes": empty tenant name`},
		{name: "item with a tenant", stdin: notes + `{"id":"x","tenant":"bob","embedding":[1,0,0]}` + "\n",
			stderr: `line 2: bad line: item "x" has a tenant`},
		{name: "tenant header of another dimension", stdin: notes + `{"collection":{"name":"notes","dim":4},"tenant":"bob"}` + "\n",
			stderr: `line 2: collection "notes" exists with dim 3, cosine; the stream has dim 4`},
		{name: "tenants of two collections renamed", args: []string{"-collection", "one"},
			stdin:  notes + `{"collection":{"name":"other","dim":3},"tenant":"bob"}` + "\n",
			stderr: "line 2: -collection renames one collection, and the stream holds more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			r := runCmd(t, tt.stdin, append(append([]string{"import", "-q"}, tt.args...), path)...)
			if r.code != exitFail || !strings.Contains(r.stderr, tt.stderr) || !strings.Contains(r.stderr, "nothing stored") {
				t.Fatalf("exit %d, stderr %q; want 1, %q and nothing stored", r.code, r.stderr, tt.stderr)
			}
			if names := dirNames(t, filepath.Dir(path)); len(names) != 0 {
				t.Errorf("the failed import left %q", names)
			}
		})
	}
}

// TestImportTenantRenamed checks that -collection takes a collection's
// tenants with it.
func TestImportTenantRenamed(t *testing.T) {
	stream := tenantFixture[:strings.Index(tenantFixture, `{"collection":{"name":"other"`)]
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, stream, "import", "-q", "-collection", "copy", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	want := map[string]int{"copy": 1, "copy/alice": 2, "copy/bob": 1, "copy/carol": 0}
	if got := collectionCounts(t, path); !maps.Equal(got, want) {
		t.Errorf("the file holds %v, want %v", got, want)
	}
}

// TestImportUpsertTenant checks that -upsert into a tenant the file holds
// replaces its items, and only its.
func TestImportUpsertTenant(t *testing.T) {
	path := newTenantFile(t)
	stdin := `{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"},"tenant":"alice"}
{"id":"a","text":"replaced","embedding":[1,1,1]}
{"id":"new","embedding":[1,0,1]}
`
	if r := runCmd(t, stdin, "import", "-q", path); r.code != exitFail || !strings.Contains(r.stderr, `add "a": duplicate id`) {
		t.Fatalf("import without -upsert: %+v", r)
	}
	if r := runCmd(t, stdin, "import", "-q", "-upsert", path); r.code != 0 {
		t.Fatalf("import -upsert: %+v", r)
	}
	want := map[string]int{"notes": 3, "notes/alice": 3, "notes/bob": 0, "empty": 0}
	if got := collectionCounts(t, path); !maps.Equal(got, want) {
		t.Errorf("the file holds %v, want %v", got, want)
	}
	ctx := t.Context()
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	tn, err := c.Tenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if its, err := tn.Get(ctx, "a"); err != nil || its[0].Text != "replaced" {
		t.Errorf("alice's a: %+v, %v; want it replaced", its, err)
	}
	if its, err := c.Get(ctx, "a"); err != nil || its[0].Text != "alpha" {
		t.Errorf("notes' own a: %+v, %v; want it as it was", its, err)
	}
}

// TestImportTenantBatches checks that with -batch, a failure in a tenant
// keeps the batches before it, and the line to rerun from, with the
// tenant's header, finishes the import.
func TestImportTenantBatches(t *testing.T) {
	head := `{"collection":{"name":"mem","dim":3,"metric":"cosine","index":"flat"}}` + "\n" + itemLines(0, 5, 0, "") +
		`{"collection":{"name":"mem","dim":3,"metric":"cosine","index":"flat"},"tenant":"alice"}` + "\n"
	// Line 7 is alice's header, her item k on line 7+k; item 450 repeats
	// her i5 (the collection's own i5 is another item's id, no clash).
	stdin := head + itemLines(0, 1000, 450, `{"id":"i5","embedding":[1,1,1]}`)
	path := filepath.Join(t.TempDir(), "new.db")
	r := runCmd(t, stdin, "import", "-batch", "100", path)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	for _, s := range []string{"new.db:", "lines 408-507:", `"i5": duplicate id`, "405 items stored",
		"rerun with line 7 and the lines from line 408 on", "sed -n '7p;408,$p'"} {
		if r.code != exitFail || !strings.Contains(last, s) {
			t.Errorf("exit %d, error %q; want 1 and %q", r.code, last, s)
		}
	}
	if got, want := collectionCounts(t, path), map[string]int{"mem": 5, "mem/alice": 400}; !maps.Equal(got, want) {
		t.Errorf("the file holds %v, want %v", got, want)
	}
	// The rerun the error gives, with the line fixed, finishes it.
	fixed := strings.Split(head+itemLines(0, 1000, 0, ""), "\n")
	rest := fixed[6] + "\n" + strings.Join(fixed[407:], "\n")
	if r := runCmd(t, rest, "import", "-q", "-batch", "100", path); r.code != 0 {
		t.Fatalf("rerun: %+v", r)
	}
	if got, want := collectionCounts(t, path), map[string]int{"mem": 5, "mem/alice": 1000}; !maps.Equal(got, want) {
		t.Errorf("after the rerun the file holds %v, want %v", got, want)
	}
}

// TestImportTenantEmbeds checks that import embeds a tenant's items given
// only as text, as it does a collection's.
func TestImportTenantEmbeds(t *testing.T) {
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "t.db")
	stdin := fmt.Sprintf(`{"collection":{"name":"docs","dim":%d,"metric":"cosine","index":"flat"}}
{"collection":{"name":"docs","dim":%d,"metric":"cosine","index":"flat"},"tenant":"u1"}
{"id":"cat","text":"the cat sat on the mat"}
{"id":"go","text":"Go has goroutines and channels"}
`, testDim, testDim)
	emb := []string{"-embed-url", srv.url(), "-embed-model", "bow"}
	if r := runCmd(t, stdin, append([]string{"import", "-q", path}, emb...)...); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	ctx := t.Context()
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	tn, err := c.Tenant(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := tn.Query(ctx, bagOfWords("goroutines and channels"), 1, nil)
	if err != nil || len(res) != 1 || res[0].ID != "go" {
		t.Fatalf("query of u1: %+v, %v; want go", res, err)
	}
	if n := mustCount(t, c); n != 0 {
		t.Errorf("the collection holds %d items of its own, want 0", n)
	}
}

// cancelReader reads r a line at a time, and calls cancel once it has
// read past the byte at.
type cancelReader struct {
	r      *strings.Reader
	at     int64
	read   int64
	cancel context.CancelFunc
}

func (c *cancelReader) Read(p []byte) (int, error) {
	if c.read > c.at {
		c.cancel()
	}
	s := c.r
	var n int
	for n < len(p) {
		b, err := s.ReadByte()
		if err == io.EOF {
			break
		}
		p[n] = b
		n++
		if b == '\n' {
			break
		}
	}
	c.read += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestImportTenantInterrupted checks what an interrupt in the middle of a
// tenant leaves, in each mode: no file, the file as it was, or the
// batches before it.
func TestImportTenantInterrupted(t *testing.T) {
	stdin := `{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"},"tenant":"alice"}` + "\n" +
		itemLines(0, 500, 0, "") +
		`{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"},"tenant":"dave"}` + "\n" +
		itemLines(0, 500, 0, "")
	at := int64(strings.Index(stdin, `"tenant":"dave"`) + 2000)
	tests := []struct {
		name   string
		args   []string
		file   bool   // import into newTenantFile's file
		stored string // what the error says was stored
	}{
		{name: "fresh", args: []string{"-collection", "notes"}, stored: "nothing stored"},
		{name: "staged", file: true, stored: "nothing stored"},
		{name: "batched", file: true, args: []string{"-batch", "100"},
			stored: "500 items stored before it; fix it and rerun with line 1 and the lines from line 502 on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			in := stdin
			if tt.file {
				path = newTenantFile(t)
			} else { // a new file: the collection comes first
				in = `{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"flat"}}` + "\n" + stdin
			}
			var colls map[string]int
			var export []string
			var sum [32]byte
			if tt.file {
				colls, export, sum = collectionCounts(t, path), exportLines(t, path), fileSum(t, path)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &cancelReader{r: strings.NewReader(in), at: at, cancel: cancel}
			var out, errb strings.Builder
			code := run(ctx, append(append([]string{"import", "-q"}, tt.args...), path), r, &out, &errb)
			if code != exitFail || !strings.Contains(errb.String(), "canceled") || !strings.Contains(errb.String(), tt.stored) {
				t.Fatalf("exit %d, stderr %q; want 1, canceled and %q", code, errb.String(), tt.stored)
			}
			switch tt.name {
			case "fresh":
				if names := dirNames(t, filepath.Dir(path)); len(names) != 0 {
					t.Errorf("the interrupted import left %q", names)
				}
			case "staged":
				if fileSum(t, path) != sum {
					t.Errorf("the file changed")
				}
				if got := exportLines(t, path); !slices.Equal(got, export) {
					t.Errorf("export after the interrupt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(export, "\n"))
				}
			case "batched":
				colls["notes/alice"] += 500
				colls["notes/dave"] = 0 // created; interrupted before its first batch
				if got := collectionCounts(t, path); !maps.Equal(got, colls) {
					t.Errorf("the file holds %v, want %v", got, colls)
				}
			}
		})
	}
}

// TestInfoCountsTenants checks that info shows each collection's tenants
// and the items they hold, which its own item count leaves out.
func TestInfoCountsTenants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, tenantFixture, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	r := runCmd(t, "", "info", path)
	if r.code != 0 || !strings.Contains(r.stdout, "TENANTS") || !strings.Contains(r.stdout, "3 (3 items)") || !strings.Contains(r.stdout, "1 (1 items)") {
		t.Errorf("info: %+v", r)
	}
	r = runCmd(t, "", "info", "-json", path)
	if r.code != 0 || !strings.Contains(r.stdout, `"tenants": 3,`) || !strings.Contains(r.stdout, `"tenant_items": 3`) {
		t.Errorf("info -json: %+v", r)
	}
}

// TestQueryTenant searches a tenant from the command line: its items,
// not the collection's own nor another tenant's; a tenant that does not
// exist is an error.
func TestQueryTenant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, tenantFixture, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	r := runCmd(t, "", "query", path, "-collection", "mem", "-tenant", "alice", "-vector", "[0,1,0]", "-k", "5", "-json")
	if r.code != 0 || !strings.Contains(r.stdout, "alice likes tea") || !strings.Contains(r.stdout, "alice's own") ||
		strings.Contains(r.stdout, "bob") || strings.Contains(r.stdout, "the collection's own") {
		t.Errorf("query of tenant alice: %+v", r)
	}
	if r := runCmd(t, "", "query", path, "-collection", "mem", "-tenant", "nobody", "-vector", "[0,1,0]"); r.code != exitFail || !strings.Contains(r.stderr, "not found") {
		t.Errorf("query of a tenant that does not exist: %+v", r)
	}
}
