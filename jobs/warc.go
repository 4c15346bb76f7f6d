package jobs

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/trawl/trawl/fetcher"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/warc"
)

// WARCOptions configures the WARC files a fetch (FetchOptions.WARC) or a
// WARC export writes (package warc).
type WARCOptions struct {
	// MaxFileSize is the size at which a task starts a new WARC file;
	// 0 means warc.DefaultMaxFileSize, 1 GB (the warc.maxFileSize
	// setting).
	MaxFileSize int64
	// Prefix begins the file names; "" means warc.DefaultPrefix.
	Prefix string
	// Host ends the file names (Heritrix's host part; each task adds its
	// number); "" means the task's machine's host name.
	Host string
}

// Validate checks o.
func (o WARCOptions) Validate() error {
	if o.MaxFileSize < 0 {
		return fmt.Errorf("warc: negative maximum file size %d", o.MaxFileSize)
	}
	if _, err := warc.NewFileWriter(o.fileOptions(0, discardCreate, "")); err != nil {
		return err
	}
	return nil
}

func discardCreate(string) (io.WriteCloser, error) { return nil, errors.New("validation only") }

// fileOptions returns the warc.FileOptions of the task part (its number
// is added to the host part of the file names, so that tasks never write
// one name).
func (o WARCOptions) fileOptions(part int, create func(string) (io.WriteCloser, error), agent string) warc.FileOptions {
	host := o.Host
	if host == "" {
		host = hostName()
	}
	return warc.FileOptions{
		Create: create, Prefix: o.Prefix, Host: fmt.Sprintf("%s~%05d", host, part), MaxFileSize: o.MaxFileSize,
		Info: warc.Info{Software: fetcher.Version, Agent: agent, Robots: "obey",
			Description: "trawl crawl (WARC 1.1, ISO 28500:2017)"},
	}
}

// warcQueue is how many exchanges a task's WARC writer may have waiting.
const warcQueue = 64

// warcOutput is the WARC output of a job with output record O: a file
// output in dir whose sink takes the exchange get returns for a record
// (nil: none) and writes it on a goroutine of its own, so that gzip and
// SHA-1 never run on the goroutine that emits.
func warcOutput[O any](dir string, o WARCOptions, agent string, get func(*O) *warc.Exchange) mapreduce.Output[O] {
	return mapreduce.WriteFiles(dir, func(part int, create func(string) (io.WriteCloser, error)) mapreduce.FileSink[O] {
		return &warcSink[O]{get: get, opts: o.fileOptions(part, create, agent)}
	})
}

// warcSink is one task's WARC writer (a mapreduce.FileSink).
type warcSink[O any] struct {
	get  func(*O) *warc.Exchange
	opts warc.FileOptions

	ch   chan *warc.Exchange
	done chan struct{}
	fw   *warc.FileWriter
	mu   sync.Mutex
	err  error // the writer goroutine's first error
}

func (s *warcSink[O]) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Write hands the record's exchange to the writer goroutine, started at
// the first one (a task without exchanges creates no file).
func (s *warcSink[O]) Write(r *O) error {
	e := s.get(r)
	if e == nil {
		return nil
	}
	if s.ch == nil {
		fw, err := warc.NewFileWriter(s.opts)
		if err != nil {
			return err
		}
		s.fw, s.ch, s.done = fw, make(chan *warc.Exchange, warcQueue), make(chan struct{})
		go s.run()
	}
	if err := s.failed(); err != nil {
		return err
	}
	s.ch <- e
	return nil
}

func (s *warcSink[O]) run() {
	defer close(s.done)
	for e := range s.ch {
		if s.failed() != nil {
			continue // drain; Write and Close report the error
		}
		if err := s.fw.Write(e); err != nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}
	}
}

// Close waits for the writer and closes its last file and index.
func (s *warcSink[O]) Close() (int64, int64, error) {
	if s.ch == nil {
		return 0, 0, nil
	}
	close(s.ch)
	<-s.done
	err := s.fw.Close()
	st := s.fw.Stats()
	return st.Records, st.Bytes, err
}

// exchangeOf is the exchange of a fetcher result with a response, from
// what the fetcher kept with Options.KeepExchange; nil without a
// response, or for a page of a type not stored (fetcher.contentTypes),
// whose body was not downloaded.
func exchangeOf(r *fetcher.Result, t time.Time) *warc.Exchange {
	if r.HTTPStatus == 0 || r.Header == nil || r.TypeRefused {
		return nil
	}
	return &warc.Exchange{
		URL: r.Request.URL, Time: t, IP: r.RemoteIP, RequestHeader: r.RequestHeader, Proto: r.Proto,
		Status: r.HTTPStatus, Header: r.Header, Body: r.Body, Truncated: r.Truncated,
	}
}

// exchangeOfContent is the exchange of a segment's content row: a 200
// response (the fetcher stores content for status 200 alone, see
// fetcher.HTTPCode) with the row's headers and body, and no request (a
// segment keeps none).
func exchangeOfContent(c *segment.Content) *warc.Exchange {
	h := make(http.Header, len(c.Headers))
	for k, v := range c.Headers {
		h[k] = []string{v}
	}
	return &warc.Exchange{URL: c.URL, Time: c.FetchTime, Status: http.StatusOK, Header: h, Body: c.Body, Truncated: c.Truncated}
}

// warcDir is the WARC directory of the segment seg.
func warcDir(seg string) string { return storage.Join(seg, segment.DirWARC) }

// hostName is the machine's host name ("localhost" if it has none).
func hostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}
