package urlutil

import (
	"strings"
)

// Filter accepts or rejects one URL. A rejection carries a short, stable
// reason (one of the Reason constants, or "regex:<file>:<line>") that jobs
// use as a counter name. Filters expect normalized URLs.
type Filter interface {
	Filter(u string) (ok bool, reason string)
}

// Reasons filters give for a rejection.
const (
	// ReasonInvalid: the string has no scheme://host shape.
	ReasonInvalid = "invalid"
	// ReasonScheme: the scheme is not allowed (SchemeFilter).
	ReasonScheme = "scheme"
	// ReasonTooLong: longer than the maximum length (LengthFilter).
	ReasonTooLong = "too-long"
	// ReasonSuffix: the path ends with a denied suffix (SuffixFilter).
	ReasonSuffix = "suffix"
	// ReasonPathLoop: a path segment repeats too often (PathLoopFilter).
	ReasonPathLoop = "path-loop"
	// ReasonTooDeep: too many path segments (PathLoopFilter).
	ReasonTooDeep = "too-many-segments"
	// ReasonRegexNoMatch: no rule of a regex filter matched (Nutch rejects
	// such URLs).
	ReasonRegexNoMatch = "regex-no-match"
)

// Filters is a chain of filters: a URL passes if every filter accepts it;
// the first rejection's reason is returned. The empty chain accepts all.
type Filters []Filter

// Filter runs the chain.
func (fs Filters) Filter(u string) (bool, string) {
	for _, f := range fs {
		if ok, reason := f.Filter(u); !ok {
			return false, reason
		}
	}
	return true, ""
}

// FilterFunc adapts a function to the Filter interface.
type FilterFunc func(u string) (bool, string)

// Filter calls f(u).
func (f FilterFunc) Filter(u string) (bool, string) { return f(u) }

// FilterOptions selects the filters NewFilters chains. A zero field turns
// its filter off; DefaultFilterOptions gives trawl's defaults.
type FilterOptions struct {
	// Schemes allowed (case-insensitive). Default: http, https.
	Schemes []string
	// MaxLength is the longest URL accepted, in bytes. Default 2083: the
	// longest URL Internet Explorer accepted, the de-facto interoperable
	// limit that many servers and CDNs also enforce; longer URLs are almost
	// always generated traps or tracking blobs. Nutch has no default limit.
	MaxLength int
	// DenySuffixes are path suffixes to reject (case-insensitive, query
	// ignored). Default: DefaultDenySuffixes, Nutch's suffix-urlfilter list.
	DenySuffixes []string
	// MaxSegmentRepeats rejects a URL whose path holds one segment this
	// many times or more (Nutch's "-.*(/[^/]+)/[^/]+\1/[^/]+\1/" rule).
	// Default 3.
	MaxSegmentRepeats int
	// MaxSegments rejects a URL with more path segments than this.
	// Default 32: deeper paths are almost always traps; real sites rarely
	// go past 12. Nutch has no such filter by default.
	MaxSegments int
	// Regex filters run last, each in Nutch's regex-urlfilter semantics
	// (first matching rule wins, no match rejects). Default none.
	Regex []*RegexFilter
}

// DefaultFilterOptions returns trawl's default filter settings.
func DefaultFilterOptions() FilterOptions {
	return FilterOptions{
		Schemes:           []string{"http", "https"},
		MaxLength:         2083,
		DenySuffixes:      DefaultDenySuffixes(),
		MaxSegmentRepeats: 3,
		MaxSegments:       32,
	}
}

// NewFilters builds the filter chain o describes, cheapest filters first:
// scheme, length, suffix, path loop and depth, regex.
func NewFilters(o FilterOptions) Filters {
	var fs Filters
	if len(o.Schemes) > 0 {
		fs = append(fs, NewSchemeFilter(o.Schemes...))
	}
	if o.MaxLength > 0 {
		fs = append(fs, LengthFilter{Max: o.MaxLength})
	}
	if len(o.DenySuffixes) > 0 {
		fs = append(fs, NewSuffixFilter(o.DenySuffixes))
	}
	if o.MaxSegmentRepeats > 0 || o.MaxSegments > 0 {
		fs = append(fs, PathLoopFilter{MaxRepeats: o.MaxSegmentRepeats, MaxSegments: o.MaxSegments})
	}
	for _, r := range o.Regex {
		if r != nil {
			fs = append(fs, r)
		}
	}
	return fs
}

// SchemeFilter accepts URLs whose scheme is in a set.
type SchemeFilter struct {
	schemes []string // lower-case
}

// NewSchemeFilter accepts the given schemes (case-insensitive).
func NewSchemeFilter(schemes ...string) *SchemeFilter {
	f := &SchemeFilter{}
	for _, s := range schemes {
		f.schemes = append(f.schemes, strings.ToLower(s))
	}
	return f
}

// Filter implements Filter.
func (f *SchemeFilter) Filter(u string) (bool, string) {
	i := schemeEnd(u)
	if i < 0 {
		return false, ReasonInvalid
	}
	s := u[:i]
	for _, a := range f.schemes {
		if strings.EqualFold(s, a) {
			return true, ""
		}
	}
	return false, ReasonScheme
}

// LengthFilter rejects URLs longer than Max bytes.
type LengthFilter struct {
	Max int
}

// Filter implements Filter.
func (f LengthFilter) Filter(u string) (bool, string) {
	if len(u) > f.Max {
		return false, ReasonTooLong
	}
	return true, ""
}

