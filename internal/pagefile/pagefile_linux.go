package pagefile

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File is an unlinked temporary file whose space is handed out as arrays
// mapped into memory.
type File struct {
	mu     sync.Mutex
	f      *os.File
	size   int64    // bytes of the file handed out
	maps   [][]byte // the mappings, in file order
	closed bool
}

// Create makes an unlinked file in dir. The arrays it hands out are only
// as fast as dir's file system: dir should be on a local disk, and a
// tmpfs (RAM itself) gains nothing.
func Create(dir string) (*File, error) {
	f, err := os.OpenFile(dir, os.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) {
		// The file system (or, for EISDIR, the kernel) lacks
		// O_TMPFILE: create and unlink at once.
		f, err = os.CreateTemp(dir, ".cairn-pages-*")
		if err == nil {
			if rerr := os.Remove(f.Name()); rerr != nil {
				f.Close()
				return nil, fmt.Errorf("pagefile: unlink %s: %w", f.Name(), rerr)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pagefile: create in %s: %w", dir, err)
	}
	return &File{f: f}, nil
}

// Float32s returns a zeroed array of n float32s mapped from new space at
// the end of the file. The array stays valid until Close.
func (p *File) Float32s(n int) ([]float32, error) {
	if n <= 0 {
		return nil, nil
	}
	page := int64(os.Getpagesize())
	length := (int64(n)*4 + page - 1) / page * page
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, os.ErrClosed
	}
	fd := int(p.f.Fd())
	if err := unix.Fallocate(fd, 0, p.size, length); err != nil {
		return nil, fmt.Errorf("pagefile: reserve %d bytes: %w", length, err)
	}
	b, err := unix.Mmap(fd, p.size, int(length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Ftruncate(fd, p.size)
		return nil, fmt.Errorf("pagefile: map %d bytes: %w", length, err)
	}
	// The arrays are read at random: a fault should read its own page,
	// not the pages around it.
	_ = unix.Madvise(b, unix.MADV_RANDOM)
	p.size += length
	p.maps = append(p.maps, b)
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// Size returns the bytes of the file handed out.
func (p *File) Size() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size
}

// PageOut writes the arrays back to the file and drops them from memory,
// the process's and the page cache's: the next read of each page reads
// the disk. The arrays keep their contents.
func (p *File) PageOut() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return os.ErrClosed
	}
	for _, b := range p.maps {
		if err := unix.Msync(b, unix.MS_SYNC); err != nil {
			return fmt.Errorf("pagefile: write back: %w", err)
		}
		if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
			return fmt.Errorf("pagefile: drop mapping: %w", err)
		}
	}
	if err := unix.Fadvise(int(p.f.Fd()), 0, p.size, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("pagefile: drop page cache: %w", err)
	}
	return nil
}

// Release frees the file's disk space and drops its pages from memory,
// keeping the arrays mapped: they read as zeros from then on, and must
// not be written. It is for a store that is closed while something may
// still hold its arrays; Close unmaps them.
func (p *File) Release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.size == 0 {
		return nil
	}
	if err := unix.Fallocate(int(p.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, p.size); err != nil {
		return fmt.Errorf("pagefile: release: %w", err)
	}
	return nil
}

// Close unmaps every array and closes the file, which frees its space.
// No array may be used after Close. Close is idempotent.
func (p *File) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var first error
	for _, b := range p.maps {
		if err := unix.Munmap(b); err != nil && first == nil {
			first = err
		}
	}
	p.maps = nil
	if err := p.f.Close(); err != nil && first == nil {
		first = err
	}
	return first
}
