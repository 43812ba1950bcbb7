// run.go holds the command dispatcher, the exit statuses and the one-line
// error report every subcommand shares.

package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// Exit statuses.
const (
	exitOK    = 0 // success
	exitFail  = 1 // the command failed (or, for check, found a problem)
	exitUsage = 2 // bad command line
)

// command is one subcommand: its name, its one-line summary and its body.
type command struct {
	name, args, summary string
	run                 func(ctx context.Context, e *env, args []string) error
}

// env is what a subcommand reads and writes.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	flags          *flag.FlagSet // the subcommand's, for its -h
	synopsis       string        // its arguments, as its -h shows them
}

var commands = []command{
	{"info", "FILE [-json]", "list the collections: dimension, metric, index, items, file size, saved graph", cmdInfo},
	{"check", "FILE", "check the file (SQLite integrity, schema, rows, saved graphs) without changing it; exit 0 only if all pass", cmdCheck},
	{"export", "FILE [-collection NAME]", "write the items as JSON lines to stdout", cmdExport},
	{"import", "FILE [-collection NAME] [-batch N]", "add the JSON lines on stdin, all or nothing (with -batch, batch by batch)", cmdImport},
	{"query", "FILE -collection NAME [-tenant NAME] (-text T | -vector JSON) [-mode M] [-k 10] [-filter JSON] [-json]", "print the nearest items (by embeddings, words or both)", cmdQuery},
	{"compact", "FILE", "return free space to the file system (VACUUM)", cmdCompact},
	{"mcp", "-db FILE [-collection NAME] [-namespace NAME] -embed-url URL -embed-model MODEL", "serve the file as agent memory over MCP (stdio)", cmdMCP},
	{"version", "", "print the versions of cairn, Go and SQLite, and the distance kernels in use", cmdVersion},
}

// errUsage marks an error in the command line: the status is exitUsage.
var errUsage = errors.New("usage")

// usageError is a command-line error with its message.
func usageError(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

// errProblems is returned by check when it found a problem it has
// already reported.
var errProblems = errors.New("problems found")

// run runs the command line args and returns the exit status. It is main
// without the process: the tests call it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	e := &env{stdin: stdin, stdout: out, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-version" || name == "--version" {
		name = "version"
	}
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		usage(out)
		return written(name, out, stderr, exitOK)
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case out.err != nil:
			return written(name, out, stderr, exitFail)
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			if e.flags != nil { // help asked for: to stdout, to be paged or grepped
				e.flags.SetOutput(out)
				e.flags.Usage()
			}
			return written(name, out, stderr, exitOK)
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "cairn %s: %s\n", name, strings.TrimPrefix(err.Error(), "usage: "))
			fmt.Fprintf(stderr, "usage: %s\n", strings.TrimSpace("cairn "+c.name+" "+cmp.Or(e.synopsis, c.args)))
			return exitUsage
		case errors.Is(err, errProblems):
			return exitFail
		}
		fmt.Fprintln(stderr, oneLine(err))
		return exitFail
	}
	fmt.Fprintf(stderr, "cairn: unknown command %q (run \"cairn help\")\n", name)
	return exitUsage
}

// written returns code, or exitFail after saying so if what command
// wrote to out did not all reach its reader (a full disk, a closed
// pipe): that is no success, whatever followed.
func written(command string, out *outWriter, stderr io.Writer, code int) int {
	if out.err == nil {
		return code
	}
	fmt.Fprintf(stderr, "cairn %s: writing the output: %v\n", command, out.err)
	return exitFail
}

// outWriter is a command's standard output, which keeps the first error
// a write of it met.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "cairn is a tool for cairn database files.\n\nUsage:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n      %s\n", strings.TrimSpace("cairn "+c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w, "\nRun \"cairn COMMAND -h\" for a command's flags.")
}

// oneLine flattens err into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// fileError is an error about the database file: its message names the
// file and says why, in the words of the most telling cause.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string { return "cairn: " + e.path + ": " + e.reason() }

// errIsDir is the cause of a fileError about a directory.
var errIsDir = errors.New("is a directory")

