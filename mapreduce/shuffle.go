package mapreduce

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unsafe"
)

// The map side of the shuffle: records (partition, key, value) are appended
// to an arena of chunks with a small fixed-size index entry each; when the
// buffer reaches its budget the index is sorted by (partition, key, value)
// bytes, optionally combined, and written as a sorted run (spill) file.
//
// The budget bounds the memory the buffer holds, not the bytes of its
// records: every arena chunk counts in full and the index counts by its
// capacity. Nothing is allocated up front: the arena starts with a chunk of
// minChunk bytes and each chunk it adds is as large as the chunks it holds
// together (so the arena doubles), up to a largest chunk of about 1/64 of
// the budget, and the last chunk is cut to what the budget leaves; the
// index starts at minEntries and grows by half. A buffer over a few
// thousand records thus holds a few hundred KiB, whatever its budget. The
// arena never moves (chunks are added, never regrown), and chunks and index
// are kept across spills and tasks, so a buffer that has filled once
// allocates nothing more.
//
// Run file format: for each partition in order, its records; a record is
// uvarint(len(key)+1) and the key, or uvarint 0 when the key equals the
// previous record's key in the same partition; then uvarint(len(value))
// and the value. The run's in-memory index holds each partition's offset.

type sortEntry struct {
	prefix  uint64 // first 8 key bytes, big-endian, zero padded
	prefix2 uint64 // key bytes 8..16, likewise (URL keys share "http://")
	chunk   uint32 // arena chunk of the record
	off     uint32 // key start in the chunk; the value follows the key
	klen    uint32
	vlen    uint32
	part    uint32
}

// entrySize is the size of a sortEntry in memory.
const entrySize = int(unsafe.Sizeof(sortEntry{}))

// Arena chunk sizes: a buffer's first chunk is minChunk bytes, and its
// chunks grow to about 1/64 of its budget, within these bounds. A record
// larger than that gets a chunk of its own, dropped when the buffer is
// emptied.
const (
	minChunk = 16 << 10
	maxChunk = 4 << 20
)

// minEntries is the index capacity a buffer starts with, budget allowing.
const minEntries = 256

// sortBuffer collects map output up to a memory budget.
type sortBuffer struct {
	chunks    [][]byte // arena; chunks[:cur+1] hold records, the rest are free
	cur       int      // chunk being filled
	chunkSize int      // the largest chunk the arena grows by
	held      int      // bytes of the chunks' capacities
	ents      []sortEntry
	budget    int
}

// newSortBuffer returns an empty buffer of the given budget; it allocates
// nothing until records come.
func newSortBuffer(budget int64) *sortBuffer {
	if budget < 4<<10 {
		budget = 4 << 10
	}
	cs := min(max(int(budget/64), minChunk), maxChunk, int(budget/4))
	return &sortBuffer{budget: int(budget), chunkSize: cs}
}

// nextChunk is the size of the chunk the arena grows by next: as large as
// the chunks it holds (at least minChunk, at most chunkSize), cut to room
// bytes, and at least n (the record it is made for).
func (b *sortBuffer) nextChunk(n, room int) int {
	return max(min(max(b.held, minChunk), b.chunkSize, room), n)
}

