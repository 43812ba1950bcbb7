// Package symlink finds where a chain of symbolic links leads, when its
// end does not exist yet: a file created through a dangling link is
// created where the link points, as open(2) with O_CREAT does.
package symlink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxHops bounds the links followed, as the kernel's ELOOP does.
const maxHops = 40

// ErrLoop is returned (wrapped) by [Target] for a chain of links that
// does not end.
var ErrLoop = errors.New("symlink: too many levels of symbolic links")

// Target returns the path the chain of symbolic links at path ends at:
// path itself if it is no link or does not exist, else the first path
// along the chain that is no link, whether it exists or not. Relative
// link targets are taken from the link's directory.
func Target(path string) (string, error) {
	for range maxHops {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("%w: %s", ErrLoop, path)
}
