package parquetio

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// zstdWindow is the match window of the writers' zstd encoders. Parquet
// compresses each page on its own, and a page is cut when its column's
// page buffer fills (pageBufferSize, 128 KiB), so a window larger than a
// page finds no more matches; it only costs memory: an encoder keeps a
// history buffer of twice the window (at least 1 MiB), which at zstd's
// default 8 MiB window is 16 MiB per encoder, and a process keeps a few.
// A 256 KiB window with zstd.WithLowerEncoderMem (a 384 KiB history) did
// not help: in a 5-round crawl of a 20,000-page synthetic web the peak RSS
// was 105-106 MiB against 101-103 (3 alternated runs), content 0.1%
// larger.
const zstdWindow = 1 << 20

// zstdCodec is the zstd page codec of a Writer: parquet-go's zstd codec
// (same format code, same level, no checksums, single-threaded, zero-length
// pages compress to an empty frame) with a window of zstdWindow. It writes
// standard zstd frames that any reader decodes.
type zstdCodec struct {
	level   zstd.EncoderLevel
	decoder pqzstd.Codec

	mu   sync.Mutex
	idle []*zstd.Encoder // at most maxIdleEncoders, for reuse
}

// maxIdleEncoders is how many idle encoders a codec keeps. They are kept
// in a list of their own, not a sync.Pool, because a garbage collection
// empties a sync.Pool: a crawl collects about a hundred times, and every
// collection cost the writers a new encoder per concurrent compression
// (a megabyte of history and tables to allocate and clear each). A
// compression holds an encoder only while it runs, so a few cover the
// writers of a process's tasks; more at once get new encoders, dropped
// after use.
const maxIdleEncoders = 4

func newZstdCodec(level zstd.EncoderLevel) *zstdCodec {
	return &zstdCodec{level: level, decoder: pqzstd.Codec{Level: level}}
}

// The codecs the writers share, one per level, so that an encoder (about
// a megabyte of tables and history to build) serves every file written,
// not one file.
var (
	zstdDefaultCodec = newZstdCodec(zstd.SpeedDefault)
	zstdFastestCodec = newZstdCodec(zstd.SpeedFastest)
)

// String names the codec as parquet-go does.
func (c *zstdCodec) String() string { return "ZSTD" }

// CompressionCodec is the codec's code in the Parquet format.
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src into dst (reallocated when too small).
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e := c.take()
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(c.level),
			zstd.WithWindowSize(zstdWindow),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false),
		)
		if err != nil {
			return dst[:0], fmt.Errorf("zstd encoder: %w", err)
		}
	}
	out := e.EncodeAll(src, dst[:0])
	c.give(e)
	return out, nil
}

// take returns an idle encoder, or nil if there is none.
func (c *zstdCodec) take() *zstd.Encoder {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.idle)
	if n == 0 {
		return nil
	}
	e := c.idle[n-1]
	c.idle[n-1] = nil
	c.idle = c.idle[:n-1]
	return e
}

// give keeps e for reuse, unless maxIdleEncoders are kept already.
func (c *zstdCodec) give(e *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) < maxIdleEncoders {
		c.idle = append(c.idle, e)
	}
}

// Decode decompresses src into dst (reallocated when too small).
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	return c.decoder.Decode(dst, src)
}
