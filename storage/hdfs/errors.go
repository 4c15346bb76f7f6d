package hdfs

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// errIsDir is the error of Open on a directory.
var errIsDir = errors.New("is a directory")

// errUnsupported wraps the reasons a path is refused (encryption zones,
// erasure coding); it matches errors.ErrUnsupported.
type errUnsupported struct{ why string }

func (e *errUnsupported) Error() string { return "not supported: " + e.why }

func (e *errUnsupported) Unwrap() error { return errors.ErrUnsupported }

// remoteError is a Java exception from the namenode that the library
// passed on as it is (it turns only a few into os errors). It keeps the
// exception's class and the first line of its message, and matches the
// fs or syscall error of the same meaning.
type remoteError struct {
	exception string
	message   string
	err       error
}

// class is the exception's class name without its package.
func (e *remoteError) class() string {
	return e.exception[strings.LastIndexByte(e.exception, '.')+1:]
}

func (e *remoteError) Error() string {
	class := e.class()
	msg, _, _ := strings.Cut(strings.TrimSpace(e.message), "\n")
	switch {
	case class == "" && msg == "":
		return e.err.Error()
	case msg == "":
		return class
	case class == "":
		return msg
	}
	return class + ": " + msg
}

func (e *remoteError) Unwrap() error { return e.err }

// Is maps the exception's class to the matching fs or syscall error.
func (e *remoteError) Is(target error) bool {
	var want error
	switch e.class() {
	case "FileNotFoundException":
		want = fs.ErrNotExist
	case "AccessControlException", "SnapshotAccessControlException":
		want = fs.ErrPermission
	case "FileAlreadyExistsException", "AlreadyBeingCreatedException":
		want = fs.ErrExist
	case "ParentNotDirectoryException":
		want = syscall.ENOTDIR
	case "PathIsNotEmptyDirectoryException":
		want = syscall.ENOTEMPTY
	case "DSQuotaExceededException", "NSQuotaExceededException", "QuotaExceededException":
		want = syscall.EDQUOT
	case "InvalidPathException", "HadoopIllegalArgumentException":
		want = fs.ErrInvalid
	default:
		return false
	}
	return target == want
}

// mapError strips the library's *os.PathError (the FS adds its own, with
// the full URI) and gives a namenode exception its meaning.
func mapError(err error) error {
	// An error mapped already (and perhaps wrapped with context since)
	// stays as it is: mapping it again would drop that context.
	var mapped *remoteError
	if errors.As(err, &mapped) {
		return err
	}
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	var re gohdfs.Error
	if errors.As(err, &re) {
		return &remoteError{exception: re.Exception(), message: re.Message(), err: err}
	}
	return err
}

// unsupported says why the library cannot read or write the file or
// directory fi describes, or returns nil. The namenode's status carries
// FileEncryptionInfo and an erasure-coding policy on files, and the flags
// HAS_CRYPT (2) and HAS_EC (4) on files and directories (Hadoop 3; older
// namenodes send neither, and nothing is refused).
func unsupported(fi os.FileInfo) error {
	st, ok := fi.Sys().(*gohdfs.FileStatus)
	if !ok || st == nil {
		return nil
	}
	const hasCrypt, hasEC = 2, 4
	switch {
	case st.GetFileEncryptionInfo() != nil || st.GetFlags()&hasCrypt != 0:
		return &errUnsupported{"it is in an HDFS encryption zone, and the client library can neither decrypt nor encrypt (transparent encryption)"}
	case st.GetEcPolicy() != nil || st.GetFlags()&hasEC != 0:
		return &errUnsupported{"it is erasure-coded, and the client library reads and writes replicated (contiguous) blocks only"}
	}
	return nil
}
