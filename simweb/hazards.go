package simweb

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HugeSize is the size of the huge page's body.
const HugeSize = 5 << 20

// Gzip bomb geometry: the body inflates to bombPrefix plus bombChunks
// chunks of bombChunk spaces (3 GiB), from about 4 MiB on the wire.
// Small chunks keep building it cheap (0.1 s under the race detector, not
// 0.9 s as with 1 MiB chunks): the repeated block is 83 bytes per 64 KiB.
const (
	bombChunk  = 64 << 10
	bombChunks = 3 << 14
	bombPrefix = "<!DOCTYPE html><html><head><title>Bomb</title></head><body><p>"
)

// gzipBomb is a precomputed gzip stream of bombPrefix followed by many
// chunks of spaces. DEFLATE output for a long run of one byte becomes
// periodic once the window is full of it: after a sync flush every further
// chunk compresses to the same bytes. So the stream is head (header and
// the first chunks), block repeated, and tail (an empty final block, the
// CRC-32 and the size), and can be written without compressing anything
// per request. The CRC-32 of the whole is computed by raising the affine
// map "CRC after one more chunk" to the needed power.
type gzipBomb struct {
	head, block, tail []byte
	repeat            int
	inflated          int64
}

// size is the compressed length.
func (b *gzipBomb) size() int64 {
	return int64(len(b.head)) + int64(b.repeat)*int64(len(b.block)) + int64(len(b.tail))
}

// newGzipBomb builds a bomb of chunks chunks (at least 4).
func newGzipBomb(chunks int) (*gzipBomb, error) {
	if chunks < 4 {
		return nil, fmt.Errorf("simweb: gzip bomb of %d chunks, want at least 4", chunks)
	}
	chunk := bytes.Repeat([]byte{' '}, bombChunk)
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("simweb: gzip bomb: %w", err)
	}
	var marks []int
	fw.Write([]byte(bombPrefix))
	for range 4 {
		fw.Write(chunk)
		if err := fw.Flush(); err != nil {
			return nil, fmt.Errorf("simweb: gzip bomb: %w", err)
		}
		marks = append(marks, buf.Len())
	}
	b2, b3 := buf.Bytes()[marks[1]:marks[2]], buf.Bytes()[marks[2]:marks[3]]
	if !bytes.Equal(b2, b3) {
		return nil, errors.New("simweb: gzip bomb: compressed chunks are not periodic (compress/flate changed?)")
	}
	head := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255} // gzip, deflate, no flags, no mtime, max compression
	head = append(head, buf.Bytes()[:marks[1]]...)
	b := &gzipBomb{head: head, block: append([]byte(nil), b2...), repeat: chunks - 2,
		inflated: int64(len(bombPrefix)) + int64(chunks)*bombChunk}
	crc := crc32.ChecksumIEEE([]byte(bombPrefix))
	crc = crc32.Update(crc, crc32.IEEETable, chunk)
	crc = crc32.Update(crc, crc32.IEEETable, chunk)
	crc = crcAfter(chunk).power(b.repeat).apply(crc)
	b.tail = []byte{0x03, 0x00} // an empty final fixed-Huffman block
	b.tail = binary.LittleEndian.AppendUint32(b.tail, crc)
	b.tail = binary.LittleEndian.AppendUint32(b.tail, uint32(b.inflated))
	return b, nil
}

// writeTo writes the bomb, stopping at the first error or when ctx ends.
func (b *gzipBomb) writeTo(ctx context.Context, w io.Writer) error {
	if _, err := w.Write(b.head); err != nil {
		return err
	}
	for range b.repeat {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := w.Write(b.block); err != nil {
			return err
		}
	}
	_, err := w.Write(b.tail)
	return err
}

// affine32 is an affine map on 32-bit vectors over GF(2): x -> L·x ⊕ k,
// with cols[i] = L·e_i.
type affine32 struct {
	cols [32]uint32
	k    uint32
}

func (m affine32) linear(x uint32) uint32 {
	var r uint32
	for i := 0; x != 0; i++ {
		if x&1 != 0 {
			r ^= m.cols[i]
		}
		x >>= 1
	}
	return r
}

func (m affine32) apply(x uint32) uint32 { return m.linear(x) ^ m.k }

// then returns the map "m, then n".
func (m affine32) then(n affine32) affine32 {
	var r affine32
	for i := range 32 {
		r.cols[i] = n.linear(m.cols[i])
	}
	r.k = n.apply(m.k)
	return r
}

// power returns m applied e times.
func (m affine32) power(e int) affine32 {
	var r affine32
	for i := range 32 {
		r.cols[i] = 1 << i
	}
	for ; e > 0; e >>= 1 {
		if e&1 != 0 {
			r = r.then(m)
		}
		m = m.then(m)
	}
	return r
}

// crcAfter is the map from a CRC-32 (IEEE) to the CRC-32 after data more
// bytes: CRC update is affine in the running value.
func crcAfter(data []byte) affine32 {
	var m affine32
	m.k = crc32.Update(0, crc32.IEEETable, data)
	for i := range 32 {
		m.cols[i] = crc32.Update(1<<i, crc32.IEEETable, data) ^ m.k
	}
	return m
}

// gzipBomb answers the bomb URL.
func (s *Server) gzipBomb() *response {
	b, err := s.bomb()
	if err != nil {
		s.log.Error("simweb: gzip bomb unavailable", "err", err)
		return newResponse(http.StatusInternalServerError).setBody("text/html", []byte(errorPage(500)))
	}
	resp := newResponse(http.StatusOK)
	resp.header.Set("Content-Type", "text/html; charset=utf-8")
	resp.header.Set("Content-Encoding", "gzip")
	resp.length = b.size()
	resp.stream = b.writeTo
	return resp
}

