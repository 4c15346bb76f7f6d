package main

import (
	"bytes"
	"mime"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/html"
)

// parsed is the parse output of one HTML page, as written to the parse
// Parquet file.
type parsed struct {
	URL      string   `parquet:"url"`
	Title    string   `parquet:"title"`
	Text     string   `parquet:"text"`
	Outlinks []string `parquet:"outlinks,list"`
}

// isHTML reports whether a response is an HTML page worth parsing.
func isHTML(f *fetched) bool {
	if f.err != nil || f.status != 200 {
		return false
	}
	mt, _, err := mime.ParseMediaType(f.contentType)
	if err != nil {
		return false
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// parseAll parses the HTML pages among pages with workers goroutines and
// returns their outputs in the order of pages.
func parseAll(pages []fetched, workers int) []parsed {
	var idx []int
	for i := range pages {
		if isHTML(&pages[i]) {
			idx = append(idx, i)
		}
	}
	out := make([]parsed, len(idx))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range next {
				p := &pages[idx[j]]
				out[j] = parseHTML(p.url, p.body)
			}
		})
	}
	for j := range idx {
		next <- j
	}
	close(next)
	wg.Wait()
	return out
}

// parseHTML tokenizes body once and returns its title, its visible text
// (the text tokens outside <title>, <script> and <style>, joined by single
// spaces) and its outlinks (the href of every <a>, resolved against
// pageURL, without fragment, http and https only, in document order,
// duplicates kept).
func parseHTML(pageURL string, body []byte) parsed {
	p := parsed{URL: pageURL}
	base, err := url.Parse(pageURL)
	if err != nil {
		return p
	}
	var (
		text    strings.Builder
		title   strings.Builder
		inTitle bool
		skip    int // depth inside script and style
	)
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			p.Title = strings.TrimSpace(title.String())
			p.Text = text.String()
			return p
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "a":
				for hasAttr {
					var key, val []byte
					key, val, hasAttr = z.TagAttr()
					if string(key) == "href" {
						if s, ok := resolve(base, string(val)); ok {
							p.Outlinks = append(p.Outlinks, s)
						}
						break
					}
				}
			case "title":
				inTitle = tt == html.StartTagToken && title.Len() == 0 // the first title only
			case "script", "style":
				if tt == html.StartTagToken {
					skip++
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "title":
				inTitle = false
			case "script", "style":
				if skip > 0 {
					skip--
				}
			}
		case html.TextToken:
			switch {
			case inTitle:
				title.Write(z.Text())
			case skip == 0:
				t := bytes.TrimSpace(z.Text())
				if len(t) == 0 {
					continue
				}
				if text.Len() > 0 {
					text.WriteByte(' ')
				}
				text.Write(t)
			}
		}
	}
}

// resolve resolves href against base and returns it as a crawlable URL.
func resolve(base *url.URL, href string) (string, bool) {
	ref, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return "", false
	}
	return cleanURL(base.ResolveReference(ref))
}

// cleanURL drops u's fragment and returns it as a string if it is an
// http or https URL with a host.
func cleanURL(u *url.URL) (string, bool) {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}
