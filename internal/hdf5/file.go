// This file holds File: opening a file (finding and parsing its superblock
// and root group) and reading bounded byte ranges of it.
package hdf5

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cairndb/cairn/vector"
)

const signature = "\x89HDF\r\n\x1a\n"

// File is an open HDF5 file: its superblock and root group. It is safe for
// concurrent use (see the package documentation).
type File struct {
	r       io.ReaderAt
	size    int64
	base    uint64 // the base address every other address is relative to
	offSize int
	lenSize int
	root    *object
	closer  io.Closer
}

// OpenFile opens the HDF5 file at path; Close releases it.
func OpenFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	f, err := Open(fh, fi.Size())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = fh
	return f, nil
}

// Open reads the superblock and the root group of the size bytes of r.
func Open(r io.ReaderAt, size int64) (*File, error) {
	f := &File{r: r, size: size}
	if err := f.readSuperblock(); err != nil {
		return nil, err
	}
	return f, nil
}

// Close closes the file opened by [OpenFile]; for a [File] from [Open] it
// does nothing.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// read returns the n bytes at address addr (relative to the base address),
// which must lie inside the file.
func (f *File) read(addr, n uint64, what string) ([]byte, error) {
	if addr == undefined {
		return nil, corruptf("%s: undefined address", what)
	}
	abs := f.base + addr
	if abs < f.base || n > uint64(f.size) || abs > uint64(f.size)-n {
		return nil, corruptf("%s: %d bytes at %d lie outside the file of %d bytes", what, n, abs, f.size)
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, int64(abs)); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, corruptf("%s: truncated", what)
		}
		return nil, fmt.Errorf("hdf5: %s: %w", what, err)
	}
	return b, nil
}

// readSuperblock finds the signature (at 0, 512, 1024, ... as the format
// allows for a user block), reads the superblock and opens the root group.
func (f *File) readSuperblock() error {
	at := int64(-1)
	var sig [8]byte
	for off := int64(0); off+8 <= f.size; off = max(512, off*2) {
		if _, err := f.r.ReadAt(sig[:], off); err != nil {
			break
		}
		if string(sig[:]) == signature {
			at = off
			break
		}
	}
	if at < 0 {
		return corruptf("no HDF5 signature")
	}
	head := make([]byte, min(f.size-at, 256))
	if _, err := f.r.ReadAt(head, at); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("hdf5: superblock: %w", err)
	}
	d := &decoder{b: head, what: "superblock", off: 8}
	version := int(d.u8())
	var rootAddr uint64
	switch version {
	case 0, 1:
		d.skip(4) // free-space, root symbol table and shared header versions, reserved
		d.offSize, d.lenSize = int(d.u8()), int(d.u8())
		d.skip(1 + 2 + 2 + 4) // reserved, group K values, consistency flags
		if version == 1 {
			d.skip(4) // indexed storage K, reserved
		}
		if err := f.setSizes(d); err != nil {
			return err
		}
		f.base = d.addr()
		d.addr() // free-space info
		d.addr() // end of file
		d.addr() // driver info
		// The root group's symbol table entry.
		d.addr() // link name offset
		rootAddr = d.addr()
	case 2, 3:
		d.offSize, d.lenSize = int(d.u8()), int(d.u8())
		d.skip(1) // consistency flags
		if err := f.setSizes(d); err != nil {
			return err
		}
		f.base = d.addr()
		d.addr() // superblock extension
		d.addr() // end of file
		rootAddr = d.addr()
		if d.err == nil {
			if err := verify(head, d.off, "superblock"); err != nil {
				return err
			}
		}
	default:
		return versionf("superblock", version)
	}
	if d.err != nil {
		return d.err
	}
	if f.base == undefined {
		return corruptf("superblock: undefined base address")
	}
	if f.base == 0 {
		f.base = uint64(at) // a base of 0 with a user block means the superblock's position
	}
	root, err := f.object(rootAddr, "root group")
	if err != nil {
		return err
	}
	f.root = root
	return nil
}

func (f *File) setSizes(d *decoder) error {
	if d.err != nil {
		return d.err
	}
	for _, s := range []int{d.offSize, d.lenSize} {
		if !slices.Contains([]int{2, 4, 8}, s) {
			return corruptf("superblock: field width %d (want 2, 4 or 8)", s)
		}
	}
	f.offSize, f.lenSize = d.offSize, d.lenSize
	return nil
}

// Members returns the names of the objects at the root of the file, sorted.
func (f *File) Members() ([]string, error) {
	links, err := f.links(f.root)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(links))
	for n := range links {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Dataset returns the dataset called name at the root of the file, or an
// error wrapping [vector.ErrNotFound].
func (f *File) Dataset(name string) (*Dataset, error) {
	links, err := f.links(f.root)
	if err != nil {
		return nil, err
	}
	addr, ok := links[name]
	if !ok {
		return nil, fmt.Errorf("hdf5: dataset %q: %w", name, vector.ErrNotFound)
	}
	o, err := f.object(addr, "dataset "+name)
	if err != nil {
		return nil, err
	}
	return f.dataset(name, o)
}

// Attr returns the attribute called name of the root group, or an error
// wrapping [vector.ErrNotFound].
func (f *File) Attr(name string) (*Attribute, error) { return f.attr(f.root, name) }

// Attrs returns the names of the root group's attributes, in file order.
func (f *File) Attrs() ([]string, error) {
	as, err := f.attrs(f.root)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name
	}
	return names, nil
}
