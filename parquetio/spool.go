package parquetio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// A Parquet row group stores each column's pages contiguously, so a writer
// holds every compressed page of the row group it is writing until the
// group is complete: with parquet-go's default in-memory page buffers a
// writer of 64 MiB row groups holds up to 64 MiB, times the writers open at
// once. Writers here spool instead: each column chunk keeps its first
// spoolMemory bytes in memory and the rest in an unlinked temporary file,
// which the page cache keeps fast and the kernel removes when it is closed,
// even if the process dies. A writer's page buffers thus hold at most
// spoolMemory per column, whatever the row group size; small files never
// touch the disk.

// spoolMemory is the in-memory part of a column chunk's page buffer.
const spoolMemory = 64 << 10

// spoolMinGrow is the least a page buffer's in-memory part grows by.
const spoolMinGrow = 4 << 10

// spoolPool is the parquet.BufferPool of one Writer's page buffers.
type spoolPool struct {
	dir string // where spill files go; "" means os.TempDir()

	mu   sync.Mutex
	free [][]byte // in-memory parts of released buffers, for reuse
}

// GetBuffer returns an empty page buffer.
func (p *spoolPool) GetBuffer() io.ReadWriteSeeker {
	b := &spoolBuffer{pool: p}
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b.mem = p.free[n-1][:0]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	return b
}

// PutBuffer releases a page buffer: its file is closed (and so deleted), its
// memory kept for the next buffer.
func (p *spoolPool) PutBuffer(rw io.ReadWriteSeeker) {
	b, ok := rw.(*spoolBuffer)
	if !ok || b.pool != p {
		return
	}
	b.closeFile()
	if cap(b.mem) > 0 {
		p.mu.Lock()
		p.free = append(p.free, b.mem[:0])
		p.mu.Unlock()
	}
	*b = spoolBuffer{err: errors.New("parquetio: page buffer used after release")}
}

// spoolBuffer is one column chunk's page buffer: written once from the
// start, then read back. Bytes [0, len(mem)) are in mem, the rest in f.
type spoolBuffer struct {
	pool *spoolPool
	mem  []byte
	f    *os.File
	// unlinked: f's name was removed when it was created.
	unlinked bool
	size     int64 // bytes written
	pos      int64 // read or write position
	err      error // sticky
}

// Write appends to the buffer; the position must be at the end.
func (b *spoolBuffer) Write(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.pos != b.size {
		return 0, errors.New("parquetio: page buffer written away from its end")
	}
	n := 0
	if room := spoolMemory - len(b.mem); room > 0 {
		k := min(room, len(p))
		if cap(b.mem)-len(b.mem) < k {
			// Grown as written, not sized up front: most column chunks
			// of a small file, and many of a large one, are a few
			// hundred bytes, and a writer has a buffer per column.
			m := make([]byte, len(b.mem), min(spoolMemory, max(2*cap(b.mem), len(b.mem)+k, spoolMinGrow)))
			copy(m, b.mem)
			b.mem = m
		}
		b.mem = append(b.mem, p[:k]...)
		n, p = k, p[k:]
	}
	if len(p) > 0 {
		if b.f == nil {
			if err := b.openFile(); err != nil {
				b.err = err
				return n, err
			}
		}
		k, err := b.f.WriteAt(p, b.size+int64(n)-int64(len(b.mem)))
		n += k
		if err != nil {
			b.err = fmt.Errorf("parquetio: spool page buffer: %w", err)
			b.size += int64(n)
			b.pos = b.size
			return n, b.err
		}
	}
	b.size += int64(n)
	b.pos = b.size
	return n, nil
}

func (b *spoolBuffer) openFile() error {
	f, err := os.CreateTemp(b.pool.dir, "trawl-pages-*")
	if err != nil {
		return fmt.Errorf("parquetio: spool page buffer: %w", err)
	}
	// Unlinked at once where the system allows it (it does on Unix): the
	// file goes when it is closed or the process ends. Elsewhere it is
	// removed when closed.
	b.unlinked = os.Remove(f.Name()) == nil
	b.f = f
	return nil
}

// Read reads from the position.
func (b *spoolBuffer) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.pos >= b.size {
		return 0, io.EOF
	}
	n := 0
	if b.pos < int64(len(b.mem)) {
		n = copy(p, b.mem[b.pos:])
		b.pos += int64(n)
		p = p[n:]
	}
	if len(p) > 0 && b.pos < b.size {
		want := min(int64(len(p)), b.size-b.pos)
		k, err := b.f.ReadAt(p[:want], b.pos-int64(len(b.mem)))
		n += k
		b.pos += int64(k)
		if err != nil && !(err == io.EOF && int64(k) == want) {
			b.err = fmt.Errorf("parquetio: read spooled page buffer: %w", err)
			return n, b.err
		}
	}
	return n, nil
}

// WriteTo copies the buffer from the position to w.
func (b *spoolBuffer) WriteTo(w io.Writer) (int64, error) {
	if b.err != nil {
		return 0, b.err
	}
	var n int64
	if b.pos < int64(len(b.mem)) {
		k, err := w.Write(b.mem[b.pos:])
		n += int64(k)
		b.pos += int64(k)
		if err != nil {
			return n, err
		}
	}
	if b.pos < b.size {
		off := b.pos - int64(len(b.mem))
		k, err := io.Copy(w, io.NewSectionReader(b.f, off, b.size-b.pos))
		n += k
		b.pos += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Seek sets the position.
func (b *spoolBuffer) Seek(offset int64, whence int) (int64, error) {
	if b.err != nil {
		return 0, b.err
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, fmt.Errorf("parquetio: page buffer: bad whence %d", whence)
	}
	if offset < 0 || offset > b.size {
		return 0, fmt.Errorf("parquetio: page buffer: seek to %d out of [0,%d]", offset, b.size)
	}
	b.pos = offset
	return offset, nil
}

func (b *spoolBuffer) closeFile() {
	if b.f != nil {
		b.f.Close()
		if !b.unlinked {
			os.Remove(b.f.Name())
		}
		b.f = nil
	}
}