func keyPrefix(k []byte) (uint64, uint64) {
	var b [16]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// add appends a record if the buffer can hold it within its budget, and
// reports whether it did. An empty buffer takes any record, whatever its
// budget.
func (b *sortBuffer) add(part int, key string, val []byte) bool {
	n := len(key) + len(val)
	next := 0 // the chunk the record goes to
	if len(b.chunks) > 0 {
		next = b.cur
		if len(b.chunks[next])+n > cap(b.chunks[next]) {
			next++
		}
	}
	chunkNeed := 0
	room := b.budget - b.size()
	if next >= len(b.chunks) || len(b.chunks[next])+n > cap(b.chunks[next]) {
		// Room for the index to grow by a little is kept aside, so that a
		// chunk cut to the budget does not leave the index full.
		idxRoom := 0
		if len(b.ents) == cap(b.ents) {
			idxRoom = max(cap(b.ents)/2, minEntries) / 8 * entrySize
		}
		chunkNeed = b.nextChunk(n, room-idxRoom)
	}
	idxGrow := 0
	if len(b.ents) == cap(b.ents) {
		// Grow the index by half, within what the budget leaves; a
		// growth much smaller than that is not worth copying the index.
		want := max(cap(b.ents)/2, minEntries)
		idxGrow = min(want, (room-chunkNeed)/entrySize)
		if idxGrow < want/8 {
			if !b.empty() {
				return false
			}
			idxGrow = max(idxGrow, 1)
		}
	}
	if !b.empty() && chunkNeed+idxGrow*entrySize > room {
		return false
	}
	if idxGrow > 0 {
		ents := make([]sortEntry, len(b.ents), cap(b.ents)+idxGrow)
		copy(ents, b.ents)
		b.ents = ents
	}
	b.cur = next
	if chunkNeed > 0 {
		c := make([]byte, 0, chunkNeed)
		if next < len(b.chunks) {
			// A free chunk too small for this record: replace it.
			b.held -= cap(b.chunks[next])
			b.chunks[next] = c
		} else {
			b.chunks = append(b.chunks, c)
		}
		b.held += chunkNeed
	}
	c := b.chunks[b.cur]
	off := len(c)
	c = append(c, key...)
	c = append(c, val...)
	b.chunks[b.cur] = c
	p1, p2 := keyPrefix(c[off : off+len(key)])
	b.ents = append(b.ents, sortEntry{
		prefix: p1, prefix2: p2, chunk: uint32(b.cur),
		off: uint32(off), klen: uint32(len(key)), vlen: uint32(len(val)), part: uint32(part),
	})
	return true
}

// size is the memory the buffer holds, in bytes.
func (b *sortBuffer) size() int   { return b.held + cap(b.ents)*entrySize }
func (b *sortBuffer) empty() bool { return len(b.ents) == 0 }

// reset empties the buffer, keeping its memory. Chunks larger than
// chunkSize (made for one large record) are dropped.
func (b *sortBuffer) reset() {
	b.ents = b.ents[:0]
	keep := b.chunks[:0]
	for _, c := range b.chunks {
		if cap(c) <= b.chunkSize {
			keep = append(keep, c[:0])
		} else {
			b.held -= cap(c)
		}
	}
	clear(b.chunks[len(keep):])
	b.chunks = keep
	b.cur = 0
}

func (b *sortBuffer) key(e *sortEntry) []byte {
	return b.chunks[e.chunk][e.off : e.off+e.klen]
}

func (b *sortBuffer) val(e *sortEntry) []byte {
	s := e.off + e.klen
	return b.chunks[e.chunk][s : s+e.vlen]
}

func (b *sortBuffer) sort() {
	slices.SortFunc(b.ents, func(x, y sortEntry) int {
		if x.part != y.part {
			if x.part < y.part {
				return -1
			}
			return 1
		}
		if x.prefix != y.prefix {
			if x.prefix < y.prefix {
				return -1
			}
			return 1
		}
		if x.prefix2 != y.prefix2 {
			if x.prefix2 < y.prefix2 {
				return -1
			}
			return 1
		}
		xc, yc := b.chunks[x.chunk], b.chunks[y.chunk]
		xk, yk := xc[x.off:x.off+x.klen], yc[y.off:y.off+y.klen]
		if c := bytes.Compare(xk, yk); c != 0 {
			return c
		}
		xv := x.off + x.klen
		yv := y.off + y.klen
		return bytes.Compare(xc[xv:xv+x.vlen], yc[yv:yv+y.vlen])
	})
}

// combineFn pre-reduces the encoded values of one key, emitting encoded
// values (in any order; the caller sorts them).
type combineFn func(key []byte, vals [][]byte, emit func([]byte)) error

// run is one sorted run file.
type run struct {
	path    string
	offs    []int64 // offs[p] is where partition p starts; offs[n] the end
	records int64
}

// runWriter writes a sorted run.
type runWriter struct {
	f       *os.File
	w       *bufio.Writer
	n       int64
	run     run
	part    int // current partition
	lastKey []byte
	haveKey bool
	tmp     [binary.MaxVarintLen64]byte
}

// runWriteBuf is the largest write buffer of a run.
const runWriteBuf = 256 << 10

// createRun creates run file name in dir, written through a buffer of
// bufSize bytes.
func createRun(dir, name string, parts, bufSize int) (*runWriter, error) {
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create spill: %w", err)
	}
	rw := &runWriter{f: f, w: bufio.NewWriterSize(f, bufSize), run: run{path: p, offs: make([]int64, parts+1)}}
	return rw, nil
}

func (rw *runWriter) uvarint(x uint64) {
	n := binary.PutUvarint(rw.tmp[:], x)
	rw.w.Write(rw.tmp[:n])
	rw.n += int64(n)
}

