// check.go holds "cairn check" and "cairn compact", the commands that
// look after the file itself.

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cairndb/cairn"
)

func cmdCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "check", "FILE")
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return &fileError{path, err}
	}
	rep, err := cairn.Check(ctx, path, nil)
	if err != nil {
		return &fileError{path, err}
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(e.stdout, "%s: %s\n", path, p)
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(e.stderr, "cairn: %s: check failed: %d problems\n", path, len(rep.Problems))
		return errProblems
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d collections, %d tenants, %d items, %d kept versions, %d saved graphs verified)\n", path, rep.Collections, rep.Tenants, rep.Items, rep.Versions, rep.Graphs)
	return nil
}

func cmdCompact(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compact", "FILE")
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	before, err := os.Stat(path)
	if err != nil {
		return &fileError{path, err}
	}
	if err := cairn.Compact(ctx, path, nil); err != nil {
		return &fileError{path, err}
	}
	after, err := os.Stat(path)
	if err != nil {
		return &fileError{path, err}
	}
	fmt.Fprintf(e.stdout, "%s: %s → %s\n", path, humanBytes(before.Size()), humanBytes(after.Size()))
	return nil
}
