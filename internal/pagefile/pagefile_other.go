//go:build !linux

package pagefile

import (
	"errors"
	"fmt"
)

// File is an unlinked temporary file whose space is handed out as arrays
// mapped into memory. It is supported on Linux only.
type File struct{}

// Create returns an error wrapping errors.ErrUnsupported: paged arrays
// are supported on Linux only.
func Create(dir string) (*File, error) {
	return nil, fmt.Errorf("pagefile: %w on this system", errors.ErrUnsupported)
}

// Float32s returns an error wrapping errors.ErrUnsupported.
func (p *File) Float32s(n int) ([]float32, error) { return nil, errors.ErrUnsupported }

// Size returns 0.
func (p *File) Size() int64 { return 0 }

// PageOut returns an error wrapping errors.ErrUnsupported.
func (p *File) PageOut() error { return errors.ErrUnsupported }

// Release does nothing.
func (p *File) Release() error { return nil }

// Close does nothing.
func (p *File) Close() error { return nil }
