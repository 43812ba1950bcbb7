package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
)

// itemLines returns n item lines of dimension 3 with the ids first, first+1, …
// (as "i<number>"); the item on line bad (1-based, 0 for none) is
// replaced by badLine.
func itemLines(first, n, bad int, badLine string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i == bad {
			b.WriteString(badLine + "\n")
			continue
		}
		k := first + i - 1
		fmt.Fprintf(&b, `{"id":"i%d","text":"item %d","embedding":[%d,1,0.5]}`+"\n", k, k, k%7+1)
	}
	return b.String()
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// fileSum returns the SHA-256 of the file at path.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// collectionCounts returns the file's collections and their item counts,
// and those of their tenants as "collection/tenant".
func collectionCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	ctx := context.Background()
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	infos, err := db.Collections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, in := range infos {
		c, err := db.Collection(ctx, in.Name)
		if err != nil {
			t.Fatal(err)
		}
		counts[in.Name] = mustCount(t, c)
		tenants, err := c.Tenants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range tenants {
			tn, err := c.Tenant(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			n, err := tn.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			counts[in.Name+"/"+name] = n
		}
	}
	return counts
}

// exportLines returns the file's export, the item lines under each header
// sorted (an undone -upsert puts back the items it replaced, and they move
// to the end of their collection's or tenant's order).
func exportLines(t *testing.T, path string) []string {
	t.Helper()
	r := runCmd(t, "", "export", path)
	if r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	start := 0
	for i := 1; i <= len(lines); i++ {
		if i == len(lines) || strings.HasPrefix(lines[i], `{"collection":`) {
			slices.Sort(lines[start+1 : i])
			start = i
		}
	}
	return lines
}

// TestImportDanglingLink imports onto a symbolic link to a file not yet
// there: the new file is made where the link points (it was refused as
// "created by another program during the import"), and read through the
// link.
func TestImportDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink("real.db", link); err != nil {
		t.Fatal(err)
	}
	stream := `{"collection":{"name":"c","dim":2,"metric":"l2","index":"flat"}}
{"id":"a","embedding":[1,0]}
`
	if r := runCmd(t, stream, "import", "-q", link); r.code != 0 {
		t.Fatalf("import onto a dangling link: %+v", r)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if r := runCmd(t, "", "export", link); r.code != 0 || !strings.Contains(r.stdout, `{"id":"a","embedding":[1,0],`) {
		t.Fatalf("export through the link: %+v", r)
	}
}

// TestImportFailureLeavesNoNewFile checks that an import into a file that
// did not exist leaves nothing behind when it fails, wherever it fails:
// no file, no -wal, -shm or -journal, no temporary file.
func TestImportFailureLeavesNoNewFile(t *testing.T) {
	srv := newEmbedServer(t)
	srv.down.Store(true)
	emb := []string{"-embed-url", srv.url(), "-embed-model", "bow", "-embed-retries", "0"}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name, stdin string
		args        []string
		ctx         context.Context
		stderr      string
	}{
		{name: "garbage", stdin: "garbage\n", stderr: "line 1: bad line"},
		{name: "bad json on line 500 of 1000", args: []string{"-collection", "bulk"},
			stdin: itemLines(0, 1000, 500, `{"id":"i499","embedding":[1,2`), stderr: "line 500: bad line"},
		{name: "bad json after a header", stdin: fixture + itemLines(0, 10, 5, "{"), stderr: "line 10: bad line"},
		{name: "bad item", args: []string{"-collection", "bulk"},
			stdin: itemLines(0, 1000, 700, `{"id":"x","embedding":[1,2]}`), stderr: "line 700:"},
		{name: "duplicate id in a later batch", args: []string{"-collection", "bulk", "-upsert=false"},
			stdin: itemLines(0, 2500, 2200, `{"id":"i5","embedding":[1,1,1]}`), stderr: "duplicate"},
		{name: "embedder down", args: append([]string{"-collection", "bulk"}, emb...),
			stdin: itemLines(0, 10, 0, "") + `{"id":"t","text":"only text"}` + "\n", stderr: "503"},
		{name: "cancelled", args: []string{"-collection", "bulk"}, ctx: cancelled,
			stdin: itemLines(0, 10, 0, ""), stderr: "canceled"},
		{name: "duplicate id in a later batch of a tenant", args: []string{"-collection", "bulk"},
			stdin: itemLines(0, 10, 0, "") + `{"collection":{"name":"x","dim":3},"tenant":"t"}` + "\n" +
				itemLines(0, 2500, 2200, `{"id":"i5","embedding":[1,1,1]}`), stderr: "duplicate"},
		{name: "tenant of an unknown collection", stdin: fixture + `{"collection":{"name":"nope","dim":3},"tenant":"t"}` + "\n",
			stderr: `line 6: tenant "t": collection "nope" is not in the file`},
		{name: "embedder down in a tenant", args: emb,
			stdin: fixture + `{"collection":{"name":"notes","dim":3},"tenant":"t"}` + "\n" + `{"id":"t","text":"only text"}` + "\n", stderr: "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "new.db")
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var out, errb strings.Builder
			code := run(ctx, append(append([]string{"import", "-q"}, tt.args...), path), strings.NewReader(tt.stdin), &out, &errb)
			if code != exitFail || !strings.Contains(errb.String(), tt.stderr) || !strings.Contains(errb.String(), "new.db:") {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errb.String(), tt.stderr)
			}
			if !strings.Contains(errb.String(), "nothing stored") {
				t.Errorf("the error does not say that nothing was stored: %q", errb.String())
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("a failed import left %q", names)
			}
		})
	}
}