// DefaultDenySuffixes returns Nutch's default suffix-urlfilter deny list
// (conf/suffix-urlfilter.txt): images, style sheets and scripts, archives
// and packages, audio and video, fonts, executables, disc images. Office
// documents and PDF are not on it, as in Nutch, because parsers exist for
// them. Each call returns a new slice.
func DefaultDenySuffixes() []string {
	return []string{
		// pictures
		".gif", ".gifv", ".jpg", ".jpeg", ".jp2", ".jpf", ".jpx", ".bmp", ".png",
		".tif", ".tiff", ".ico", ".icns", ".eps", ".ps", ".wmf", ".fpx", ".cur",
		".ani", ".img", ".lwf", ".pcd", ".psp", ".psd", ".tga", ".webp", ".xbm",
		".xpm", ".kdc", ".svg", ".svgz",
		// web formats
		".css", ".js",
		// archives and packages
		".apk", ".arj", ".arc", ".7z", ".cab", ".lzw", ".lha", ".lzh", ".mar",
		".zip", ".gz", ".tar", ".tgz", ".rar", ".sit", ".rpm", ".deb", ".udeb",
		".pkg", ".bz2", ".dmg", ".lzma", ".xz", ".ipk", ".whl", ".egg", ".crx",
		// audio and video
		".mid", ".midi", ".rmi", ".mpeg", ".mpg", ".mpe", ".mp4", ".mp3", ".mp2",
		".aac", ".mov", ".m4a", ".m4r", ".m4v", ".mp4a", ".mpga", ".f4v", ".fla",
		".flac", ".flv", ".ra", ".ram", ".rm", ".rmv", ".wma", ".wmv", ".wav",
		".wave", ".oga", ".ogg", ".webm", ".avi", ".avif", ".au", ".snd", ".3gp",
		".3g2", ".qt", ".mka", ".mks", ".mkv", ".mk3d", ".opus", ".xm", ".m3u8",
		".movie", ".aif", ".aiff", ".gblorb", ".xhr",
		// fonts
		".ttf", ".otf", ".pfb", ".afm", ".woff", ".woff2",
		// executables and shared libraries
		".exe", ".com", ".dll",
		// windows links, typo3 extensions, disc images
		".lnk", ".t3x", ".iso", ".bin",
	}
}

// SuffixFilter rejects URLs whose path (query and fragment excluded) ends
// with one of a set of suffixes, compared case-insensitively, as Nutch's
// urlfilter-suffix with its default "+I +P" mode.
type SuffixFilter struct {
	ext   map[string]struct{} // ".gif": suffixes that are one extension
	other []string            // other suffixes, lower-case
	max   int                 // longest suffix in ext
}

// NewSuffixFilter rejects paths ending with any of suffixes.
func NewSuffixFilter(suffixes []string) *SuffixFilter {
	f := &SuffixFilter{ext: make(map[string]struct{})}
	for _, s := range suffixes {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		if s[0] == '.' && !strings.ContainsAny(s[1:], "./") {
			f.ext[s] = struct{}{}
			f.max = max(f.max, len(s))
		} else {
			f.other = append(f.other, s)
		}
	}
	return f
}

// Filter implements Filter.
func (f *SuffixFilter) Filter(u string) (bool, string) {
	_, path, _, ok := parts(u)
	if !ok {
		return false, ReasonInvalid
	}
	if dot := strings.LastIndexByte(path, '.'); dot >= 0 && len(path)-dot <= f.max &&
		strings.IndexByte(path[dot:], '/') < 0 {
		var buf [16]byte
		ext := path[dot:]
		if len(ext) <= len(buf) {
			b := buf[:len(ext)]
			for i := 0; i < len(ext); i++ {
				c := ext[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b[i] = c
			}
			if _, deny := f.ext[string(b)]; deny {
				return false, ReasonSuffix
			}
		} else if _, deny := f.ext[strings.ToLower(ext)]; deny {
			return false, ReasonSuffix
		}
	}
	for _, s := range f.other {
		if len(path) >= len(s) && strings.EqualFold(path[len(path)-len(s):], s) {
			return false, ReasonSuffix
		}
	}
	return true, ""
}

// PathLoopFilter rejects URLs whose path holds one segment MaxRepeats times
// or more (e.g. /a/b/a/c/a/, the mark of a relative-link loop) or has more
// than MaxSegments segments. A zero field turns its check off. Empty
// segments are not counted. Nutch's rule is a regular expression over the
// whole URL; this one counts equal segments anywhere in the path, which also
// catches the loops Nutch's newer "(/.+?)/.*?\1/.*?\1/" rule catches.
type PathLoopFilter struct {
	MaxRepeats  int
	MaxSegments int
}

// Filter implements Filter.
func (f PathLoopFilter) Filter(u string) (bool, string) {
	_, path, _, ok := parts(u)
	if !ok {
		return false, ReasonInvalid
	}
	var arr [32]string
	segs := arr[:0]
	for i := 0; i < len(path); {
		if path[i] == '/' {
			i++
			continue
		}
		j := strings.IndexByte(path[i:], '/')
		if j < 0 {
			j = len(path) - i
		}
		segs = append(segs, path[i:i+j])
		i += j
		if f.MaxSegments > 0 && len(segs) > f.MaxSegments {
			return false, ReasonTooDeep
		}
	}
	if f.MaxRepeats <= 1 {
		if f.MaxRepeats == 1 && len(segs) > 0 {
			return false, ReasonPathLoop
		}
		return true, ""
	}
	if len(segs) < f.MaxRepeats {
		return true, ""
	}
	if len(segs) > 64 {
		count := make(map[string]int, len(segs))
		for _, s := range segs {
			count[s]++
			if count[s] >= f.MaxRepeats {
				return false, ReasonPathLoop
			}
		}
		return true, ""
	}
	for i, s := range segs {
		n := 1
		for _, t := range segs[i+1:] {
			if t == s {
				n++
				if n >= f.MaxRepeats {
					return false, ReasonPathLoop
				}
			}
		}
	}
	return true, ""
}
