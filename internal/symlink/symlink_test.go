package symlink

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTarget(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(at("file"), nil, 0o644)
	os.Mkdir(at("sub"), 0o755)
	for _, l := range [][2]string{
		{"sub/missing", "dangling"}, // relative, through a directory
		{"dangling", "two"},         // a chain
		{at("file"), "abs"},         // absolute, to a file
		{"loop1", "loop2"}, {"loop2", "loop1"},
	} {
		if err := os.Symlink(l[0], at(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"file":     at("file"),
		"none":     at("none"),
		"dangling": at("sub/missing"),
		"two":      at("sub/missing"),
		"abs":      at("file"),
	} {
		if got, err := Target(at(name)); err != nil || got != want {
			t.Errorf("Target(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := Target(at("loop1")); !errors.Is(err, ErrLoop) {
		t.Errorf("a loop: %v, want ErrLoop", err)
	}
}
