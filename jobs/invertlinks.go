package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/linkdb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/urlutil"
)

// The engine job of InvertLinks, as Registry knows it, and its counters.
const (
	JobInvertLinks     = "invertlinks"
	ctrLinksRead       = "links_read"      // links of the segments read
	ctrLinksInternal   = "links_internal"  // skipped as internal (host or domain)
	ctrLinksOld        = "links_old"       // rows of the previous LinkDB read
	ctrInlinksWritten  = "inlinks_written" // rows of the new LinkDB
	ctrLinkDBDropped   = "inlinks_dropped" // over MaxInlinks for their URL
	ctrLinkedURLs      = "linked_urls"     // URLs with at least one inlink
	dirLinkDB          = "linkdb"
	DefaultLinkDBLimit = 10000
)

// LinkDBDir returns the URI of the crawl's LinkDB directory.
func LinkDBDir(crawl string) string { return storage.Join(crawl, dirLinkDB) }

// InvertLinksOptions configures InvertLinks.
type InvertLinksOptions struct {
	// Segments are the URIs of parsed segments whose links are added.
	Segments []string
	// IgnoreInternalHost skips links between pages of one host, and
	// IgnoreInternalDomain links within one registered domain (Nutch's
	// linkdb.ignore.internal.links and linkdb.ignore.external.links'
	// sibling). PageRank over the LinkDB (LinkRank) wants every link, so
	// both are off by default, unlike Nutch.
	IgnoreInternalHost, IgnoreInternalDomain bool
	// MaxInlinks caps the inlinks kept per URL, the first in From order
	// (Nutch's linkdb.max.inlinks); 0 means DefaultLinkDBLimit.
	MaxInlinks int
	// MaxAnchorLength caps each anchor text in bytes (Nutch's
	// linkdb.max.anchor.length); 0 means linkdb.MaxAnchorLength.
	MaxAnchorLength int
}

// Validate reports a segment list that is empty or names a segment twice,
// and negative limits.
func (o InvertLinksOptions) Validate() error {
	if len(o.Segments) == 0 {
		return errors.New("invertlinks: no segment given")
	}
	seen := map[string]bool{}
	for _, s := range o.Segments {
		if seen[s] {
			return fmt.Errorf("invertlinks: segment %s given twice", s)
		}
		seen[s] = true
	}
	if o.MaxInlinks < 0 || o.MaxAnchorLength < 0 {
		return fmt.Errorf("invertlinks: max inlinks (%d) and max anchor length (%d) must not be negative", o.MaxInlinks, o.MaxAnchorLength)
	}
	return nil
}

func (o InvertLinksOptions) withDefaults() InvertLinksOptions {
	o.MaxInlinks = cmp.Or(o.MaxInlinks, DefaultLinkDBLimit)
	o.MaxAnchorLength = cmp.Or(o.MaxAnchorLength, linkdb.MaxAnchorLength)
	return o
}

// InvertLinksResult reports an InvertLinks run.
type InvertLinksResult struct {
	// LinksRead counts the segments' links; Internal those skipped as
	// internal; Inlinks the rows of the new LinkDB and URLs the URLs
	// they point to; Dropped the inlinks over the per-URL cap.
	LinksRead, Internal, Inlinks, URLs, Dropped int64
	Counters                                    *mapreduce.Counters
	Duration                                    time.Duration
}

