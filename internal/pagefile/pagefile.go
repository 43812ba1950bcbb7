// Package pagefile backs large arrays with a temporary file mapped into
// memory, so that the kernel pages them in and out as they are read
// instead of keeping them resident. An array a query reads rarely (the
// float32 vectors behind an index's int8 codes, read only to rescore a
// query's finalists) then costs page cache, which the kernel reclaims
// under memory pressure, rather than the process's own memory.
//
// The file is unlinked from the start, so nothing is left behind when the
// process ends, however it ends; its disk space is freed when the File is
// closed. Its blocks are reserved as it grows (fallocate), so that a full
// disk is an error from Float32s rather than a fault on a later write.
// It is a cache, never synced for durability.
//
// Only Linux is supported; elsewhere [Create] returns an error wrapping
// [errors.ErrUnsupported].
//
// A File is safe for concurrent use.
package pagefile
