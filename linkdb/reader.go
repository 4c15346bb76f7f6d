package linkdb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"slices"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Reader reads an installed LinkDB: the Inlink rows of the part files in
// linkdb/current, each part sorted by (To, From). Files are opened per
// iteration, so a Reader holds no resources and is safe for concurrent use.
type Reader struct {
	fsys  storage.FS
	parts []string
}

// Open lists the part files of the LinkDB at linkdbDir. A missing LinkDB
// is an error that says how to make one.
func Open(fsys storage.FS, linkdbDir string) (*Reader, error) {
	dir := Current(linkdbDir)
	parts, err := parquetio.PartFiles(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("linkdb: %s is not a LinkDB: %s does not exist (run invertlinks first)", linkdbDir, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("linkdb: open %s: %w", linkdbDir, err)
	}
	return &Reader{fsys: fsys, parts: parts}, nil
}

// Parts returns the part files' paths, sorted by name.
func (r *Reader) Parts() []string { return slices.Clone(r.parts) }

// All iterates over every inlink, part by part; within a part rows come in
// (To, From) order. Iteration stops at the first error, which names the
// file.
func (r *Reader) All(ctx context.Context) iter.Seq2[Inlink, error] { return r.read(ctx, r.parts) }

// part iterates over the rows of one part file.
func (r *Reader) part(ctx context.Context, name string) iter.Seq2[Inlink, error] {
	return r.read(ctx, []string{name})
}

// read iterates over the rows of part files, stopping at the first error.
func (r *Reader) read(ctx context.Context, parts []string) iter.Seq2[Inlink, error] {
	return func(yield func(Inlink, error) bool) {
		for l, err := range parquetio.ReadParts[Inlink](ctx, r.fsys, parts) {
			if err != nil {
				yield(Inlink{}, fmt.Errorf("linkdb: %w", err))
				return
			}
			if !yield(l, nil) {
				return
			}
		}
	}
}

// Inlinks returns the links to url, ordered by From. It scans each part up
// to the first row past url (parts are sorted).
func (r *Reader) Inlinks(ctx context.Context, url string) ([]Inlink, error) {
	var out []Inlink
	for _, name := range r.parts {
		for l, err := range r.part(ctx, name) {
			if err != nil {
				return nil, err
			}
			if l.To == url {
				out = append(out, l)
			} else if l.To > url {
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b Inlink) int { return cmp.Compare(a.From, b.From) })
	return out, nil
}

// AnchorCount is an anchor text and how many links carry it.
type AnchorCount struct {
	Anchor string
	Count  int
}

// TopAnchors counts the non-empty anchor texts of links and returns the n
// most frequent (all if n <= 0), most frequent first, ties in byte order.
func TopAnchors(links []Inlink, n int) []AnchorCount {
	counts := map[string]int{}
	for _, l := range links {
		if l.Anchor != "" {
			counts[l.Anchor]++
		}
	}
	out := make([]AnchorCount, 0, len(counts))
	for a, c := range counts {
		out = append(out, AnchorCount{a, c})
	}
	slices.SortFunc(out, func(a, b AnchorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Anchor, b.Anchor))
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// Stats summarizes a LinkDB: its links, the URLs they point to, and the
// URLs with the most inlinks.
type Stats struct {
	Links, URLs int64
	// Top lists the URLs with the most inlinks, most first, ties in URL
	// order.
	Top []URLCount
}

// URLCount is a URL and how many inlinks it has.
type URLCount struct {
	URL   string
	Count int64
}

// Stats reads the whole LinkDB once and keeps the top URLs by inlinks.
func (r *Reader) Stats(ctx context.Context, top int) (*Stats, error) {
	s := &Stats{}
	var cur URLCount
	flush := func() {
		if cur.Count == 0 {
			return
		}
		s.URLs++
		s.Top = append(s.Top, cur)
		if top > 0 && len(s.Top) > 4*top {
			s.Top = topURLs(s.Top, top)
		}
	}
	for _, name := range r.parts {
		for l, err := range r.part(ctx, name) {
			if err != nil {
				return nil, err
			}
			s.Links++
			if l.To != cur.URL {
				flush()
				cur = URLCount{URL: l.To}
			}
			cur.Count++
		}
		flush()
		cur = URLCount{}
	}
	s.Top = topURLs(s.Top, top)
	return s, nil
}

func topURLs(u []URLCount, n int) []URLCount {
	slices.SortFunc(u, func(a, b URLCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.URL, b.URL)) })
	if n >= 0 && len(u) > n {
		u = u[:n]
	}
	return u
}
