package powerfail

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
)

// sector is the unit a torn write keeps or loses.
const sector = 512

// Op is one record of a log.
type Op struct {
	Kind byte // 'W' write, 'T' truncate, 'S' fsync
	File int  // MainDB or WAL
	Off  int64
	Data []byte
}

// ReadLog reads the records of the log at path. A record cut short by the
// kill is dropped.
func ReadLog(path string) ([]Op, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ops []Op
	for len(b) >= 14 {
		n := int(binary.LittleEndian.Uint32(b[10:]))
		if len(b) < 14+n {
			break
		}
		o := Op{Kind: b[0], File: int(b[1]), Off: int64(binary.LittleEndian.Uint64(b[2:])), Data: b[14 : 14+n]}
		if o.Kind != opWrite && o.Kind != opSync && o.Kind != opTruncate || o.File > WAL {
			return nil, fmt.Errorf("powerfail: bad record %q in %s", o.Kind, path)
		}
		ops = append(ops, o)
		b = b[14+n:]
	}
	return ops, nil
}

// Mode says what a power cut does to the writes no fsync covered.
type Mode int

const (
	// LoseAll loses every unsynced write and truncation.
	LoseAll Mode = iota
	// Prefix keeps the unsynced operations of each file up to a random
	// point, in order, the last one torn at a sector boundary: a disk that
	// writes back in order.
	Prefix
	// Scatter keeps each unsynced sector (and truncation) or not, at
	// random: a disk that reorders.
	Scatter
)

func (m Mode) String() string {
	return [...]string{"lose-all", "prefix", "scatter"}[m]
}

// Image returns the database file and write-ahead log a power cut at the
// end of ops could leave, starting from base (their contents before the
// first op): every operation on a file up to its last fsync, and of the
// ones after it what mode says.
func Image(base [2][]byte, ops []Op, mode Mode, r *rand.Rand) [2][]byte {
	var lastSync [2]int
	lastSync[0], lastSync[1] = -1, -1
	for i, o := range ops {
		if o.Kind == opSync {
			lastSync[o.File] = i
		}
	}
	var out [2][]byte
	for f := range out {
		out[f] = append([]byte(nil), base[f]...)
	}
	var cut [2]int // Prefix: index of the first unsynced op left out
	for f := range cut {
		n := 0
		for i := lastSync[f] + 1; i < len(ops); i++ {
			if ops[i].File == f && ops[i].Kind != opSync {
				n++
			}
		}
		cut[f] = r.IntN(n + 1)
	}
	var seen [2]int
	for i, o := range ops {
		if o.Kind == opSync {
			continue
		}
		f := o.File
		if i <= lastSync[f] {
			out[f] = apply(out[f], o, nil)
			continue
		}
		k := seen[f]
		seen[f]++
		switch mode {
		case LoseAll:
		case Prefix:
			switch {
			case k < cut[f]:
				out[f] = apply(out[f], o, nil)
			case k == cut[f] && o.Kind == opWrite:
				keep := r.IntN(sectors(o) + 1) // the first keep sectors
				out[f] = apply(out[f], o, func(s int) bool { return s < keep })
			}
		case Scatter:
			if o.Kind == opTruncate {
				if r.IntN(2) == 0 {
					out[f] = apply(out[f], o, nil)
				}
				continue
			}
			out[f] = apply(out[f], o, func(int) bool { return r.IntN(2) == 0 })
		}
	}
	return out
}

func sectors(o Op) int { return (len(o.Data) + sector - 1) / sector }

// apply performs o on b; keep, if not nil, says which sectors of a write
// reach the file.
func apply(b []byte, o Op, keep func(int) bool) []byte {
	if o.Kind == opTruncate {
		if o.Off < int64(len(b)) {
			return b[:o.Off]
		}
		return append(b, make([]byte, o.Off-int64(len(b)))...)
	}
	for s := range sectors(o) {
		if keep != nil && !keep(s) {
			continue
		}
		lo := s * sector
		hi := min(lo+sector, len(o.Data))
		end := o.Off + int64(hi)
		if end > int64(len(b)) {
			b = append(b, make([]byte, end-int64(len(b)))...)
		}
		copy(b[o.Off+int64(lo):], o.Data[lo:hi])
	}
	return b
}
