// Command cairn inspects, checks, exports, imports, queries and compacts
// cairn database files, and serves one as agent memory over the Model
// Context Protocol (cairn mcp). Run "cairn help" for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// main only parses the process's arguments and exits with run's status, so
// that the tests call run directly (as bbolt's cmd/bbolt does).
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