// huge answers the huge page: exactly HugeSize bytes, streamed.
func (s *Server) huge(id int32) *response {
	resp := newResponse(http.StatusOK)
	resp.header.Set("Content-Type", "text/html; charset=utf-8")
	resp.length = HugeSize
	resp.stream = func(ctx context.Context, w io.Writer) error { return s.web.writeHuge(ctx, w, id) }
	return resp
}

// writeHuge writes the huge page: HugeSize bytes of paragraphs.
func (w *Web) writeHuge(ctx context.Context, out io.Writer, id int32) error {
	const block = 4096
	prefix := "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>A very long page</title></head><body>\n<h1>A very long page</h1>\n"
	suffix := "<p><a href=\"/\">Home</a></p>\n</body></html>\n"
	n := (HugeSize - len(prefix) - len(suffix)) / block
	pad := HugeSize - len(prefix) - len(suffix) - n*block
	buf := make([]byte, 0, 64<<10)
	buf = append(buf, prefix...)
	buf = append(buf, strings.Repeat("\n", pad)...)
	for b := range n {
		if b%16 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r := newRNG(w.cfg.Seed, sRender, uint64(id), uint64(b))
		start := len(buf)
		buf = append(buf, "<p>"...)
		for {
			word := w.vocab.word(r.next(), 0)
			if len(buf)-start+1+len(word) > block-5 {
				break
			}
			if len(buf)-start > 3 {
				buf = append(buf, ' ')
			}
			buf = append(buf, word...)
		}
		for len(buf)-start < block-5 {
			buf = append(buf, ' ')
		}
		buf = append(buf, "</p>\n"...)
		if len(buf) > 60<<10 {
			if _, err := out.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, suffix...)
	_, err := out.Write(buf)
	return err
}

// trap answers the calendar spider trap: /calendar/ shows the simulated
// month, /calendar/YYYY/MM/ any month from year 1 to 9999, each linking to
// the previous and the next month.
func (s *Server) trap(hi int32, path string, sim time.Time) *response {
	rest := strings.TrimPrefix(path, "/calendar/")
	var y, m int
	rel := ""
	if rest == "" {
		y, m = sim.Year(), int(sim.Month())
	} else {
		parts := strings.Split(rest, "/")
		if len(parts) != 3 || parts[2] != "" || len(parts[0]) != 4 || len(parts[1]) != 2 {
			return newResponse(http.StatusNotFound).setBody("text/html", []byte(errorPage(404)))
		}
		var e1, e2 error
		y, e1 = strconv.Atoi(parts[0])
		m, e2 = strconv.Atoi(parts[1])
		if e1 != nil || e2 != nil || y < 1 || y > 9999 || m < 1 || m > 12 {
			return newResponse(http.StatusNotFound).setBody("text/html", []byte(errorPage(404)))
		}
		rel = "../../"
	}
	month := time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	title := month.Format("January 2006")
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>Calendar: %s</title></head><body>\n<h1>%s</h1>\n<p>No events this month.</p>\n<ul>\n", title, title)
	if prev := month.AddDate(0, -1, 0); prev.Year() >= 1 {
		fmt.Fprintf(&b, "<li><a href=\"%s%04d/%02d/\">Previous month</a></li>\n", rel, prev.Year(), int(prev.Month()))
	}
	if next := month.AddDate(0, 1, 0); next.Year() <= 9999 {
		fmt.Fprintf(&b, "<li><a href=\"%s%04d/%02d/\">Next month</a></li>\n", rel, next.Year(), int(next.Month()))
	}
	b.WriteString("<li><a href=\"/\">Home</a></li>\n</ul>\n</body></html>\n")
	resp := newResponse(http.StatusOK).setBody("text/html; charset=utf-8", []byte(b.String()))
	resp.page = s.web.special.trap
	return resp
}

// image answers /img/N.png for N below the host's image count: a small
// PNG whose colours depend on (seed, host, N).
func (s *Server) image(hi int32, path string) *response {
	w := s.web
	nstr := strings.TrimSuffix(strings.TrimPrefix(path, "/img/"), ".png")
	n, err := strconv.Atoi(nstr)
	if err != nil || n < 0 || n >= int(w.hosts[hi].images) || !strings.HasSuffix(path, ".png") || strconv.Itoa(n) != nstr {
		return newResponse(http.StatusNotFound).setBody("text/html", []byte(errorPage(404)))
	}
	body, err := w.pngImage(hi, n)
	if err != nil {
		return newResponse(http.StatusInternalServerError).setBody("text/html", []byte(errorPage(500)))
	}
	resp := newResponse(http.StatusOK).setBody("image/png", body)
	resp.header.Set("Last-Modified", w.cfg.Epoch.AddDate(0, 0, -30).Format(http.TimeFormat))
	resp.header.Set("ETag", fmt.Sprintf(`"img-%016x"`, hash3(w.cfg.Seed, sImage, uint64(hi), uint64(n))))
	return resp
}

// pngImage encodes image n of host hi.
func (w *Web) pngImage(hi int32, n int) ([]byte, error) {
	r := newRNG(w.cfg.Seed, sImage, uint64(hi)<<32|uint64(n), 1)
	pal := color.Palette{}
	for range 4 {
		pal = append(pal, color.RGBA{uint8(r.next()), uint8(r.next()), uint8(r.next()), 255})
	}
	img := image.NewPaletted(image.Rect(0, 0, 16, 16), pal)
	for i := range img.Pix {
		img.Pix[i] = uint8(r.intn(4))
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("simweb: png: %w", err)
	}
	return buf.Bytes(), nil
}
