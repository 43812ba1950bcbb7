// This file holds the package's error sentinel and the helpers that wrap
// the shared sentinels of package vector.
package hdf5

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// ErrUnsupported is returned when a file uses a feature of HDF5 that this
// package does not implement (see the package documentation for the list
// of what it does).
var ErrUnsupported = errors.New("hdf5: unsupported feature")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("hdf5: %s: %w", fmt.Sprintf(format, args...), vector.ErrCorrupt)
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("hdf5: %s: %w", fmt.Sprintf(format, args...), ErrUnsupported)
}

func versionf(what string, v int) error {
	return fmt.Errorf("hdf5: %s version %d: %w", what, v, vector.ErrUnsupportedVersion)
}