// badTimes is an item a write refuses (its update before its creation),
// for a failure after earlier batches are in.
const badTimes = `{"id":"late","embedding":[1,1,1],"created_at":"2030-01-01T00:00:00Z","updated_at":"2020-01-01T00:00:00Z"}`

// TestImportUpsertRepeatedID: with -upsert, an id given twice is written
// twice, the later line winning, whether the two lines fall in one batch
// or in two. In one batch the import failed ("repeated in the batch").
func TestImportUpsertRepeatedID(t *testing.T) {
	for _, batch := range []string{"", "-batch=2", "-batch=1000"} {
		path := newFile(t)
		args := []string{"import", "-q", "-collection", "notes", "-upsert", path}
		if batch != "" {
			args = append(args, batch)
		}
		stdin := `{"id":"x","text":"first","embedding":[1,0,0]}` + "\n" + `{"id":"x","text":"second","embedding":[0,1,0]}` + "\n" +
			`{"id":"y","text":"third","embedding":[0,0,1]}` + "\n"
		if r := runCmd(t, stdin, args...); r.code != exitOK {
			t.Fatalf("%s: %+v", batch, r)
		}
		r := runCmd(t, "", "export", path)
		if r.code != exitOK || !strings.Contains(r.stdout, `{"id":"x","text":"second",`) || strings.Contains(r.stdout, `"first"`) {
			t.Errorf("%s: export:\n%s", batch, r.stdout)
		}
	}
}

