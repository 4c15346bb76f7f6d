package resolver

import (
	"errors"
	"fmt"
)

// The causes of a failed lookup; an *Error wraps one of them (test with
// errors.Is).
var (
	// ErrNotFound: the name does not exist (NXDOMAIN).
	ErrNotFound = errors.New("no such host")
	// ErrNoAddress: the name exists but has no address record (NODATA).
	ErrNoAddress = errors.New("no address record")
	// ErrServerFailure: the servers answered SERVFAIL, REFUSED or another
	// error code.
	ErrServerFailure = errors.New("server failure")
	// ErrTimeout: no server answered in time.
	ErrTimeout = errors.New("timed out")
	// ErrMalformed: a reply did not parse.
	ErrMalformed = errors.New("malformed reply")
	// ErrCNAME: a CNAME chain was too long or came back to itself.
	ErrCNAME = errors.New("bad CNAME chain")
	// ErrBadName: the host is not a valid domain name.
	ErrBadName = errors.New("not a domain name")
	// ErrClosed: the resolver was closed.
	ErrClosed = errors.New("resolver closed")
)

// Error is a failed lookup of Host. Err wraps one of the Err* causes
// with what the servers said.
type Error struct {
	Host string
	Err  error
	// Cached is true when the failure was served from the cache.
	Cached bool
}

func (e *Error) Error() string {
	s := fmt.Sprintf("dns %s: %v", e.Host, e.Err)
	if e.Cached {
		s += " (cached)"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// NotFound reports whether the name does not exist or has no address.
func (e *Error) NotFound() bool {
	return errors.Is(e.Err, ErrNotFound) || errors.Is(e.Err, ErrNoAddress)
}

// Timeout reports whether no server answered in time (net.Error style).
func (e *Error) Timeout() bool { return errors.Is(e.Err, ErrTimeout) }

// Temporary reports whether the failure may go away: time-outs, server
// failures and malformed replies.
func (e *Error) Temporary() bool {
	return errors.Is(e.Err, ErrTimeout) || errors.Is(e.Err, ErrServerFailure) || errors.Is(e.Err, ErrMalformed)
}
