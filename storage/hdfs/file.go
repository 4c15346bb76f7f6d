package hdfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"
)

// file is an HDFS file open for reading, with the buffering the package
// doc describes. Its reader belongs to the client of slot: it is used
// only with slot.mu held, and the file's own state with mu held (mu
// first, then slot.mu).
type file struct {
	fs   *FS
	slot *slot
	name string // the clean path
	size int64  // at Open

	mu     sync.Mutex
	r      fileReader // nil after a failed reopen
	rpos   int64      // offset of r's datanode stream; -1 unknown
	pos    int64      // offset of the next Read
	tail   []byte     // the last bytes of the file
	tailAt int64      // their offset
	blocks []*block   // the block cache, least recently used first
	closed bool
}

// block is an aligned ReadBlockSize piece of the file (shorter at its
// end).
type block struct {
	index int64
	data  []byte
}

func newFile(f *FS, s *slot, r fileReader, name string, size int64) *file {
	return &file{fs: f, slot: s, name: name, size: size, r: r, tailAt: size}
}

// Size is the file's length when it was opened.
func (f *file) Size() int64 { return f.size }

// readTail reads the end of the file (its Parquet footer) once. The
// caller holds the slot.
func (f *file) readTail() error {
	n := min(int64(f.fs.st.footerSize), f.size)
	if n <= 0 {
		return nil
	}
	buf := make([]byte, n)
	if err := f.fetchHeld(buf, f.size-n); err != nil {
		return f.fs.pathError("open", f.name, err)
	}
	f.tail, f.tailAt = buf, f.size-n
	return nil
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt: fewer only at the end
// of the file, with io.EOF. It is safe for concurrent use; reads of one
// file are served one at a time.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, f.fs.pathError("read", f.name, errors.New("negative offset"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, f.fs.pathError("read", f.name, fs.ErrClosed)
	}
	return f.readAt(p, off)
}

// Read reads from the offset the previous Read left, as io.Reader.
func (f *file) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, f.fs.pathError("read", f.name, fs.ErrClosed)
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.readAt(p, f.pos)
	f.pos += int64(n)
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

// readAt serves a read from the tail, the block cache, or, for reads of a
// block or more, straight from the datanodes. The caller holds mu.
func (f *file) readAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	var eof error
	if rest := f.size - off; int64(len(p)) > rest {
		p, eof = p[:rest], io.EOF
	}
	bs := int64(f.fs.st.readBlockSize)
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if f.tail != nil && at >= f.tailAt {
			n += copy(p[n:], f.tail[at-f.tailAt:])
			continue
		}
		if rest := p[n:]; int64(len(rest)) >= bs {
			if err := f.fetch(rest, at); err != nil {
				return n, f.fs.pathError("read", f.name, err)
			}
			n += len(rest)
			continue
		}
		b, err := f.block(at / bs)
		if err != nil {
			return n, f.fs.pathError("read", f.name, err)
		}
		n += copy(p[n:], b.data[at-b.index*bs:])
	}
	return n, eof
}

// block returns block i from the cache, reading it on a miss (and
// dropping the least recently used block if the cache is full). The caller
// holds mu.
func (f *file) block(i int64) (*block, error) {
	for k, b := range f.blocks {
		if b.index == i {
			copy(f.blocks[k:], f.blocks[k+1:])
			f.blocks[len(f.blocks)-1] = b
			return b, nil
		}
	}
	bs := int64(f.fs.st.readBlockSize)
	size := min(bs, f.size-i*bs)
	var b *block
	if len(f.blocks) >= f.fs.st.readCacheBlocks {
		b = f.blocks[0] // reuse the evicted block's buffer
		f.blocks = append(f.blocks[:0], f.blocks[1:]...)
		if int64(cap(b.data)) < size {
			b.data = nil
		}
	} else {
		b = &block{}
	}
	if b.data == nil {
		b.data = make([]byte, size)
	}
	b.index, b.data = i, b.data[:size]
	if err := f.fetch(b.data, i*bs); err != nil {
		return nil, err
	}
	f.blocks = append(f.blocks, b)
	return b, nil
}

// fetch reads len(buf) bytes at off from the datanodes, with the slot
// held. The caller holds mu.
func (f *file) fetch(buf []byte, off int64) error {
	f.slot.mu.Lock()
	defer f.slot.mu.Unlock()
	return f.fetchHeld(buf, off)
}

// fetchHeld reads len(buf) bytes at off; the caller holds mu (or owns the
// file alone, in Open) and the slot. A read that fails is tried once more
// on a newly opened reader: the library keeps a file's block locations
// and access tokens from its first read for as long as the reader is
// open, and a token that expired or a block that moved fails every later
// read of that reader.
func (f *file) fetchHeld(buf []byte, off int64) error {
	if f.slot.c == nil {
		return fs.ErrClosed
	}
	if f.r != nil {
		err := f.readFull(buf, off)
		if err == nil {
			return nil
		}
		f.fs.st.log.Warn("hdfs: read failed; reopening the file and trying again", "path", f.fs.uri(f.name),
			"offset", off, "len", len(buf), "err", err)
		f.r.Close()
		f.r = nil
	}
	r, err := f.slot.c.Open(f.name)
	if err != nil {
		return fmt.Errorf("reopen: %w", mapError(err))
	}
	if got := r.Stat().Size(); got != f.size {
		r.Close()
		return fmt.Errorf("reopen: the file changed size from %d to %d bytes while open", f.size, got)
	}
	f.r, f.rpos = r, 0
	return f.readFull(buf, off)
}

// readFull reads len(buf) bytes at off with the library's reader. If off
// is where the reader's datanode stream stands it reads on (Read);
// otherwise it seeks (ReadAt), which opens a new stream.
func (f *file) readFull(buf []byte, off int64) error {
	var n int
	err := f.fs.bounded(f.r.SetDeadline, func() error {
		var err error
		if off == f.rpos {
			n, err = io.ReadFull(f.r, buf)
		} else {
			n, err = f.r.ReadAt(buf, off)
		}
		return err
	})
	if n == len(buf) {
		f.rpos = off + int64(n)
		return nil
	}
	f.rpos = -1
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		err = fmt.Errorf("read %d of %d bytes at offset %d of a %d-byte file: %w", n, len(buf), off, f.size, io.ErrUnexpectedEOF)
	}
	return mapError(err)
}

// Close closes the file; a second Close fails with fs.ErrClosed.
func (f *file) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.fs.pathError("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	f.tail, f.blocks = nil, nil
	if f.r == nil {
		return nil
	}
	f.slot.mu.Lock()
	defer f.slot.mu.Unlock()
	err := f.r.Close()
	f.r = nil
	if err != nil {
		return f.fs.pathError("close", f.name, err)
	}
	return nil
}

// bounded runs call with a deadline of IOTimeout from now on the
// library's reader or writer (set is its SetDeadline), and clears the
// deadline when call returns: a writer's block stream sends heartbeats
// from a goroutine of the library every 30 seconds while idle, and an
// expired deadline would stop them and let the datanodes drop the
// pipeline of a file written slowly.
func (f *FS) bounded(set func(time.Time) error, call func() error) error {
	t := f.st.ioTimeout
	if t <= 0 {
		return call()
	}
	if err := set(f.now().Add(t)); err != nil {
		return err
	}
	err := call()
	_ = set(time.Time{})
	return err
}