// TestImportFailureLeavesFileUnchanged checks that a failed import into a
// file that holds other collections and tenants changes nothing: the same
// bytes when it failed before writing, the same collections, tenants and
// items when it had to undo what it wrote.
func TestImportFailureLeavesFileUnchanged(t *testing.T) {
	alice := `{"collection":{"name":"notes","dim":3},"tenant":"alice"}` + "\n"
	tests := []struct {
		name, stdin string
		args        []string
		sameBytes   bool // the failure comes before anything is written
		stderr      string
	}{
		{name: "bad json into a new collection", args: []string{"-collection", "bulk"}, sameBytes: true,
			stdin: itemLines(0, 1000, 500, `{"id":"i499","embedding":[1,2`), stderr: "line 500: bad line"},
		{name: "bad json into an existing collection", args: []string{"-collection", "notes"}, sameBytes: true,
			stdin: itemLines(0, 1000, 500, "not json"), stderr: "line 500: bad line"},
		{name: "headers then bad json", sameBytes: true,
			stdin: `{"collection":{"name":"h1","dim":2}}` + "\n" + `{"collection":{"name":"notes","dim":3,"metric":"cosine"}}` + "\n" + itemLines(0, 5, 3, "["), stderr: "line 5: bad line"},
		{name: "wrong dimension", args: []string{"-collection", "notes"}, sameBytes: true,
			stdin: itemLines(0, 1000, 900, `{"id":"w","embedding":[1,2,3,4]}`), stderr: "line 900:"},
		{name: "bad metadata", args: []string{"-collection", "notes"}, sameBytes: true,
			stdin: itemLines(0, 1000, 700, `{"id":"m","embedding":[1,1,1],"metadata":{"x":[1]}}`), stderr: "line 700: item \"m\":"},
		{name: "duplicate of a stored id in a later batch", args: []string{"-collection", "notes"},
			stdin: itemLines(0, 2500, 2200, `{"id":"a","embedding":[1,1,1]}`), stderr: "duplicate"},
		{name: "duplicate in a later batch of a new collection", args: []string{"-collection", "bulk"},
			stdin: itemLines(0, 2500, 2200, `{"id":"i3","embedding":[1,1,1]}`), stderr: "duplicate"},
		{name: "upsert, bad times in a later batch", args: []string{"-collection", "notes", "-upsert"},
			stdin: `{"id":"a","text":"replaced","embedding":[0,0,1]}` + "\n" + itemLines(0, 2500, 2100, badTimes), stderr: "before CreatedAt"},
		{name: "upsert replacing an embedding not of unit length", args: []string{"-collection", "notes", "-upsert"},
			stdin: `{"id":"c","text":"replaced","embedding":[0,0,1]}` + "\n" + itemLines(0, 2500, 2100, badTimes), stderr: "before CreatedAt"},
		{name: "tenant of an unknown collection", sameBytes: true,
			stdin: alice + itemLines(0, 10, 0, "") + `{"collection":{"name":"nope","dim":3},"tenant":"t"}` + "\n", stderr: `line 12: tenant "t": collection "nope" is not in the file`},
		{name: "empty tenant name", sameBytes: true,
			stdin: alice + itemLines(0, 10, 0, "") + `{"collection":{"name":"notes","dim":3},"tenant":""}` + "\n", stderr: "line 12: bad line"},
		{name: "bad json in a tenant", sameBytes: true,
			stdin: alice + itemLines(0, 1000, 500, "{"), stderr: "line 501: bad line"},
		{name: "duplicate of a stored id in a later batch of a tenant",
			stdin: alice + itemLines(0, 2500, 2200, `{"id":"z","embedding":[1,1,1]}`), stderr: "duplicate"},
		{name: "duplicate in a new tenant, after others",
			stdin: `{"collection":{"name":"h1","dim":2}}` + "\n" + `{"collection":{"name":"h1","dim":2},"tenant":"t1"}` + "\n" +
				`{"id":"p","embedding":[1,2]}` + "\n" + `{"collection":{"name":"notes","dim":3},"tenant":"bob"}` + "\n" + alice +
				itemLines(0, 1500, 0, "") + `{"collection":{"name":"notes","dim":3},"tenant":"dave"}` + "\n" +
				itemLines(0, 1500, 1200, `{"id":"i3","embedding":[1,1,1]}`), stderr: "duplicate"},
		{name: "upsert into a tenant, bad times in a later batch", args: []string{"-upsert"},
			stdin: alice + `{"id":"a","text":"replaced","embedding":[0,0,1]}` + "\n" + itemLines(0, 2500, 2100, badTimes), stderr: "before CreatedAt"},
		{name: "upsert into a tenant replacing an embedding not of unit length", args: []string{"-upsert"},
			stdin: alice + `{"id":"z","text":"replaced","embedding":[1,0,0]}` + "\n" + itemLines(0, 2500, 2100, badTimes), stderr: "before CreatedAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := newTenantFile(t)
			colls, export := collectionCounts(t, path), exportLines(t, path)
			sum := fileSum(t, path) // after the reads, which may save a graph

			r := runCmd(t, tt.stdin, append(append([]string{"import", "-q"}, tt.args...), path)...)
			if r.code != exitFail || !strings.Contains(r.stderr, tt.stderr) || !strings.Contains(r.stderr, "nothing stored") {
				t.Fatalf("exit %d, stderr %q; want 1, %q and nothing stored", r.code, r.stderr, tt.stderr)
			}
			if tt.sameBytes && fileSum(t, path) != sum {
				t.Errorf("the file changed")
			}
			if got := collectionCounts(t, path); !maps.Equal(got, colls) {
				t.Errorf("collections %v, want %v", got, colls)
			}
			if got := exportLines(t, path); !slices.Equal(got, export) {
				t.Errorf("export after the failed import:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(export, "\n"))
			}
			if names := dirNames(t, filepath.Dir(path)); !slices.Equal(names, []string{"t.db"}) {
				t.Errorf("the directory holds %q", names)
			}
		})
	}
}

