// Package powerfail simulates power failures under SQLite. [Register]
// installs a VFS that forwards every call to SQLite's default (unix) VFS
// and records, in a log file, each write, truncation and fsync of the
// database file and its write-ahead log. After the process is killed, the
// log says which writes an fsync had made durable and which were still in
// the page cache; [Image] rebuilds the files as a power cut could have
// left them: every synced write there, the unsynced ones lost, kept, or
// torn at sector boundaries.
//
// It is for tests and cmd/torture only. The VFS is process-wide, and one
// process records one database at a time.
package powerfail

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// VFSName is the name Register installs the VFS under.
const VFSName = "cairn-powerfail"

// The files a log tells apart.
const (
	MainDB = 0 // the database file
	WAL    = 1 // its write-ahead log
)

// Record kinds.
const (
	opWrite    = 'W'
	opSync     = 'S'
	opTruncate = 'T'
)

var (
	mu      sync.Mutex
	logFile *os.File
	files   = map[uintptr]int{}     // open sqlite3_file → MainDB or WAL
	origVFS uintptr                 // SQLite's default VFS
	methods = map[uintptr]uintptr{} // original methods table → ours
	origOf  = map[uintptr]uintptr{} // our methods table → the original
	done    bool
)

// Register installs the recording VFS (once per process) and sends its
// records to a new log file at logPath. Open databases through it with the
// SQLite URI parameter vfs=VFSName.
func Register(logPath string) error {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if logFile != nil {
		logFile.Close()
	}
	logFile = f
	if done {
		return nil
	}
	tls := libc.NewTLS()
	origVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
	if origVFS == 0 {
		return fmt.Errorf("powerfail: no default VFS")
	}
	// SQLite's tables live in C memory, as SQLite does pointer arithmetic
	// on them that the race detector's checkptr refuses on Go memory.
	p := libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	shim := (*sqlite3.Tsqlite3_vfs)(ptr(p))
	*shim = *(*sqlite3.Tsqlite3_vfs)(ptr(origVFS))
	name, err := libc.CString(VFSName)
	if err != nil {
		return err
	}
	shim.FzName = name
	shim.FpNext = 0
	*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&shim.FxOpen)) = vfsOpen
	*(*func(*libc.TLS, uintptr, uintptr, int32) int32)(unsafe.Pointer(&shim.FxDelete)) = vfsDelete
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("powerfail: register VFS: code %d", rc)
	}
	done = true
	return nil
}

func vfsOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	orig := (*sqlite3.Tsqlite3_vfs)(ptr(origVFS))
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{orig.FxOpen})))(tls, origVFS, zName, pFile, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	kind := -1
	switch {
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		kind = MainDB
	case flags&sqlite3.SQLITE_OPEN_WAL != 0:
		kind = WAL
	}
	file := (*sqlite3.Tsqlite3_file)(ptr(pFile))
	if kind < 0 || file.FpMethods == 0 {
		return rc // temporary files, journals: not recorded
	}
	mu.Lock()
	defer mu.Unlock()
	files[pFile] = kind
	p, ok := methods[file.FpMethods]
	if !ok {
		p = libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
		m := (*sqlite3.Tsqlite3_io_methods)(ptr(p))
		*m = *(*sqlite3.Tsqlite3_io_methods)(ptr(file.FpMethods))
		*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&m.FxWrite)) = fileWrite
		*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&m.FxTruncate)) = fileTruncate
		*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&m.FxSync)) = fileSync
		*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxClose)) = fileClose
		methods[file.FpMethods] = p
		origOf[p] = file.FpMethods
	}
	file.FpMethods = p
	return rc
}

// vfsDelete records the deletion of a write-ahead log as its truncation:
// until the directory is synced, a power cut may bring the file back.
func vfsDelete(tls *libc.TLS, pVfs, zName uintptr, syncDir int32) int32 {
	if strings.HasSuffix(libc.GoString(zName), "-wal") {
		record(opTruncate, WAL, 0, nil)
	}
	orig := (*sqlite3.Tsqlite3_vfs)(ptr(origVFS))
	return (*(*func(*libc.TLS, uintptr, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{orig.FxDelete})))(tls, origVFS, zName, syncDir)
}

// orig returns the original methods of an open file and its kind.
func orig(pFile uintptr) (*sqlite3.Tsqlite3_io_methods, int) {
	mu.Lock()
	defer mu.Unlock()
	p := origOf[(*sqlite3.Tsqlite3_file)(ptr(pFile)).FpMethods]
	return (*sqlite3.Tsqlite3_io_methods)(ptr(p)), files[pFile]
}

// record appends one record to the log with a single write(2), before the
// operation itself runs: the log holds at least what reached the files.
func record(kind byte, file int, off int64, data []byte) {
	b := make([]byte, 14+len(data))
	b[0], b[1] = kind, byte(file)
	binary.LittleEndian.PutUint64(b[2:], uint64(off))
	binary.LittleEndian.PutUint32(b[10:], uint32(len(data)))
	copy(b[14:], data)
	mu.Lock()
	defer mu.Unlock()
	if logFile != nil {
		logFile.Write(b)
	}
}

func fileWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	m, kind := orig(pFile)
	record(opWrite, kind, iOfst, unsafe.Slice((*byte)(ptr(zBuf)), iAmt))
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxWrite})))(tls, pFile, zBuf, iAmt, iOfst)
}

func fileTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	m, kind := orig(pFile)
	record(opTruncate, kind, size, nil)
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxTruncate})))(tls, pFile, size)
}

// failSyncs is how many fsyncs of the write-ahead log are still to fail.
var failSyncs atomic.Int32

// FailSyncs makes the next n fsyncs of a write-ahead log fail with
// SQLITE_IOERR_FSYNC, without syncing: a disk that reports a failed flush.
func FailSyncs(n int) { failSyncs.Store(int32(n)) }

func fileSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	m, kind := orig(pFile)
	if kind == WAL && failSyncs.Load() > 0 && failSyncs.Add(-1) >= 0 {
		return sqlite3.SQLITE_IOERR_FSYNC
	}
	rc := (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxSync})))(tls, pFile, flags)
	if rc == sqlite3.SQLITE_OK {
		record(opSync, kind, 0, nil) // durable only once the fsync returned
	}
	return rc
}

func fileClose(tls *libc.TLS, pFile uintptr) int32 {
	m, _ := orig(pFile)
	rc := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{m.FxClose})))(tls, pFile)
	mu.Lock()
	delete(files, pFile)
	mu.Unlock()
	return rc
}

// ptr turns an address SQLite handed over (C memory, or one of this
// package's globals) into a pointer, in the way go vet accepts.
func ptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
