package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExportImportEpoch checks that times at and before the Unix epoch
// survive import, export and import again, to the nanosecond.
func TestExportImportEpoch(t *testing.T) {
	in := `{"collection":{"name":"old","dim":2,"metric":"l2","index":"flat"}}
{"id":"epoch","embedding":[1,0],"created_at":"1970-01-01T00:00:00Z","updated_at":"1970-01-01T00:00:00Z"}
{"id":"before","embedding":[0,1],"created_at":"1969-12-31T23:59:59.999999999Z","updated_at":"1970-01-01T00:00:00.000000001Z"}
{"id":"1920","embedding":[1,1],"created_at":"1920-05-06T07:08:09.00000001Z","updated_at":"1920-05-06T07:08:09.00000001Z"}
`
	first := filepath.Join(t.TempDir(), "first.db")
	if r := runCmd(t, in, "import", "-q", first); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	out := runCmd(t, "", "export", first)
	if out.code != 0 {
		t.Fatalf("export: %+v", out)
	}
	for _, l := range strings.Split(strings.TrimSpace(in), "\n") {
		if !strings.Contains(out.stdout, l) {
			t.Errorf("export lacks %s:\n%s", l, out.stdout)
		}
	}
	second := filepath.Join(t.TempDir(), "second.db")
	if r := runCmd(t, out.stdout, "import", "-q", second); r.code != 0 {
		t.Fatalf("import of the export: %+v", r)
	}
	if again := runCmd(t, "", "export", second); again.code != 0 || again.stdout != out.stdout {
		t.Fatalf("export of the copy:\n%s\nwant:\n%s", again.stdout, out.stdout)
	}
}