// InvertLinks adds the links of parsed segments to the crawl's LinkDB
// (Nutch's LinkDb, `nutch invertlinks`): it reads each segment's
// crawl_parse links (already normalized and filtered by parse), inverts
// them to (To, From, Anchor) rows, merges them with the current LinkDB and
// installs the result with one rename, as a CrawlDB is installed. A link
// from one page to another is one row: a new segment's anchor replaces the
// stored one, so inverting a segment twice changes nothing. The LinkDB is
// locked while the job runs; a failure or a kill leaves it as it was.
func InvertLinks(ctx context.Context, env Env, o InvertLinksOptions) (res *InvertLinksResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("invertlinks: %w", err)
	}
	ldURI, ldPath := LinkDBDir(cp.crawl), linkDBPath(cp)
	if err := cp.fs.MkdirAll(ldPath); err != nil {
		return nil, fmt.Errorf("invertlinks: create %s: %w", ldURI, err)
	}
	lock, err := env.lockLinkDB(cp, "invertlinks")
	if err != nil {
		return nil, err
	}
	defer env.unlock(lock, &err)
	spec := invertLinks{Options: o}
	type segPath struct {
		fs   storage.FS
		path string
	}
	var marks []segPath
	for _, s := range o.Segments {
		fsys, p, err := env.resolver().Resolve(s)
		if err != nil {
			return nil, fmt.Errorf("invertlinks: segment %s: %w", s, err)
		}
		marks = append(marks, segPath{fsys, p})
		st, err := segment.Inspect(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("invertlinks: %w", err)
		}
		if !st.Has(segment.DirCrawlParse) {
			return nil, fmt.Errorf("invertlinks: segment %s is not parsed (state %s): run parse first", s, st.State)
		}
		spec.Segments = append(spec.Segments, storage.Join(s, segment.DirCrawlParse))
	}
	cur := linkdb.Current(ldPath)
	if ok, err := storage.Exists(cp.fs, cur); err != nil {
		return nil, fmt.Errorf("invertlinks: %w", err)
	} else if ok {
		spec.Current = storage.Join(ldURI, linkdb.CurrentName)
	}
	if spec.Reduces, err = env.dbParts(cp, cur); err != nil {
		return nil, fmt.Errorf("invertlinks: %w", err)
	}
	out := crawldb.NewTempDir(ldPath)
	spec.Out = storage.Join(ldURI, path.Base(out))
	jr, err := env.Run(ctx, spec)
	if err != nil {
		_ = cp.fs.RemoveAll(out)
		return nil, fmt.Errorf("invertlinks: %w", err)
	}
	if err := crawldb.Install(cp.fs, ldPath, out, false); err != nil {
		return nil, fmt.Errorf("invertlinks: install the new LinkDB: %w", err)
	}
	for _, m := range marks {
		if err := segment.MarkInverted(m.fs, m.path, ldURI, time.Now()); err != nil {
			// Only work is lost: the segment is inverted again next time.
			env.log().Warn("invertlinks: the LinkDB has the segment's links, but marking it failed", "err", err)
		}
	}
	c := jr.Counters
	res = &InvertLinksResult{
		LinksRead: c.Get(JobInvertLinks, ctrLinksRead), Internal: c.Get(JobInvertLinks, ctrLinksInternal),
		Inlinks: c.Get(JobInvertLinks, ctrInlinksWritten), URLs: c.Get(JobInvertLinks, ctrLinkedURLs),
		Dropped: c.Get(JobInvertLinks, ctrLinkDBDropped), Counters: c, Duration: time.Since(start),
	}
	env.log().Info("invertlinks done", "job", "invertlinks", "segments", len(o.Segments), "links", res.LinksRead,
		"internal", res.Internal, "inlinks", res.Inlinks, "urls", res.URLs, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// linkDBPath is the crawl's LinkDB directory in its file system.
func linkDBPath(cp crawlPaths) string { return path.Join(path.Dir(cp.dbPath), dirLinkDB) }

// lockLinkDB takes the LinkDB's lock for job and repairs what a killed
// job left (an interrupted install, temporary directories), as lock and
// recoverDB do for the CrawlDB. On error the lock is released again.
func (e Env) lockLinkDB(cp crawlPaths, job string) (*crawldb.LockHandle, error) {
	ldPath := linkDBPath(cp)
	lock, err := crawldb.LockWith(cp.fs, ldPath, job, e.ForceLock,
		crawldb.LockOptions{MaxAge: e.LockMaxAge, NoMaxAge: e.NoLockMaxAge, Logger: e.log()})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", job, err)
	}
	if _, err := crawldb.Recover(cp.fs, ldPath, false); err != nil {
		e.unlock(lock, &err)
		return nil, fmt.Errorf("%s: %w", job, err)
	}
	return lock, nil
}

// ParsedSegments returns the URIs of the crawl's parsed segments in name
// order; with onlyNew, those whose links are not yet in the LinkDB (no
// segment.InvertedMarker): what a crawl that keeps the LinkDB current
// inverts after each round.
func ParsedSegments(env Env, onlyNew bool) ([]string, error) {
	cp, err := env.paths()
	if err != nil {
		return nil, err
	}
	infos, err := listSegments(cp)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		name := fi.Name()
		if !fi.IsDir() || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		p := path.Join(cp.segPath, name)
		if onlyNew {
			done, err := segment.IsInverted(cp.fs, p)
			if err != nil {
				return nil, err
			}
			if done {
				continue
			}
		}
		st, err := segment.Inspect(cp.fs, p)
		if err != nil {
			return nil, err
		}
		if st.Has(segment.DirCrawlParse) {
			out = append(out, storage.Join(cp.segURI, name))
		}
	}
	slices.Sort(out)
	return out, nil
}

// linkRow is what invertlinks reads of a crawl_parse row: a parsed
// page's links, or a single link.
type linkRow struct {
	URL     string         `parquet:"url"`
	Status  crawldb.Status `parquet:"status"`
	FromURL string         `parquet:"from_url"`
	Anchor  string         `parquet:"anchor"`
	Links   []linkRowLink  `parquet:"links,list"`
}

