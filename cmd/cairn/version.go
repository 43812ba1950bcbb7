// version.go holds "cairn version": what this binary is built from, as
// sqlite3 --version and bbolt version say.

package main

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/cairndb/cairn/vector"
	_ "modernc.org/sqlite" // the driver cairn's files are read with; registered already
)

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	version, sqliteMod := "(unknown)", ""
	var commit, when, dirty string
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/sqlite" {
				sqliteMod = " (modernc.org/sqlite " + d.Version + ")"
			}
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = ", modified"
				}
			}
		}
	}
	fmt.Fprintf(e.stdout, "cairn %s\n", version)
	if commit != "" {
		fmt.Fprintf(e.stdout, "commit %s (%s%s)\n", commit, when, dirty)
	}
	fmt.Fprintf(e.stdout, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	sv, err := sqliteVersion(ctx)
	if err != nil {
		return fmt.Errorf("cairn version: sqlite: %w", err)
	}
	fmt.Fprintf(e.stdout, "sqlite %s%s\n", sv, sqliteMod)
	fmt.Fprintf(e.stdout, "distance kernels %s\n", vector.KernelName())
	return nil
}

// sqliteVersion asks SQLite its version, on a connection to no file.
func sqliteVersion(ctx context.Context) (string, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, "select sqlite_version()").Scan(&v)
	return v, err
}