// add appends a record; records must come sorted.
func (rw *runWriter) add(part int, key, val []byte) {
	for rw.part < part {
		rw.part++
		rw.run.offs[rw.part] = rw.n
		rw.haveKey = false
	}
	if rw.haveKey && bytes.Equal(key, rw.lastKey) {
		rw.uvarint(0)
	} else {
		rw.uvarint(uint64(len(key)) + 1)
		rw.w.Write(key)
		rw.n += int64(len(key))
		rw.lastKey = append(rw.lastKey[:0], key...)
		rw.haveKey = true
	}
	rw.uvarint(uint64(len(val)))
	rw.w.Write(val)
	rw.n += int64(len(val))
	rw.run.records++
}

func (rw *runWriter) finish() (run, error) {
	for rw.part < len(rw.run.offs)-1 {
		rw.part++
		rw.run.offs[rw.part] = rw.n
	}
	err := rw.w.Flush()
	if cerr := rw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(rw.run.path)
		return run{}, fmt.Errorf("write spill %s: %w", rw.run.path, err)
	}
	return rw.run, nil
}

func (rw *runWriter) abort() {
	rw.f.Close()
	os.Remove(rw.run.path)
}

// spill sorts the buffer, combines it if combine is set, and writes it as a
// run, through a write buffer no larger than the records. The buffer is
// reset.
func (b *sortBuffer) spill(dir, name string, parts int, combine combineFn) (run, error) {
	b.sort()
	var data int
	for i := range b.ents {
		data += int(b.ents[i].klen + b.ents[i].vlen)
	}
	rw, err := createRun(dir, name, parts, min(max(data+data/8, 4<<10), runWriteBuf))
	if err != nil {
		return run{}, err
	}
	if combine == nil {
		for i := range b.ents {
			e := &b.ents[i]
			rw.add(int(e.part), b.key(e), b.val(e))
		}
	} else {
		var vals [][]byte
		var out []byte
		var outOffs []int
		for i := 0; i < len(b.ents); {
			e := &b.ents[i]
			key := b.key(e)
			j := i
			vals = vals[:0]
			for ; j < len(b.ents) && b.ents[j].part == e.part && bytes.Equal(b.key(&b.ents[j]), key); j++ {
				vals = append(vals, b.val(&b.ents[j]))
			}
			out, outOffs = out[:0], outOffs[:0]
			err := combine(key, vals, func(v []byte) {
				outOffs = append(outOffs, len(out))
				out = append(out, v...)
			})
			if err != nil {
				rw.abort()
				b.reset()
				return run{}, err
			}
			outOffs = append(outOffs, len(out))
			emitted := make([][]byte, len(outOffs)-1)
			for k := range emitted {
				emitted[k] = out[outOffs[k]:outOffs[k+1]]
			}
			slices.SortFunc(emitted, bytes.Compare)
			for _, v := range emitted {
				rw.add(int(e.part), key, v)
			}
			i = j
		}
	}
	b.reset()
	return rw.finish()
}

// recordSource yields shuffle records in (partition, key, value) order. The
// returned slices are valid until the next call. At the end it returns
// io.EOF.
type recordSource interface {
	next() (part int, key, val []byte, err error)
}

// runReader reads one partition of a run.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	left int64
	key  []byte
	val  []byte
	name string
}

// openRunPart opens partition part of rn for reading, through a buffer of
// bufSize bytes at most; nil if the partition is empty.
func openRunPart(rn *run, part int, bufSize int) (*runReader, error) {
	start, end := rn.offs[part], rn.offs[part+1]
	if start == end {
		return nil, nil
	}
	f, err := os.Open(rn.path)
	if err != nil {
		return nil, fmt.Errorf("open spill: %w", err)
	}
	sr := io.NewSectionReader(f, start, end-start)
	// No larger than the partition: bufio makes it at least 16 bytes.
	bufSize = int(min(int64(bufSize), end-start))
	return &runReader{f: f, r: bufio.NewReaderSize(sr, bufSize), left: end - start, name: rn.path}, nil
}

var errCorruptRun = errors.New("corrupt spill")

func (rr *runReader) readUvarint() (uint64, error) {
	x, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return 0, err
	}
	return x, nil
}

