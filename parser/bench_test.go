package parser_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/trawl/trawl/parser"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/urlutil"
)

// benchPages returns the HTML pages of a simweb, as served, and their
// total size.
func benchPages(b *testing.B) ([]segment.Content, int64) {
	c := newSimwebCorpus(b, 21, 40, 2000)
	var pages []segment.Content
	var total int64
	for _, row := range c.truth {
		if isHTMLKind(row.Kind) && row.Status == 200 {
			pc := c.content(b, row, 0)
			pages = append(pages, pc)
			total += int64(len(pc.Body))
		}
	}
	return pages, total
}

// BenchmarkParseSimweb parses simweb pages one after the other with the
// default options and trawl's default URL filters (reports pages/s and
// MB/s of HTML).
func BenchmarkParseSimweb(b *testing.B) {
	benchParse(b, parser.Options{Filter: urlutil.NewFilters(urlutil.DefaultFilterOptions())})
}

// BenchmarkParseSimwebMD5 is BenchmarkParseSimweb computing the MD5
// signature only (Options.NoTextProfile), as the parse job does when the
// signature in use is md5.
func BenchmarkParseSimwebMD5(b *testing.B) {
	benchParse(b, parser.Options{Filter: urlutil.NewFilters(urlutil.DefaultFilterOptions()), NoTextProfile: true})
}

// benchParse parses simweb pages one after the other with o.
func benchParse(b *testing.B, o parser.Options) {
	pages, total := benchPages(b)
	p := parser.New(o)
	b.SetBytes(total / int64(len(pages)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, err := p.Parse(pages[i%len(pages)]); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkTokenizeSimweb runs a bare golang.org/x/net/html Tokenizer
// loop (Next until the end, nothing kept) over the pages
// BenchmarkParseSimweb parses, one after the other: the floor under
// Parse's cost. Parse's ns/op over this one's is the parser's overhead
// factor.
func BenchmarkTokenizeSimweb(b *testing.B) {
	pages, total := benchPages(b)
	b.SetBytes(total / int64(len(pages)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		z := html.NewTokenizer(bytes.NewReader(pages[i%len(pages)].Body))
		for z.Next() != html.ErrorToken {
		}
	}
	cpu.report(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkParseSimwebParallel is BenchmarkParseSimweb on all CPUs with
// one shared Parser.
func BenchmarkParseSimwebParallel(b *testing.B) {
	pages, total := benchPages(b)
	p := parser.New(parser.Options{Filter: urlutil.NewFilters(urlutil.DefaultFilterOptions())})
	b.SetBytes(total / int64(len(pages)))
	b.ReportAllocs()
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			if _, err := p.Parse(pages[int(i)%len(pages)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkTextProfile measures the fuzzy signature alone on simweb text.
func BenchmarkTextProfile(b *testing.B) {
	pages, _ := benchPages(b)
	var texts []string
	var total int64
	for _, pc := range pages[:200] {
		r, err := parser.Parse(pc, parser.Options{})
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, r.Title+" "+r.Text)
		total += int64(len(r.Text))
	}
	b.SetBytes(total / int64(len(texts)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		parser.TextProfileSignature(texts[i%len(texts)], nil)
	}
}

// cpuClock measures the process's CPU time over a benchmark loop.
type cpuClock struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuClock {
	t, ok := processCPU()
	return cpuClock{start: t, ok: ok}
}

// report adds the CPU time per operation as the metric "cpu-ns/op" (all
// the process's threads, the garbage collector's too): unlike ns/op it
// does not count the time other processes had the CPU.
func (c cpuClock) report(b *testing.B) {
	if t, ok := processCPU(); ok && c.ok {
		b.ReportMetric(float64(t-c.start)/float64(b.N), "cpu-ns/op")
	}
}
