package hdfs

import (
	"context"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	krbclient "github.com/jcmturner/gokrb5/v8/client"
)

// client is the part of *gohdfs.Client the FS uses. All of the FS's own
// logic (the pool and its locking, buffering, retries, rename checks,
// error mapping) sits on top of it, so that it is tested with an in-memory
// client; realClient is the real one.
//
// A client is not safe for concurrent use, and neither are the readers
// and writers it returns: the FS calls each client, and the files it
// opened, from one goroutine at a time.
type client interface {
	// Open opens a file or directory (the library's Open does both).
	Open(name string) (fileReader, error)
	// Create creates a file exclusively; its parent must exist.
	Create(name string) (fileWriter, error)
	// Rename renames with rename2 and OVERWRITE: a file or an empty
	// directory at newpath is replaced.
	Rename(oldpath, newpath string) error
	// RemoveAll deletes recursively; a missing name is not an error.
	RemoveAll(name string) error
	// ReadDir lists a directory in the namenode's order.
	ReadDir(dirname string) ([]os.FileInfo, error)
	// Stat describes a path.
	Stat(name string) (os.FileInfo, error)
	// MkdirAll creates a directory and its parents.
	MkdirAll(dirname string, perm os.FileMode) error
	// Chmod sets permission bits.
	Chmod(name string, perm os.FileMode) error
	// Close ends the connection (and the renewal of its write leases).
	Close() error
}

// fileReader is the part of *gohdfs.FileReader the FS uses.
type fileReader interface {
	io.Reader
	// ReadAt seeks and then reads; the library's Seek drops the datanode
	// stream unless it can skip ahead within it.
	io.ReaderAt
	io.Closer
	Stat() os.FileInfo
	SetDeadline(t time.Time) error
}

// fileWriter is the part of *gohdfs.FileWriter the FS uses.
type fileWriter interface {
	io.Writer
	// Close completes the file; it can fail with an *os.PathError
	// wrapping gohdfs.ErrReplicating, after which it may be called again.
	io.Closer
	SetDeadline(t time.Time) error
}

var (
	_ client     = realClient{}
	_ fileReader = (*gohdfs.FileReader)(nil)
	_ fileWriter = (*gohdfs.FileWriter)(nil)
)

// realClient is a *gohdfs.Client as a client: every method but Open and
// Create is the library's own; those two return the library's reader and
// writer as interfaces (and a true nil on error, not a typed nil).
type realClient struct{ *gohdfs.Client }

func (c realClient) Open(name string) (fileReader, error) {
	f, err := c.Client.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (c realClient) Create(name string) (fileWriter, error) {
	f, err := c.Client.Create(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// dialer returns the dial function for namenodes and datanodes: a connect
// timeout, and TCP keep-alives so that a dead peer is noticed.
func dialer(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
}

// connectReal returns the function that opens one real client for st,
// with krb (nil without Kerberos) as its Kerberos client. gohdfs.NewClient
// dials the namenodes in order until one answers the handshake; it takes
// no context, so ctx bounds it from outside: the dials made while the
// client is being opened use ctx (later reconnections do not), and if ctx
// ends first the client is abandoned and closed once NewClient returns.
func connectReal(st *settings, krb *krbclient.Client) func(ctx context.Context) (client, error) {
	return func(ctx context.Context) (client, error) {
		opts := st.client
		dial := dialer(st.dialTimeout)
		var opening atomic.Bool
		opening.Store(true)
		opts.NamenodeDialFunc = func(dctx context.Context, network, addr string) (net.Conn, error) {
			if opening.Load() {
				dctx = ctx
			}
			return dial(dctx, network, addr)
		}
		opts.DatanodeDialFunc = dial
		if krb != nil {
			opts.KerberosClient = krb
		}
		type result struct {
			c   *gohdfs.Client
			err error
		}
		done := make(chan result, 1)
		go func() {
			c, err := gohdfs.NewClient(opts)
			opening.Store(false)
			done <- result{c, err}
		}()
		select {
		case r := <-done:
			if r.err != nil {
				return nil, r.err
			}
			return realClient{r.c}, nil
		case <-ctx.Done():
			go func() {
				if r := <-done; r.c != nil {
					r.c.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
}
