package simweb

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/trawl/trawl/parquetio"
)

// TruthPage is one row of the truth file: everything known about one URL
// of the web.
type TruthPage struct {
	// ID is the page id (Web.Page).
	ID int32 `parquet:"id"`
	// URL is the page's absolute URL under the addressing the truth was
	// written for.
	URL string `parquet:"url"`
	// Host is the host name (h0001.sim.test), Path the URL path.
	Host string `parquet:"host,dict"`
	Path string `parquet:"path"`
	// Kind is home, directory, leaf, document, redirect, redirect_loop,
	// missing, trap, huge, gzip_bomb, hostile or unresolvable.
	Kind string `parquet:"kind,dict"`
	// Status is the HTTP status a GET gets when the host is healthy (0: no
	// response: blackhole, reset, unresolvable; 503 on hosts always down).
	Status int32 `parquet:"status"`
	// Target is the redirect target's URL ("" if not a redirect).
	Target string `parquet:"target"`
	// ContentType is the media type served ("" if none).
	ContentType string `parquet:"content_type,dict"`
	// Charset is the encoding of the body (utf-8, windows-1252, Shift_JIS);
	// CharsetIn says where it is declared: header, meta, both or none.
	Charset   string `parquet:"charset,dict"`
	CharsetIn string `parquet:"charset_in,dict"`
	// Genre and HostRole describe the page's host.
	Genre    string `parquet:"genre,dict"`
	HostRole string `parquet:"host_role,dict"`
	// ChangeRate is the true Poisson change rate, in changes per day
	// (0: never changes); ChangeClass the mixture component it was drawn
	// from.
	ChangeRate  float64 `parquet:"change_rate"`
	ChangeClass string  `parquet:"change_class,dict"`
	// Created is when version 0 was written (before the epoch).
	Created time.Time `parquet:"created,timestamp(millisecond)"`
	// PageRank is the page's PageRank in the link graph (damping 0.85;
	// all pages sum to 1).
	PageRank float64 `parquet:"pagerank"`
	// Features of the page (bytes of version 0).
	Features Features `parquet:"features"`
	// RobotsAllowed: robots.txt lets crawlers (other than "badbot") fetch it.
	RobotsAllowed bool `parquet:"robots_allowed"`
	// Noindex and Nofollow: the page's meta robots.
	Noindex  bool `parquet:"noindex"`
	Nofollow bool `parquet:"nofollow"`
	// BaseHref: the page has a <base href>.
	BaseHref bool `parquet:"base_href"`
	// Topic is the page's topic in a topical web (Web.PageTopic), -1 if
	// it has none (always, in a web without topics).
	Topic int32 `parquet:"topic"`
	// BehindTunnel: the page lies behind a tunnel (Web.BehindTunnel).
	BehindTunnel bool `parquet:"behind_tunnel"`
}

// TruthHost is one row of the host truth file.
type TruthHost struct {
	Index int32  `parquet:"index"`
	Name  string `parquet:"name"`
	// IP is the host's own loopback address (served there with IPPerHost).
	IP    string `parquet:"ip"`
	Role  string `parquet:"role,dict"`
	Genre string `parquet:"genre,dict"`
	// Pages is the number of content pages; Home the home page URL.
	Pages int32  `parquet:"pages"`
	Home  string `parquet:"home"`
	// LatencyMillis is the median added latency before answering.
	LatencyMillis int32 `parquet:"latency_ms"`
	// KeepAlive is the number of requests per connection (0: unlimited).
	KeepAlive  int32  `parquet:"keep_alive"`
	Validators string `parquet:"validators,dict"`
	// RobotsStatus is the status of /robots.txt; Robots its text;
	// CrawlDelaySeconds its Crawl-delay (0 if none).
	RobotsStatus      int32   `parquet:"robots_status"`
	Robots            string  `parquet:"robots"`
	CrawlDelaySeconds float64 `parquet:"crawl_delay_s"`
	// Topic is the host's topic in a topical web (-1: none); Tunnel says
	// whether it is a tunnel host (see Web.BehindTunnel).
	Topic  int32 `parquet:"topic"`
	Tunnel bool  `parquet:"tunnel"`
}

// contentType is the media type served for page p ("" if no body).
func (p *page) contentType() string {
	switch p.kind {
	case KindDocument:
		return "application/pdf"
	case KindHome, KindDirectory, KindLeaf, KindTrap, KindHuge, KindBomb, KindMissing:
		return "text/html"
	}
	if p.status == 200 {
		return "text/html"
	}
	return ""
}

