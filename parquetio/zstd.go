package parquetio

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// zstdWindow is the match window of the writers' zstd encoders. Parquet
// compresses each page on its own, and pages are about parquet-go's page
// buffer size (256 KiB of encoded values), so a window larger than a page
// finds no more matches; it only costs memory: an encoder keeps a history
// buffer of window + 128 KiB, which at zstd's default 8 MiB window is 8 MiB
// more per encoder, and a writer can hold several.
const zstdWindow = 1 << 20

// zstdCodec is the zstd page codec of a Writer: parquet-go's zstd codec
// (same format code, same level, no checksums, single-threaded, zero-length
// pages compress to an empty frame) with a window of zstdWindow. It writes
// standard zstd frames that any reader decodes.
type zstdCodec struct {
	level    zstd.EncoderLevel
	encoders sync.Pool // *zstd.Encoder
	decoder  pqzstd.Codec
}

func newZstdCodec(level zstd.EncoderLevel) *zstdCodec {
	return &zstdCodec{level: level, decoder: pqzstd.Codec{Level: level}}
}

// The codecs the writers share, one per level, so that an encoder (about
// a megabyte of tables and history to build) serves every file written
// until a garbage collection empties the pool, not one file.
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
	e, _ := c.encoders.Get().(*zstd.Encoder)
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
	c.encoders.Put(e)
	return out, nil
}

// Decode decompresses src into dst (reallocated when too small).
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	return c.decoder.Decode(dst, src)
}
