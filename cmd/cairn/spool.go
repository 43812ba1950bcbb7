package main

import (
	"io"
	"os"
)

// spool is an append-only temporary file read back by offset, with a
// write buffer: what the file could not take (a full disk) stays
// readable in the buffer, so that an import can still read its undo
// records after a write to the spool has failed.
type spool struct {
	f       *os.File
	buf     []byte
	flushed int64 // bytes in f
}

// spoolBuffer is how many bytes a spool keeps before writing them out.
const spoolBuffer = 1 << 20

// append adds b. An error is the file's: b is in the spool all the
// same.
func (s *spool) append(b []byte) error {
	s.buf = append(s.buf, b...)
	if len(s.buf) < spoolBuffer {
		return nil
	}
	return s.flush()
}

// flush writes the buffer to the file, keeping what the file did not take.
func (s *spool) flush() error {
	n, err := s.f.WriteAt(s.buf, s.flushed)
	s.flushed += int64(n)
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	return err
}

// size is the number of bytes appended.
func (s *spool) size() int64 { return s.flushed + int64(len(s.buf)) }

// ReadAt reads from the file and the buffer (io.ReaderAt).
func (s *spool) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	if off < s.flushed {
		m, err := s.f.ReadAt(b[:min(int64(len(b)), s.flushed-off)], off)
		if n += m; err != nil {
			return n, err
		}
	}
	if n < len(b) {
		at := off + int64(n) - s.flushed
		if at >= int64(len(s.buf)) {
			return n, io.EOF
		}
		m := copy(b[n:], s.buf[at:])
		if n += m; n < len(b) {
			return n, io.EOF
		}
	}
	return n, nil
}
