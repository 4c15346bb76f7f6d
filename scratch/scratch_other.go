//go:build !unix

package scratch

import (
	"errors"
	"io/fs"

	"github.com/trawl/trawl/flock"
)

// locksAvailable: flock(2) does not exist here.
const locksAvailable = false

// rootName is the per-user directory's name. Without user IDs there is
// one; the platforms concerned give each user a temp directory of their
// own.
func rootName() string { return rootPrefix }

// checkOwner accepts any owner: there are no Unix user IDs to compare.
func checkOwner(string, fs.FileInfo) error { return nil }

// lockUnsupported reports whether a lock failed because locks are not
// available here.
func lockUnsupported(err error) bool { return errors.Is(err, flock.ErrUnsupported) }
