// Command vecbench measures cairn's indexes: recall, latency, throughput,
// build time and memory, on generated or user data. See doc.go, or run
// vecbench --help.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
