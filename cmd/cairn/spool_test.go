package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSpoolReadsBack appends lines to a spool, across the buffer's size,
// and reads every range back, from the file and the buffer; where the
// file takes nothing (a full disk, here a descriptor opened read-only),
// append says so and what it was given stays readable.
func TestSpoolReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, writable := range []bool{true, false} {
		flag := os.O_RDWR
		if !writable {
			flag = os.O_RDONLY
		}
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := &spool{f: f}
		var want bytes.Buffer
		failed := false
		for i := 0; want.Len() < 3*spoolBuffer; i++ {
			line := fmt.Appendf(nil, "%d %s\n", i, bytes.Repeat([]byte{'x'}, i%5000))
			want.Write(line)
			if err := s.append(line); err != nil {
				failed = true
			}
		}
		if failed == writable {
			t.Errorf("writable %v: an append failed: %v", writable, failed)
		}
		if s.size() != int64(want.Len()) {
			t.Fatalf("writable %v: size %d, want %d", writable, s.size(), want.Len())
		}
		got, err := io.ReadAll(io.NewSectionReader(s, 0, s.size()))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("writable %v: read back %d bytes (%v), want %d equal", writable, len(got), err, want.Len())
		}
		for _, off := range []int64{0, s.flushed - 7, s.flushed, s.size() - 3} {
			if off < 0 {
				continue
			}
			b := make([]byte, 10)
			n, err := s.ReadAt(b, off)
			end := min(off+10, s.size())
			if !bytes.Equal(b[:n], want.Bytes()[off:end]) || (n < 10) != (err == io.EOF) {
				t.Errorf("writable %v: ReadAt(10, %d) = %d, %v", writable, off, n, err)
			}
		}
		f.Close()
	}
}
