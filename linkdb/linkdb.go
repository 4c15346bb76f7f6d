// Package linkdb is trawl's LinkDB, Nutch's inverted link graph: for every
// URL, the links that point to it, with their anchor texts. The invertlinks
// job (package jobs) builds it from segments' parse data and merges it
// round by round; linkrank computes PageRank over it; readlinkdb reads it.
//
// # Layout
//
// A LinkDB is a directory (crawl/linkdb) laid out as a CrawlDB is:
// current/ holds zstd Parquet part files of Inlink rows, hash-partitioned
// by To and sorted by (To, From) within each part; a new version is
// written beside it and installed with one rename, so a failed job leaves
// the LinkDB as it was. One row stands for one link: a From page linking
// to To several times keeps one row, with the first anchor text seen.
package linkdb

import "path"

// Inlink is one link of the graph: From links to To with anchor text
// Anchor. Both URLs are normalized as the CrawlDB's are.
type Inlink struct {
	// To is the linked URL, the row's key.
	To string `parquet:"to"`
	// From is the linking page.
	From string `parquet:"from"`
	// Anchor is the link's anchor text (empty for an image without alt
	// text, say), at most MaxAnchorLength bytes.
	Anchor string `parquet:"anchor"`
}

// MaxAnchorLength caps the anchor text kept per link, in bytes (Nutch's
// linkdb.max.anchor.length is 100 characters).
const MaxAnchorLength = 100

// The directories inside a LinkDB directory.
const (
	// CurrentName holds the LinkDB's part files.
	CurrentName = "current"
	// OldName holds the previous version while a new one is installed.
	OldName = "old"
)

// Current returns the directory of the LinkDB's current part files.
func Current(linkdbDir string) string { return path.Join(linkdbDir, CurrentName) }
