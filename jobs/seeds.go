package jobs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/trawl/trawl/urlutil"
)

// Seed is one parsed line of a seed file (Nutch's Injector input): a URL and
// the optional per-URL settings given after it as TAB-separated key=value
// pairs.
type Seed struct {
	// URL is the URL as written (trimmed), not yet normalized.
	URL string
	// Score is the seed's score when HasScore (key score, or Nutch's
	// nutch.score).
	Score    float32
	HasScore bool
	// FetchInterval is the seed's interval in seconds when HasInterval
	// (key fetchInterval or fixedInterval, or Nutch's nutch.fetchInterval
	// and nutch.fetchInterval.fixed).
	FetchInterval int32
	HasInterval   bool
	// FixedInterval is set by fixedInterval: schedules keep the interval.
	FixedInterval bool
	// Metadata holds every other key=value pair.
	Metadata map[string]string
}

// The seed-line keys with a meaning; every other key goes to Metadata.
// The nutch.* spellings are Nutch's Injector metadata names, accepted so that
// Nutch seed lists inject unchanged.
const (
	seedKeyScore         = "score"
	seedKeyInterval      = "fetchInterval"
	seedKeyFixedInterval = "fixedInterval"

	nutchKeyScore         = "nutch.score"
	nutchKeyInterval      = "nutch.fetchInterval"
	nutchKeyFixedInterval = "nutch.fetchInterval.fixed"
)

// ParseSeedLine parses one seed-file line:
//
//	URL [<TAB>key=value]...
//
// Keys: score=F (a finite float), fetchInterval=SECONDS (a non-negative
// integer), fixedInterval=SECONDS (the same, and the schedules must not adapt
// it); any other key is kept as metadata. Blank lines and lines whose first
// non-blank character is '#' return ok=false and no error. A field without
// '=', an empty key, a bad number or a repeated key is an error; the caller
// names the file and line. Errors quote the line's text with any URL
// userinfo removed (urlutil.Redact), so they can be logged.
func ParseSeedLine(line string) (seed Seed, ok bool, err error) {
	line = strings.TrimRight(line, "\r\n")
	if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
		return Seed{}, false, nil
	}
	fields := strings.Split(line, "\t")
	seed.URL = strings.TrimSpace(fields[0])
	if seed.URL == "" {
		return Seed{}, false, errors.New("empty URL before a TAB")
	}
	seen := make(map[string]bool, len(fields)-1)
	for _, f := range fields[1:] {
		if strings.TrimSpace(f) == "" {
			continue // tolerate doubled or trailing TABs
		}
		k, v, found := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if !found {
			return Seed{}, false, fmt.Errorf("field %q is not key=value", urlutil.Redact(f))
		}
		if k == "" {
			return Seed{}, false, fmt.Errorf("field %q has an empty key", urlutil.Redact(f))
		}
		canon := k
		switch k {
		case nutchKeyScore:
			canon = seedKeyScore
		case nutchKeyInterval:
			canon = seedKeyInterval
		case nutchKeyFixedInterval:
			canon = seedKeyFixedInterval
		}
		if seen[canon] {
			return Seed{}, false, fmt.Errorf("key %q given twice", urlutil.Redact(k))
		}
		seen[canon] = true
		switch canon {
		case seedKeyScore:
			s, err := strconv.ParseFloat(v, 32)
			if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
				return Seed{}, false, fmt.Errorf("%s=%q is not a finite number", urlutil.Redact(k), urlutil.Redact(v))
			}
			seed.Score, seed.HasScore = float32(s), true
		case seedKeyInterval, seedKeyFixedInterval:
			if seen[seedKeyInterval] && seen[seedKeyFixedInterval] {
				return Seed{}, false, errors.New("both fetchInterval and fixedInterval given")
			}
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return Seed{}, false, fmt.Errorf("%s=%q is not a whole number of seconds >= 0", k, urlutil.Redact(v))
			}
			seed.FetchInterval, seed.HasInterval = int32(n), true
			seed.FixedInterval = canon == seedKeyFixedInterval
		default:
			if seed.Metadata == nil {
				seed.Metadata = make(map[string]string)
			}
			seed.Metadata[k] = v
		}
	}
	return seed, true, nil
}
