package main

import (
	"context"
	"os"
	"os/signal"
)

// main is "parse, run, exit": everything else is in run, which the tests
// call.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