// truthRow builds the row of page id; rendering fills Bytes and Words.
func (w *Web) truthRow(r *renderer, id int32, a Addressing) TruthPage {
	p := &w.pages[id]
	h := &w.hosts[p.host]
	info := w.pageInfo(id)
	row := TruthPage{
		ID: id, URL: w.URL(int(id), a), Host: h.name, Path: p.path,
		Kind: p.kind.String(), Status: int32(info.Status),
		ContentType: p.contentType(),
		Genre:       h.genre.String(), HostRole: h.role.String(),
		ChangeRate: p.rate, ChangeClass: p.class.String(),
		Created: info.Created, PageRank: p.pagerank, Features: info.Features,
		RobotsAllowed: info.RobotsAllowed, Noindex: info.Noindex, Nofollow: info.Nofollow,
		BaseHref: p.flags&flagBase != 0,
		Topic:    int32(info.Topic), BehindTunnel: info.BehindTunnel,
	}
	if p.target >= 0 {
		row.Target = w.URL(int(p.target), a)
	}
	if p.kind.IsContent() && p.kind != KindDocument {
		row.Charset = charsetName(p.enc)
		switch p.flags & (flagCharsetHead | flagCharsetMeta) {
		case flagCharsetHead:
			row.CharsetIn = "header"
		case flagCharsetMeta:
			row.CharsetIn = "meta"
		case flagCharsetHead | flagCharsetMeta:
			row.CharsetIn = "both"
		default:
			row.CharsetIn = "none"
		}
	}
	if p.kind.IsContent() && p.flags&flagBroken == 0 {
		body, words := r.body(id, 0, a)
		row.Features.Bytes = int64(len(body))
		row.Features.Words = int32(words)
	}
	if p.flags&flagBroken != 0 {
		row.ContentType = "text/html"
	}
	return row
}

// WriteTruth writes the page truth as Parquet to out, with URLs under the
// canonical addressing (host names, no port). See WriteTruthAddressed.
func (w *Web) WriteTruth(out io.Writer) error { return w.WriteTruthAddressed(out, Addressing{}) }

// WriteTruthAddressed writes one TruthPage row per page, in page id order,
// as a zstd Parquet file, with URLs as a server with addressing a serves
// them (Server.Addressing). It renders version 0 of every content page for
// its size, on all CPUs.
func (w *Web) WriteTruthAddressed(out io.Writer, a Addressing) error {
	const batch = 4096
	n := len(w.pages)
	opts := []parquetio.WriterOption{parquetio.RowGroupRows(64 << 10),
		parquetio.Metadata("simweb.seed", strconv.FormatUint(w.cfg.Seed, 10)),
		parquetio.Metadata("simweb.hosts", strconv.Itoa(w.cfg.Hosts)),
		parquetio.Metadata("simweb.pages", strconv.Itoa(w.cfg.Pages)),
		parquetio.Metadata("simweb.epoch", w.cfg.Epoch.Format(time.RFC3339)),
		parquetio.Metadata("simweb.hazards", w.cfg.Hazards.String())}
	if w.topical() {
		opts = append(opts, parquetio.Metadata("simweb.topics", strconv.Itoa(w.cfg.Topics)))
	}
	pw := parquetio.NewWriter[TruthPage](out, opts...)
	rows := make([]TruthPage, batch)
	workers := runtime.GOMAXPROCS(0)
	renderers := make([]*renderer, workers)
	for i := range renderers {
		renderers[i] = w.newRenderer()
	}
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		var wg sync.WaitGroup
		for k := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for id := lo + k; id < hi; id += workers {
					rows[id-lo] = w.truthRow(renderers[k], int32(id), a)
				}
			}()
		}
		wg.Wait()
		if err := pw.Write(rows[:hi-lo]...); err != nil {
			pw.Close()
			return fmt.Errorf("simweb: write truth: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("simweb: write truth: %w", err)
	}
	return nil
}

// WriteHostTruth writes one TruthHost row per host as a zstd Parquet file,
// with home URLs under addressing a.
func (w *Web) WriteHostTruth(out io.Writer, a Addressing) error {
	pw := parquetio.NewWriter[TruthHost](out)
	for i := range w.hosts {
		h := &w.hosts[i]
		row := TruthHost{
			Index: int32(i), Name: h.name, IP: h.ip.String(), Role: h.role.String(), Genre: h.genre.String(),
			Pages: h.content, Home: w.URL(int(h.home), a),
			LatencyMillis: int32(h.latency / time.Millisecond), KeepAlive: int32(h.keepAlive),
			Validators:   h.validators.String(),
			RobotsStatus: int32(h.robots.status), Robots: h.robots.body,
			CrawlDelaySeconds: h.robots.delay.Seconds(),
			Topic:             int32(h.topic) - 1, Tunnel: h.tunnel,
		}
		if i >= w.regular {
			row.Genre = ""
			row.RobotsStatus = 0
		}
		if err := pw.Write(row); err != nil {
			pw.Close()
			return fmt.Errorf("simweb: write host truth: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("simweb: write host truth: %w", err)
	}
	return nil
}
