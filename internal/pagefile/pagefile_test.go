package pagefile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, err := Create(t.TempDir()); !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("Create on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	dir := t.TempDir()
	p, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the file is not unlinked: %d entries in its directory", len(ents))
	}
	var arrays [][]float32
	for _, n := range []int{1, 1000, 5000, 1 << 16} {
		a, err := p.Float32s(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != n {
			t.Fatalf("len %d, want %d", len(a), n)
		}
		for i := range a {
			if a[i] != 0 {
				t.Fatalf("new array not zeroed at %d", i)
			}
			a[i] = float32(n) + float32(i)
		}
		arrays = append(arrays, a)
	}
	if err := p.PageOut(); err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		n := len(a)
		for i := range a {
			if a[i] != float32(n)+float32(i) {
				t.Fatalf("after PageOut, array of %d at %d: %v", n, i, a[i])
			}
		}
	}
	page := int64(os.Getpagesize())
	if got, min := p.Size(), int64(4*(1+1000+5000+1<<16)); got < min || got%page != 0 {
		t.Fatalf("Size %d, want a multiple of %d ≥ %d", got, page, min)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		for i := range a {
			if a[i] != 0 {
				t.Fatalf("after Release, array of %d at %d: %v", len(a), i, a[i])
			}
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := p.Float32s(1); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Float32s after Close: %v", err)
	}
	if err := p.PageOut(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("PageOut after Close: %v", err)
	}
}

func TestCreateBadDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		return
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(dir, "missing"), file} {
		if p, err := Create(d); err == nil {
			p.Close()
			t.Fatalf("Create(%s) succeeded", d)
		}
	}
}
