package simweb

import (
	"fmt"
	"strings"
	"time"
)

// robotsFile is a host's robots.txt.
type robotsFile struct {
	status    int // of GET /robots.txt: 200, 404, 301 (to robotsTarget), 503
	body      string
	delay     time.Duration
	disallows []string // group "*"
	allows    []string // group "*"
}

// robotsTarget is where a 301 robots.txt points.
const robotsTarget = "/robots-main.txt"

// allowed applies RFC 9309 to path for any agent but "badbot": the longest
// matching rule wins, Allow on a tie; no rule allows; an unreachable
// robots.txt (5xx) disallows everything; a missing one (404) allows
// everything.
func (rf *robotsFile) allowed(path string) bool {
	switch {
	case rf.status >= 500:
		return false
	case rf.status == 404:
		return true
	}
	best, allow := -1, true
	for _, d := range rf.disallows {
		if strings.HasPrefix(path, d) && len(d) > best {
			best, allow = len(d), false
		}
	}
	for _, a := range rf.allows {
		if strings.HasPrefix(path, a) && len(a) >= best {
			best, allow = len(a), true
		}
	}
	return allow
}

// robotsAllowed is the truth of whether page id may be crawled.
func (w *Web) robotsAllowed(id int32) bool {
	p := &w.pages[id]
	h := &w.hosts[p.host]
	switch h.role {
	case RoleUnresolvable, RoleBlackhole, RoleTrickle, RoleSlowHeaders, RoleReset:
		return true // no robots.txt can be had; nothing forbids it
	}
	return h.robots.allowed(p.path)
}

// makeRobots writes host hi's robots.txt. topDirs and leaves are candidate
// paths to disallow; protect lists paths that must stay allowed (hazard
// entries, which would otherwise never be reached).
func (w *Web) makeRobots(hi int, topDirs, leaves []string, protect []string) robotsFile {
	h := &w.hosts[hi]
	r := newRNG(w.cfg.Seed, sRobots, uint64(hi), 0)
	if h.role == RoleDown {
		return robotsFile{status: 503}
	}
	rf := robotsFile{status: 200}
	u := r.float()
	switch {
	case u < 0.15:
		return robotsFile{status: 404}
	case u < 0.17:
		rf.status = 301
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# robots.txt for %s\n", h.name)
	if r.chance(0.25) {
		b.WriteString("User-agent: BadBot\nDisallow: /\n\n")
	}
	b.WriteString("User-agent: *\n")
	switch x := r.float(); {
	case x < 0.02 && len(protect) == 0:
		rf.disallows = append(rf.disallows, "/")
	case x < 0.32:
		if len(topDirs) > 0 {
			for range 1 + r.intn(2) {
				d := topDirs[r.intn(len(topDirs))]
				if !containsString(rf.disallows, d) {
					rf.disallows = append(rf.disallows, d)
				}
			}
			// An Allow exception inside a disallowed directory.
			if r.chance(0.5) {
				for _, l := range leaves {
					if strings.HasPrefix(l, rf.disallows[0]) {
						rf.allows = append(rf.allows, l)
						break
					}
				}
			}
		} else if len(leaves) > 0 {
			rf.disallows = append(rf.disallows, leaves[r.intn(len(leaves))])
		}
		rf.disallows = append(rf.disallows, "/cgi-bin/")
	}
	for _, a := range rf.allows {
		fmt.Fprintf(&b, "Allow: %s\n", a)
	}
	if len(rf.disallows) == 0 {
		b.WriteString("Disallow:\n")
	}
	for _, d := range rf.disallows {
		fmt.Fprintf(&b, "Disallow: %s\n", d)
	}
	if w.cfg.Hazards&HazardCrawlDelay != 0 && h.content <= 40 && r.chance(0.2) {
		rf.delay = time.Duration(1+r.intn(2)) * time.Second
		fmt.Fprintf(&b, "Crawl-delay: %d\n", int(rf.delay/time.Second))
	}
	rf.body = b.String()
	return rf
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