// TestImportBatchesReportWhatWasStored checks that with -batch, the
// batches before a failure stay stored and the error says how many items
// that is and where to resume, and the last progress line tells the truth.
func TestImportBatchesReportWhatWasStored(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	stdin := itemLines(0, 1000, 500, `{"id":"i499","embedding":[1,2`)
	r := runCmd(t, stdin, "import", "-batch", "100", "-collection", "bulk", path)
	if r.code != exitFail {
		t.Fatalf("exit %d, want 1: %+v", r.code, r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	for _, s := range []string{"new.db:", "line 500:", "400 items stored", "line 401"} {
		if !strings.Contains(last, s) {
			t.Errorf("the error %q lacks %q", last, s)
		}
	}
	if len(lines) < 2 || !strings.Contains(lines[len(lines)-2], "400 items stored") {
		t.Errorf("the last progress line does not say 400 items stored:\n%s", r.stderr)
	}
	if got := collectionCounts(t, path); !maps.Equal(got, map[string]int{"bulk": 400}) {
		t.Errorf("the file holds %v, want bulk: 400", got)
	}
	// Resuming where the error says, with the line fixed, completes it.
	rest := strings.Split(itemLines(0, 1000, 0, ""), "\n")[400:]
	if r := runCmd(t, strings.Join(rest, "\n"), "import", "-q", "-batch", "100", "-collection", "bulk", path); r.code != 0 {
		t.Fatalf("resume: %+v", r)
	}
	if got := collectionCounts(t, path); got["bulk"] != 1000 {
		t.Errorf("after the resume the file holds %v, want bulk: 1000", got)
	}
}

// TestImportHelp checks that import -h says what a failure leaves.
func TestImportHelp(t *testing.T) {
	r := runCmd(t, "", "import", "-h")
	if r.code != 0 {
		t.Fatalf("import -h: %+v", r)
	}
	for _, s := range []string{"all or nothing", "-batch", "crash", "tenant"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("import -h lacks %q:\n%s", s, r.stdout)
		}
	}
}

// TestImportLongName imports into a new file, then into it again (staged,
// through a spool), under a name as long as a directory entry allows
// once SQLite's "-journal" is added: the temporary names beside it must
// fit too.
func TestImportLongName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("L", 247))
	stream := `{"collection":{"name":"c","dim":2,"metric":"l2","index":"flat"}}
{"id":"a","embedding":[1,0]}
`
	if r := runCmd(t, stream, "import", "-q", path); r.code != 0 {
		t.Fatalf("import into a new file: %+v", r)
	}
	stream = `{"collection":{"name":"d","dim":2,"metric":"l2","index":"flat"}}
{"id":"b","embedding":[0,1]}
`
	if r := runCmd(t, stream, "import", "-q", path); r.code != 0 {
		t.Fatalf("import into it again: %+v", r)
	}
	if got := exportLines(t, path); len(got) != 4 {
		t.Fatalf("export: %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left beside it: %q", left)
	}
}

// TestImportOrphanLog imports into a missing file beside which the
// write-ahead log of a deleted database was left: the import, which makes
// its file under another name, refuses as Open does, making nothing.
func TestImportOrphanLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.cairn")
	db, err := cairn.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(context.Background(), "c", cairn.CollectionConfig{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(context.Background(), cairn.Item{ID: "x", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(path + "-wal") // as a crash would leave it
	if err != nil || len(log) == 0 {
		t.Fatalf("no log: %d bytes, %v", len(log), err)
	}
	db.Close()
	os.Remove(path)
	if err := os.WriteFile(path+"-wal", log, 0o644); err != nil {
		t.Fatal(err)
	}
	stream := `{"collection":{"name":"d","dim":2,"metric":"l2","index":"flat"}}
{"id":"a","embedding":[1,0]}
`
	r := runCmd(t, stream, "import", "-q", path)
	if r.code == 0 || !strings.Contains(r.stderr, "write-ahead log") {
		t.Fatalf("import beside an orphan log: %+v", r)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused import made the file: %v", err)
	}
}
