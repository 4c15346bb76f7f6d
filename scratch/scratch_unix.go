//go:build unix

package scratch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"github.com/trawl/trawl/flock"
)

// locksAvailable: flock(2) exists here.
const locksAvailable = true

// rootName is the per-user directory's name.
func rootName() string { return rootPrefix + "-" + strconv.Itoa(os.Getuid()) }

// checkOwner fails unless this process's user owns the directory root.
func checkOwner(root string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int64(st.Uid) != int64(uid) {
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d): refusing to use it", root, st.Uid, uid)
	}
	return nil
}

// lockUnsupported reports whether a lock failed because locks are not
// available here: on this platform, or on the file system (some network
// and FUSE file systems refuse flock).
func lockUnsupported(err error) bool {
	return errors.Is(err, flock.ErrUnsupported) || errors.Is(err, syscall.ENOLCK) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOSYS)
}
