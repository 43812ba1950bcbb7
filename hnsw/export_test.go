package hnsw

import "hash/crc32"

// Crc32c exposes the checksum of the encoding to the fuzz test.
func Crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
