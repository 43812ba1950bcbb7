package hdf5_test

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds arbitrary bytes to the reader: it must never panic, and
// every error must wrap one of its sentinels.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"tiny-earliest.hdf5", "tiny-latest.hdf5", "unsupported.hdf5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := readAll(b); err != nil && !typed(err) {
			t.Fatalf("untyped error: %v", err)
		}
	})
}