// linkRowLink is what invertlinks reads of a segment.ParseLink.
type linkRowLink struct {
	URL    string `parquet:"url"`
	Anchor string `parquet:"anchor"`
}

// linkValue is an inlink in the shuffle: Old marks a row of the previous
// LinkDB, which a segment's link of the same From replaces.
type linkValue struct {
	From   string `parquet:"from"`
	Anchor string `parquet:"anchor"`
	Old    bool   `parquet:"old"`
}

// invertLinks is InvertLinks' job: segments' links and the current LinkDB
// by target URL into a new LinkDB.
type invertLinks struct {
	Segments []string // crawl_parse directories (URIs)
	Current  string   // the current LinkDB, if any
	Out      string
	Reduces  int
	Options  InvertLinksOptions // with defaults
}

func (invertLinks) JobName() string { return JobInvertLinks }

func (s invertLinks) Job() (mapreduce.Runnable, error) {
	if len(s.Segments) == 0 || s.Out == "" || s.Options.MaxInlinks <= 0 || s.Options.MaxAnchorLength <= 0 {
		return nil, errors.New("invertlinks job: needs segments, an output and positive limits")
	}
	var ins []mapreduce.Input[linkValue]
	for _, dir := range s.Segments {
		ins = append(ins, mapreduce.From(dir, s.mapLink, mapreduce.RequireSuccess(), mapreduce.AllowMissingColumns()))
	}
	if s.Current != "" {
		ins = append(ins, mapreduce.From(s.Current, func(t *mapreduce.Task, l linkdb.Inlink, emit mapreduce.Emit[linkValue]) error {
			t.Count(ctrLinksOld, 1)
			emit(l.To, linkValue{From: l.From, Anchor: l.Anchor, Old: true})
			return nil
		}, mapreduce.RequireSuccess()))
	}
	return &mapreduce.Job[linkValue, linkdb.Inlink]{
		Name:      JobInvertLinks,
		Inputs:    ins,
		Reduce:    s.reduce,
		NumReduce: s.Reduces,
		Outputs:   []mapreduce.Output[linkdb.Inlink]{mapreduce.Write[linkdb.Inlink](s.Out)},
	}, nil
}

// mapLink keys each crawl_parse link by its target, unless it is internal
// and internal links are ignored.
func (s invertLinks) mapLink(t *mapreduce.Task, r linkRow, emit mapreduce.Emit[linkValue]) error {
	switch r.Status {
	case crawldb.StatusLinked:
		s.link(t, r.FromURL, r.URL, r.Anchor, emit)
	case crawldb.StatusSignature:
		for i := range r.Links {
			s.link(t, r.URL, r.Links[i].URL, r.Links[i].Anchor, emit)
		}
	}
	return nil
}

// link keys one link from from to to by its target.
func (s invertLinks) link(t *mapreduce.Task, from, to, anchor string, emit mapreduce.Emit[linkValue]) {
	if from == "" || to == from {
		return
	}
	t.Count(ctrLinksRead, 1)
	if s.Options.IgnoreInternalHost && strings.EqualFold(urlutil.Host(to), urlutil.Host(from)) ||
		s.Options.IgnoreInternalDomain && urlutil.Domain(to) == urlutil.Domain(from) {
		t.Count(ctrLinksInternal, 1)
		return
	}
	emit(to, linkValue{From: from, Anchor: truncateUTF8(strings.TrimSpace(anchor), s.Options.MaxAnchorLength)})
}

// reduce writes one row per linking page, sorted by From: a segment's link
// before the old LinkDB's, a non-empty anchor before an empty one, then
// the smallest anchor, so the result does not depend on input order.
func (s invertLinks) reduce(t *mapreduce.Task, to string, values iter.Seq[linkValue], out func(linkdb.Inlink)) error {
	var vs []linkValue
	for v := range values {
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b linkValue) int {
		return cmp.Or(strings.Compare(a.From, b.From), compareBool(a.Old, b.Old),
			compareBool(a.Anchor == "", b.Anchor == ""), strings.Compare(a.Anchor, b.Anchor))
	})
	n := 0
	for i, v := range vs {
		if i > 0 && vs[i-1].From == v.From {
			continue
		}
		if n == s.Options.MaxInlinks {
			t.Count(ctrLinkDBDropped, 1)
			continue
		}
		n++
		out(linkdb.Inlink{To: to, From: v.From, Anchor: v.Anchor})
	}
	t.Count(ctrInlinksWritten, int64(n))
	t.Count(ctrLinkedURLs, 1)
	return nil
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
