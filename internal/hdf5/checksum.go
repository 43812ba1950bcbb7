// This file holds the checksum of version 2 and later metadata (superblock
// 2 and 3, object header 2 chunks, fixed arrays): Bob Jenkins' lookup3
// hashlittle with an initial value of 0, as HDF5 computes it.
package hdf5

import (
	"encoding/binary"
	"math/bits"
)

func lookup3(k []byte) uint32 {
	a := 0xdeadbeef + uint32(len(k))
	b, c := a, a
	for len(k) > 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a -= c
		a ^= bits.RotateLeft32(c, 4)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 6)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 8)
		b += a
		a -= c
		a ^= bits.RotateLeft32(c, 16)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 19)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 4)
		b += a
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a += binary.LittleEndian.Uint32(tail[:])
	b += binary.LittleEndian.Uint32(tail[4:])
	c += binary.LittleEndian.Uint32(tail[8:])
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}

// verify checks that the 4 bytes after b[:n] are the checksum of b[:n].
func verify(b []byte, n int, what string) error {
	if n < 0 || n+4 > len(b) {
		return corruptf("%s: truncated before its checksum", what)
	}
	if got, want := binary.LittleEndian.Uint32(b[n:]), lookup3(b[:n]); got != want {
		return corruptf("%s: checksum %#08x, want %#08x", what, got, want)
	}
	return nil
}