// advance reads the next record; io.EOF at the end of the partition.
func (rr *runReader) advance() error {
	kl, err := rr.readUvarint()
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return fmt.Errorf("%w %s: %v", errCorruptRun, rr.name, err)
	}
	if kl > 0 {
		rr.key, err = readN(rr.r, rr.key, int(kl-1))
		if err != nil {
			return fmt.Errorf("%w %s: %v", errCorruptRun, rr.name, err)
		}
	}
	vl, err := rr.readUvarint()
	if err != nil {
		return fmt.Errorf("%w %s: %v", errCorruptRun, rr.name, err)
	}
	rr.val, err = readN(rr.r, rr.val, int(vl))
	if err != nil {
		return fmt.Errorf("%w %s: %v", errCorruptRun, rr.name, err)
	}
	return nil
}

func readN(r *bufio.Reader, buf []byte, n int) ([]byte, error) {
	if cap(buf) < n {
		buf = make([]byte, n, n+n/4)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

func (rr *runReader) close() { rr.f.Close() }

// merger merges several run partitions (k-way, binary heap).
type merger struct {
	part int
	heap []*runReader
	last *runReader // returned by the previous next; advanced lazily
}

func less(a, b *runReader) bool {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.val, b.val) < 0
}

// newMerger opens partition part of every run.
func newMerger(runs []run, part int, bufSize int) (*merger, error) {
	m := &merger{part: part}
	for i := range runs {
		rr, err := openRunPart(&runs[i], part, bufSize)
		if err != nil {
			m.close()
			return nil, err
		}
		if rr == nil {
			continue
		}
		if err := rr.advance(); err != nil {
			rr.close()
			if err == io.EOF {
				continue
			}
			m.close()
			return nil, err
		}
		m.heap = append(m.heap, rr)
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *merger) down(i int) {
	h := m.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (m *merger) next() (int, []byte, []byte, error) {
	if m.last != nil {
		if err := m.last.advance(); err != nil {
			if err != io.EOF {
				return 0, nil, nil, err
			}
			m.last.close()
			n := len(m.heap) - 1
			m.heap[0] = m.heap[n]
			m.heap[n] = nil
			m.heap = m.heap[:n]
		}
		if len(m.heap) > 0 {
			m.down(0)
		}
		m.last = nil
	}
	if len(m.heap) == 0 {
		return 0, nil, nil, io.EOF
	}
	top := m.heap[0]
	m.last = top
	return m.part, top.key, top.val, nil
}

func (m *merger) close() {
	for _, rr := range m.heap {
		rr.close()
	}
	m.heap = nil
	m.last = nil
}

// mergeRuns merges runs (all partitions) into one new run in dir.
func mergeRuns(runs []run, parts int, dir, name string, bufSize int) (run, error) {
	rw, err := createRun(dir, name, parts, runWriteBuf)
	if err != nil {
		return run{}, err
	}
	for p := 0; p < parts; p++ {
		m, err := newMerger(runs, p, bufSize)
		if err != nil {
			rw.abort()
			return run{}, err
		}
		for {
			_, k, v, err := m.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				m.close()
				rw.abort()
				return run{}, err
			}
			rw.add(p, k, v)
		}
		m.close()
	}
	return rw.finish()
}

// grouper walks a recordSource group by group.
type grouper struct {
	src      recordSource
	part     int
	key      []byte
	val      []byte
	pending  bool // (part, key, val) is read but not consumed
	eof      bool
	err      error
	records  int64
	inGroup  bool
	groupKey []byte
	groupPrt int
}

func (g *grouper) fill() {
	if g.pending || g.eof || g.err != nil {
		return
	}
	p, k, v, err := g.src.next()
	if err == io.EOF {
		g.eof = true
		return
	}
	if err != nil {
		g.err = err
		return
	}
	g.part, g.key, g.val, g.pending = p, k, v, true
	g.records++
}

// nextGroup skips what is left of the current group and positions on the
// next one; false at the end or on error.
func (g *grouper) nextGroup() bool {
	for {
		g.fill()
		if !g.pending {
			return false
		}
		if g.inGroup && g.part == g.groupPrt && bytes.Equal(g.key, g.groupKey) {
			g.pending = false // rest of the previous group
			continue
		}
		g.groupPrt = g.part
		g.groupKey = append(g.groupKey[:0], g.key...)
		g.inGroup = true
		return true
	}
}

// values yields the encoded values of the current group.
func (g *grouper) values(yield func([]byte) bool) {
	for {
		g.fill()
		if !g.pending || g.part != g.groupPrt || !bytes.Equal(g.key, g.groupKey) {
			return
		}
		g.pending = false
		if !yield(g.val) {
			return
		}
	}
}