// reason says why, once: the error's layers (the packages' prefixes, the
// operation, the path again) say nothing here, as the file is named.
func (e *fileError) reason() string {
	if fi, err := os.Stat(e.path); err == nil && fi.IsDir() {
		return errIsDir.Error() + ", not a cairn file"
	}
	switch {
	case errors.Is(e.err, sqlitestore.ErrLocked):
		return "the file is locked by another process (a cairn command, or a program that has it open); close it and retry"
	case errors.Is(e.err, os.ErrNotExist):
		return "no such file"
	case errors.Is(e.err, sqlitestore.ErrOrphanLog):
		return "no such file, but its write-ahead log (" + e.path + "-wal) is left beside it, which SQLite would take into a new file: remove it and the -shm beside it once no program uses them, or put back the database they belong to"
	case errors.Is(e.err, sqlitestore.ErrHardLinked):
		return "the file has more than one name (hard links), and SQLite keeps its log beside the name it opens: open it under one name only (remove the other links, or work on a copy)"
	}
	msg := e.err.Error()
	for _, k := range []struct {
		sentinel error
		label    string
	}{
		{sqlitestore.ErrNotDatabase, "not a cairn database"},
		{vector.ErrUnsupportedVersion, "written by a newer cairn"},
		{vector.ErrCorrupt, "the file is damaged"},
	} {
		if errors.Is(e.err, k.sentinel) {
			// The most telling cause is what follows the sentinel.
			if i := strings.LastIndex(msg, k.sentinel.Error()); i >= 0 {
				return k.label + msg[i+len(k.sentinel.Error()):]
			}
			return k.label
		}
	}
	if abs, err := filepath.Abs(e.path); err == nil {
		msg = strings.ReplaceAll(msg, "open "+abs+": ", "")
	}
	msg = strings.ReplaceAll(msg, "open "+e.path+": ", "")
	for _, prefix := range []string{"cairn: ", "sqlitestore: ", "vector: "} {
		msg = strings.ReplaceAll(msg, prefix, "")
	}
	for _, op := range []string{"inspect: ", "check: ", "open: ", "close: "} {
		msg = strings.TrimPrefix(msg, op)
	}
	// A layer may repeat what the one under it says (collection "x":
	// collection "x": not found).
	parts := strings.Split(msg, ": ")
	kept := parts[:1]
	for _, p := range parts[1:] {
		if p != kept[len(kept)-1] {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ": ")
}

func (e *fileError) Unwrap() error { return e.err }

// openDB opens the cairn file at path: to write, creating it if need be,
// if write is set; else read-only, beside its writer if it has one, and
// it must exist (so that a mistyped name is reported, not created).
func openDB(ctx context.Context, path string, write bool, o *cairn.Options) (*cairn.DB, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, &fileError{path, errIsDir}
	case err != nil && (!write || !errors.Is(err, os.ErrNotExist)):
		return nil, &fileError{path, err}
	}
	if !write {
		ro := cairn.Options{}
		if o != nil {
			ro = *o
		}
		ro.ReadOnly = true
		o = &ro
	}
	db, err := cairn.Open(ctx, path, o)
	if err != nil {
		return nil, &fileError{path, err}
	}
	return db, nil
}

// closeDB closes db and reports the first of err and the close error.
func closeDB(path string, db *cairn.DB, err error) error {
	if cerr := db.Close(); cerr != nil && err == nil {
		err = &fileError{path, cerr}
	}
	return err
}

// newFlags returns a flag set for the subcommand name that reports to e.
func newFlags(e *env, name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet("cairn "+name, flag.ContinueOnError)
	// The flag package prints an error and the usage itself; run reports
	// the error once, in one place, and the usage is printed on -h only.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", strings.TrimSpace("cairn "+name+" "+args))
		fs.PrintDefaults()
	}
	e.flags, e.synopsis = fs, args
	return fs
}

// parseFlags parses args with fs: a bad flag is a usage error; -h is
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

// parseFile parses args of the form FILE [flags] or [flags] FILE: the
// file is the one positional argument, wherever it stands.
func parseFile(fs *flag.FlagSet, args []string) (string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return "", err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) != 1 {
		return "", usageError("want one FILE, got %d arguments", len(pos))
	}
	return pos[0], nil
}
