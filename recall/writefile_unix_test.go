//go:build unix

package recall_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/recall"
)

// TestWriteFileTargets checks where WriteFile writes: through a symbolic
// link (it replaced the link with a file), into a pipe in place (it
// replaced the pipe, as it did /dev/stdout), and with the mode a file
// os.Create makes, or the mode of the file it replaces (it gave 0600).
func TestWriteFileTargets(t *testing.T) {
	dir := t.TempDir()
	hello := func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }

	fresh := filepath.Join(dir, "fresh")
	if err := recall.WriteFile(fresh, hello); err != nil {
		t.Fatal(err)
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o666&^os.FileMode(umask) {
		t.Errorf("a new file: %v, %v; want mode %v", fi.Mode(), err, 0o666&^os.FileMode(umask))
	}
	if err := os.Chmod(fresh, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := recall.WriteFile(fresh, hello); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("a replaced file: %v, %v; want mode 0640", fi.Mode(), err)
	}

	link := filepath.Join(dir, "link")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	for range 2 { // dangling, then not
		if err := recall.WriteFile(link, hello); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "target")); err != nil || string(b) != "hello" {
			t.Fatalf("the link's target holds %q, %v", b, err)
		}
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := recall.WriteFile(fifo, hello); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "hello" {
		t.Errorf("the pipe's reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
}
