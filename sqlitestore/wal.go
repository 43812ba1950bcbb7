package sqlitestore

// This file reads SQLite's write-ahead log without SQLite, so that Open can
// tell a database file caught mid-checkpoint (its header already counts
// pages the checkpoint had not yet copied, all of them still in the log)
// from one that lost pages for good, before SQLite is let near either.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

const (
	walHeaderSize      = 32
	walFrameHeaderSize = 24
	walMagic           = 0x377f0682 // | 1: checksums of big-endian words
	walVersion         = 3007000
)

// walState is what recovery would take from a write-ahead log: the frames
// up to its last valid commit frame.
type walState struct {
	// pages is the database size in pages after the last commit, 0 if
	// the log holds no valid commit (SQLite then ignores it).
	pages uint32
	// has reports, for each page, whether a committed frame holds it.
	has map[uint32]bool
	// headers holds the database header (page 1's first 100 bytes) of
	// each committed frame of page 1.
	headers map[[100]byte]bool
}

// readWAL parses the write-ahead log at path for a database of page size
// ps, as SQLite's recovery does (wal.c, walIndexRecover): a header with
// its magic, version, page size and checksum, then frames that count only
// while their salts match the header's and their cumulative checksums
// hold, up to the last frame that ends a commit. A missing, short or
// invalid log gives the zero walState and no error: SQLite ignores such a
// log too. Only a failure to read the file is an error.
func readWAL(path string, ps int) (walState, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return walState{}, nil
	}
	if err != nil {
		return walState{}, err
	}
	defer f.Close()
	return parseWAL(bufio.NewReaderSize(f, 1<<16), ps)
}

// parseWAL is readWAL over a stream.
func parseWAL(r io.Reader, ps int) (walState, error) {
	var h [walHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return walState{}, ignoreEOF(err)
	}
	magic := binary.BigEndian.Uint32(h[0:])
	if magic&^1 != walMagic || binary.BigEndian.Uint32(h[4:]) != walVersion ||
		int(binary.BigEndian.Uint32(h[8:])) != ps {
		return walState{}, nil
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if magic&1 != 0 {
		order = binary.BigEndian
	}
	s1, s2 := walChecksum(order, 0, 0, h[:24])
	if s1 != binary.BigEndian.Uint32(h[24:]) || s2 != binary.BigEndian.Uint32(h[28:]) {
		return walState{}, nil
	}
	var st walState
	pending := map[uint32]bool{} // pages of frames after the last commit seen
	var heads [][100]byte        // page 1's headers in those frames
	frame := make([]byte, walFrameHeaderSize+ps)
	for {
		if _, err := io.ReadFull(r, frame); err != nil {
			return st, ignoreEOF(err)
		}
		fh := frame[:walFrameHeaderSize]
		pgno, commit := binary.BigEndian.Uint32(fh[0:]), binary.BigEndian.Uint32(fh[4:])
		if pgno == 0 || !bytes.Equal(fh[8:16], h[16:24]) {
			return st, nil
		}
		s1, s2 = walChecksum(order, s1, s2, fh[:8])
		s1, s2 = walChecksum(order, s1, s2, frame[walFrameHeaderSize:])
		if s1 != binary.BigEndian.Uint32(fh[16:]) || s2 != binary.BigEndian.Uint32(fh[20:]) {
			return st, nil
		}
		pending[pgno] = true
		if pgno == 1 {
			heads = append(heads, [100]byte(frame[walFrameHeaderSize:]))
		}
		if commit != 0 {
			if st.has == nil {
				st.has, st.headers = map[uint32]bool{}, map[[100]byte]bool{}
			}
			for p := range pending {
				st.has[p] = true
			}
			for _, h := range heads {
				st.headers[h] = true
			}
			clear(pending)
			heads = heads[:0]
			st.pages = commit
		}
	}
}

// walChecksum continues SQLite's WAL checksum (s1, s2) over b, whose
// length is a multiple of 8, read as 32-bit words in order.
func walChecksum(order binary.ByteOrder, s1, s2 uint32, b []byte) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s1 += order.Uint32(b[i:]) + s2
		s2 += order.Uint32(b[i+4:]) + s1
	}
	return s1, s2
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// follows reports whether a commit of the log wrote page 1 with a change
// counter above that of the database header h, which is then older than
// that commit: in WAL mode every commit that writes page 1 writes the
// counter one above the one it read (pager_write_changecounter), and a
// log restarts only after a checkpoint has copied its page 1 into the
// file. A header from a commit the log has lost counts above all of its.
func (w walState) follows(h [100]byte) bool {
	c := binary.BigEndian.Uint32(h[24:])
	for lh := range w.headers {
		if binary.BigEndian.Uint32(lh[24:]) > c {
			return true
		}
	}
	return false
}

// covers reports whether the log holds every page from first to last
// (1-based, inclusive) in a committed frame.
func (w walState) covers(first, last int64) bool {
	for p := first; p <= last; p++ {
		if !w.has[uint32(p)] {
			return false
		}
	}
	return true
}
