package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestVersion(t *testing.T) {
	want := []string{"cairn ", runtime.Version() + " " + runtime.GOOS, "\nsqlite 3.", "(modernc.org/sqlite v", "distance kernels " + vector.KernelName() + "\n"}
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		r := runCmd(t, "", args...)
		if r.code != exitOK || r.stderr != "" {
			t.Errorf("%v: %+v", args, r)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: %q lacks %q", args, r.stdout, w)
			}
		}
	}
	for _, args := range [][]string{{"version", "extra"}, {"version", "-x"}} {
		if r := runCmd(t, "", args...); r.code != exitUsage || !strings.Contains(r.stderr, "usage") {
			t.Errorf("%v: %+v, want exit %d and the usage", args, r, exitUsage)
		}
	}
}
