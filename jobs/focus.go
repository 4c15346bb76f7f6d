package jobs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/trawl/trawl/topic"
)

// Focused crawling, after the topic crawler of the Institute of Computing
// Technology, CAS (Li, Zhao and Yu, "Design and Realization of Focused Web
// Crawler"): a topic learnt from sample texts (package topic) decides which
// links a crawl follows and in which order it fetches.
//
//   - parse rates each page (PageRelevance, the cosine of its terms, title
//     words boosted, with the topic's) and each outlink (LinkRelevance RW,
//     from its anchor text, its URL's words and the page's title). A link
//     with RW under LinkThreshold (the paper's c) is not followed. A page
//     under PageThreshold (the paper's d) keeps its CrawlDB row, marked
//     off-topic; its links are followed only while the off-topic pages in
//     a row on the path stay within MaxOffTopicHops (tunnelling; 0 follows
//     no link of an off-topic page, the paper's filter). A seed's links
//     are always followed.
//   - updatedb keeps per URL its relevance, the highest RW of the links to
//     it and the off-topic hops of the path it was found by (Datum's
//     focus columns).
//   - LinkRank with the topic computes IPageRank: PageRank in which a
//     page's vote is split over its out-links in proportion to their RW
//     (from the LinkDB's anchors and URLs), and generate takes the URLs
//     with the highest IPageRank first.

// Focus defaults.
const (
	DefaultLinkThreshold = 0.1
	DefaultPageThreshold = 0.15
)

// FocusOptions configure a focused crawl's parse. The zero value (no
// Topic) is an ordinary crawl.
type FocusOptions struct {
	// Topic is the topic; nil turns focusing off.
	Topic *topic.Model `json:",omitempty"`
	// LinkThreshold is the least RW of a followed link (the paper's c);
	// 0 means DefaultLinkThreshold, a negative value follows every link.
	LinkThreshold float64 `json:",omitempty"`
	// PageThreshold is the least relevance of an on-topic page (the
	// paper's d); 0 means DefaultPageThreshold, a negative value makes
	// every page on topic.
	PageThreshold float64 `json:",omitempty"`
	// MaxOffTopicHops is how many off-topic pages in a row a path may
	// have and its links still be followed; 0 follows no link of an
	// off-topic page.
	MaxOffTopicHops int `json:",omitempty"`
}

// Validate reports thresholds above 1 or not a number, and negative hops.
func (o FocusOptions) Validate() error {
	switch {
	case math.IsNaN(o.LinkThreshold) || o.LinkThreshold > 1 || math.IsNaN(o.PageThreshold) || o.PageThreshold > 1:
		return fmt.Errorf("focus: thresholds must be at most 1 (link %v, page %v)", o.LinkThreshold, o.PageThreshold)
	case o.MaxOffTopicHops < 0:
		return fmt.Errorf("focus: negative off-topic hops %d", o.MaxOffTopicHops)
	case o.Topic == nil && (o.LinkThreshold != 0 || o.PageThreshold != 0 || o.MaxOffTopicHops != 0):
		return errors.New("focus: thresholds or off-topic hops without a topic")
	}
	return nil
}

// thresholds returns the link and page thresholds in force.
func (o FocusOptions) thresholds() (link, page float64) {
	link, page = o.LinkThreshold, o.PageThreshold
	if link == 0 {
		link = DefaultLinkThreshold
	}
	if page == 0 {
		page = DefaultPageThreshold
	}
	return link, page
}

// LearnTopic learns a topic from sample texts read from files: each file
// is split into samples at blank lines. Background texts (optional) are
// texts off the topic, for the terms' inverse document frequency.
func LearnTopic(env Env, files []string, o topic.Options) (*topic.Model, error) {
	if len(files) == 0 {
		return nil, errors.New("topic: no sample file given")
	}
	var samples []string
	for _, f := range files {
		fsys, p, err := env.resolver().Resolve(f)
		if err != nil {
			return nil, fmt.Errorf("topic: %w", err)
		}
		r, err := fsys.Open(p)
		if err != nil {
			return nil, fmt.Errorf("topic: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(r, 16<<20))
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("topic: read %s: %w", f, err)
		}
		samples = append(samples, splitSamples(string(b))...)
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("topic: the sample files %s hold no text", strings.Join(files, ", "))
	}
	m, err := topic.Learn(samples, o)
	if err != nil {
		return nil, fmt.Errorf("topic: learn from %s: %w", strings.Join(files, ", "), err)
	}
	return m, nil
}

// splitSamples splits a text at blank lines into its non-blank samples.
func splitSamples(text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return out
}

// PageRating is how a focused crawl rates a fetched page: its relevance,
// whether it is off topic, its own off-topic hops (0 when on topic), and
// whether its links are followed.
type PageRating struct {
	Relevance float32
	OffTopic  bool
	Hops      int32
	Follow    bool
}

// RatePage rates a page (o must have a Topic) found after inHops
// off-topic pages in a row. The links of a seed (a page no crawled page
// links to) are followed whatever its relevance: a crawl starts where its
// seeds are, often at a site's home page.
func (o FocusOptions) RatePage(title, text string, inHops int32, seed bool) PageRating {
	_, page := o.thresholds()
	r := o.Topic.PageRelevance(title, text)
	f := PageRating{Relevance: float32(r), OffTopic: r < page}
	if f.OffTopic {
		f.Hops = inHops + 1
	}
	f.Follow = seed || !f.OffTopic || int(f.Hops) <= o.MaxOffTopicHops
	return f
}

// FollowLink returns a link's relevance RW (o must have a Topic) and
// whether it is followed (RW at or above the link threshold). context is
// the text around the link (parse gives the page's title).
func (o FocusOptions) FollowLink(anchor, url, context string) (float32, bool) {
	link, _ := o.thresholds()
	rw := o.Topic.LinkRelevance(anchor, url, context)
	return float32(rw), rw >= link
}

// The parse counters of focused crawling.
const (
	ctrOffTopic       = "pages_off_topic"
	ctrOnTopic        = "pages_on_topic"
	ctrNotFollowed    = "links_not_followed_off_topic" // links of off-topic pages past the hop limit
	ctrBelowThreshold = "links_below_threshold"        // links with RW under the threshold
)
