//go:build unix

package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenNotRegular opens a named pipe and a device, writable and
// read-only: each is refused as no cairn database, at once (an open of
// the pipe would otherwise wait for a writer, for good).
func TestOpenNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.cairn")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/null"} {
		for _, ro := range []bool{false, true} {
			done := make(chan error, 1)
			go func() {
				db, err := Open(context.Background(), path, &Options{ReadOnly: ro})
				if err == nil {
					db.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotDatabase) {
					t.Errorf("Open(%s, read-only %v) = %v, want ErrNotDatabase", path, ro, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("Open(%s, read-only %v) still blocked after a minute", path, ro)
			}
		}
	}
}
