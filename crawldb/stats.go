package crawldb

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stats accumulates CrawlDB statistics in one pass, as Nutch's readdb
// -stats computes them, plus trawl's own columns (schedule source, change
// counts, hosts). Add is cheap; memory grows only with the number of
// distinct hosts, retry counts and sources. A Stats is not safe for
// concurrent use: give each goroutine its own and Merge them.
type Stats struct {
	total    int64
	byStatus map[Status]int64
	retries  map[int32]int64
	sources  map[Source]int64

	scoreNaN           int64
	scored             int64
	scoreMin, scoreMax float32
	scoreSum           float64

	intervalMin, intervalMax int32
	intervalSum              int64

	fetchTimed             int64 // datums with a fetch time
	fetchMinMS, fetchMaxMS int64
	fetchSumMin            int64 // minutes, as Nutch sums them

	changeMin, changeMax int32
	changeSum            int64
	fetchCountSum        int64

	hosts     map[string]*hostCount // nil unless per-host counts are kept
	hostNames map[string]struct{}   // exact distinct hosts, always kept
}

type hostCount struct {
	total    int64
	byStatus map[Status]int64
}

// NewStats returns an empty accumulator. With perHost it also keeps counts
// per host and status (for readdb stats --sort); the number of distinct
// hosts is always exact.
func NewStats(perHost bool) *Stats {
	s := &Stats{
		byStatus:  map[Status]int64{},
		retries:   map[int32]int64{},
		sources:   map[Source]int64{},
		hostNames: map[string]struct{}{},
	}
	if perHost {
		s.hosts = map[string]*hostCount{}
	}
	return s
}

// hostOf returns d's host: Datum.Host, or the URL's host if that is empty.
func hostOf(d *Datum) string {
	if d.Host != "" {
		return d.Host
	}
	if u, err := url.Parse(d.URL); err == nil {
		return strings.ToLower(u.Hostname())
	}
	return ""
}

// Add counts one datum.
func (s *Stats) Add(d Datum) {
	s.add(&d)
}

func (s *Stats) add(d *Datum) {
	first := s.total == 0
	s.total++
	s.byStatus[d.Status]++
	s.retries[d.Retries]++
	s.sources[d.Source]++

	if math.IsNaN(float64(d.Score)) {
		s.scoreNaN++
	} else {
		if s.scored == 0 || d.Score < s.scoreMin {
			s.scoreMin = d.Score
		}
		if s.scored == 0 || d.Score > s.scoreMax {
			s.scoreMax = d.Score
		}
		s.scored++
		s.scoreSum += float64(d.Score)
	}

	if first || d.FetchInterval < s.intervalMin {
		s.intervalMin = d.FetchInterval
	}
	if first || d.FetchInterval > s.intervalMax {
		s.intervalMax = d.FetchInterval
	}
	s.intervalSum += int64(d.FetchInterval)

	if !d.FetchTime.IsZero() {
		t := d.FetchTime.UnixMilli()
		if s.fetchTimed == 0 || t < s.fetchMinMS {
			s.fetchMinMS = t
		}
		if s.fetchTimed == 0 || t > s.fetchMaxMS {
			s.fetchMaxMS = t
		}
		s.fetchTimed++
		s.fetchSumMin += t / 60000
	}

	if first || d.ChangeCount < s.changeMin {
		s.changeMin = d.ChangeCount
	}
	if first || d.ChangeCount > s.changeMax {
		s.changeMax = d.ChangeCount
	}
	s.changeSum += int64(d.ChangeCount)
	s.fetchCountSum += int64(d.FetchCount)

	host := hostOf(d)
	if s.hosts != nil {
		hc := s.hosts[host]
		if hc == nil {
			hc = &hostCount{byStatus: map[Status]int64{}}
			s.hosts[host] = hc
			s.hostNames[host] = struct{}{}
		}
		hc.total++
		hc.byStatus[d.Status]++
	} else if _, ok := s.hostNames[host]; !ok {
		s.hostNames[host] = struct{}{}
	}
}

// Merge adds o's counts to s. o is not changed. Per-host counts are merged
// only if both keep them.
func (s *Stats) Merge(o *Stats) {
	if o == nil || o.total == 0 {
		return
	}
	if s.total == 0 {
		s.intervalMin, s.intervalMax = o.intervalMin, o.intervalMax
		s.changeMin, s.changeMax = o.changeMin, o.changeMax
	} else {
		s.intervalMin = min(s.intervalMin, o.intervalMin)
		s.intervalMax = max(s.intervalMax, o.intervalMax)
		s.changeMin = min(s.changeMin, o.changeMin)
		s.changeMax = max(s.changeMax, o.changeMax)
	}
	s.total += o.total
	for k, v := range o.byStatus {
		s.byStatus[k] += v
	}
	for k, v := range o.retries {
		s.retries[k] += v
	}
	for k, v := range o.sources {
		s.sources[k] += v
	}
	s.scoreNaN += o.scoreNaN
	if o.scored > 0 {
		if s.scored == 0 {
			s.scoreMin, s.scoreMax = o.scoreMin, o.scoreMax
		} else {
			s.scoreMin = min(s.scoreMin, o.scoreMin)
			s.scoreMax = max(s.scoreMax, o.scoreMax)
		}
		s.scored += o.scored
		s.scoreSum += o.scoreSum
	}
	s.intervalSum += o.intervalSum
	if o.fetchTimed > 0 {
		if s.fetchTimed == 0 {
			s.fetchMinMS, s.fetchMaxMS = o.fetchMinMS, o.fetchMaxMS
		} else {
			s.fetchMinMS = min(s.fetchMinMS, o.fetchMinMS)
			s.fetchMaxMS = max(s.fetchMaxMS, o.fetchMaxMS)
		}
		s.fetchTimed += o.fetchTimed
		s.fetchSumMin += o.fetchSumMin
	}
	s.changeSum += o.changeSum
	s.fetchCountSum += o.fetchCountSum
	for h := range o.hostNames {
		s.hostNames[h] = struct{}{}
	}
	if s.hosts != nil && o.hosts != nil {
		for h, oc := range o.hosts {
			hc := s.hosts[h]
			if hc == nil {
				hc = &hostCount{byStatus: map[Status]int64{}}
				s.hosts[h] = hc
			}
			hc.total += oc.total
			for k, v := range oc.byStatus {
				hc.byStatus[k] += v
			}
		}
	}
}

// StatsReport is the result of a Stats, ready for printing or JSON.
// Averages are over all datums, except the fetch-time figures (over datums
// with a fetch time) and the score figures (over datums whose score is not
// NaN). Min/avg/max are zero when there is nothing to average.
type StatsReport struct {
	Total    int64            `json:"total"`
	Status   map[string]int64 `json:"status"`
	Retries  map[string]int64 `json:"retries"`
	Sources  map[string]int64 `json:"schedule_source"`
	Hosts    int64            `json:"hosts"`
	ScoreMin float64          `json:"score_min"`
	ScoreAvg float64          `json:"score_avg"`
	ScoreMax float64          `json:"score_max"`
	ScoreNaN int64            `json:"score_nan"`
	// Fetch intervals, in seconds.
	IntervalMin int32   `json:"fetch_interval_min"`
	IntervalAvg float64 `json:"fetch_interval_avg"`
	IntervalMax int32   `json:"fetch_interval_max"`
	// Next fetch times; nil when no datum has one.
	FetchTimeMin *time.Time `json:"fetch_time_min"`
	FetchTimeAvg *time.Time `json:"fetch_time_avg"`
	FetchTimeMax *time.Time `json:"fetch_time_max"`
	// Change counts (M) and fetch counts.
	ChangeCountMin int32   `json:"change_count_min"`
	ChangeCountAvg float64 `json:"change_count_avg"`
	ChangeCountMax int32   `json:"change_count_max"`
	FetchCountAvg  float64 `json:"fetch_count_avg"`
	// PerHost lists URL counts per host, in host name order (as Nutch's
	// readdb -stats -sort); only when the Stats kept them.
	PerHost []HostStats `json:"per_host,omitempty"`
}

// HostStats is the URL count of one host, by status.
type HostStats struct {
	Host   string           `json:"host"`
	Total  int64            `json:"total"`
	Status map[string]int64 `json:"status"`
}

// Report summarizes the statistics.
func (s *Stats) Report() StatsReport {
	r := StatsReport{
		Total:    s.total,
		Status:   map[string]int64{},
		Retries:  map[string]int64{},
		Sources:  map[string]int64{},
		Hosts:    int64(len(s.hostNames)),
		ScoreNaN: s.scoreNaN,
	}
	for k, v := range s.byStatus {
		r.Status[k.String()] = v
	}
	for k, v := range s.retries {
		r.Retries[strconv.Itoa(int(k))] = v
	}
	for k, v := range s.sources {
		name := string(k)
		if name == "" {
			name = "none"
		}
		r.Sources[name] = v
	}
	if s.scored > 0 {
		r.ScoreMin, r.ScoreMax = float64(s.scoreMin), float64(s.scoreMax)
		r.ScoreAvg = s.scoreSum / float64(s.scored)
	}
	if s.total > 0 {
		r.IntervalMin, r.IntervalMax = s.intervalMin, s.intervalMax
		r.IntervalAvg = float64(s.intervalSum) / float64(s.total)
		r.ChangeCountMin, r.ChangeCountMax = s.changeMin, s.changeMax
		r.ChangeCountAvg = float64(s.changeSum) / float64(s.total)
		r.FetchCountAvg = float64(s.fetchCountSum) / float64(s.total)
	}
	if s.fetchTimed > 0 {
		tmin, tmax := time.UnixMilli(s.fetchMinMS).UTC(), time.UnixMilli(s.fetchMaxMS).UTC()
		tavg := time.Unix(s.fetchSumMin/s.fetchTimed*60, 0).UTC()
		r.FetchTimeMin, r.FetchTimeAvg, r.FetchTimeMax = &tmin, &tavg, &tmax
	}
	if s.hosts != nil {
		r.PerHost = make([]HostStats, 0, len(s.hosts))
		for h, hc := range s.hosts {
			hs := HostStats{Host: h, Total: hc.total, Status: map[string]int64{}}
			for k, v := range hc.byStatus {
				hs.Status[k.String()] = v
			}
			r.PerHost = append(r.PerHost, hs)
		}
		sort.Slice(r.PerHost, func(i, j int) bool { return r.PerHost[i].Host < r.PerHost[j].Host })
	}
	return r
}

// WriteJSON writes the report as one indented JSON object.
func (r StatsReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("crawldb: write stats JSON: %w", err)
	}
	return nil
}

// daysHMS formats seconds as Nutch's TimingUtil.secondsToDaysHMS does:
// "hh:mm:ss", or "d days, hh:mm:ss" from one day on.
func daysHMS(sec int64) string {
	neg := ""
	if sec < 0 {
		neg, sec = "-", -sec
	}
	d, rem := sec/86400, sec%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", rem/3600, rem%3600/60, rem%60)
	if d == 0 {
		return neg + hms
	}
	return fmt.Sprintf("%s%d days, %s", neg, d, hms)
}

// javaFloat formats a score as Java's Float.toString does for ordinary
// values: shortest representation, with ".0" on whole numbers.
func javaFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 32)
	if !strings.ContainsAny(s, ".eEn") { // not NaN/Inf, no fraction
		s += ".0"
	}
	return s
}

// WriteText writes the report in the layout of Nutch's readdb -stats
// (names, order and tab separators), for the CrawlDB called name. Times
// are RFC 3339 in UTC rather than Java's Date.toString. trawl's additions
// follow the status lines. With per-host counts, each status line is
// followed by the count of every host with that status, in host name
// order, as Nutch's readdb -stats -sort prints them.
func (r StatsReport) WriteText(w io.Writer, name string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Statistics for CrawlDb: %s\n", name)
	fmt.Fprintf(&b, "TOTAL urls:\t%d\n", r.Total)
	if r.Total > 0 {
		fmt.Fprintf(&b, "shortest fetch interval:\t%s\n", daysHMS(int64(r.IntervalMin)))
		fmt.Fprintf(&b, "avg fetch interval:\t%s\n", daysHMS(int64(r.IntervalAvg)))
		fmt.Fprintf(&b, "longest fetch interval:\t%s\n", daysHMS(int64(r.IntervalMax)))
	}
	if r.FetchTimeMin != nil {
		fmt.Fprintf(&b, "earliest fetch time:\t%s\n", r.FetchTimeMin.Format(time.RFC3339))
		fmt.Fprintf(&b, "avg of fetch times:\t%s\n", r.FetchTimeAvg.Format(time.RFC3339))
		fmt.Fprintf(&b, "latest fetch time:\t%s\n", r.FetchTimeMax.Format(time.RFC3339))
	}
	retries := make([]int, 0, len(r.Retries))
	for k := range r.Retries {
		n, _ := strconv.Atoi(k)
		retries = append(retries, n)
	}
	sort.Ints(retries)
	for _, n := range retries {
		fmt.Fprintf(&b, "retry %d:\t%d\n", n, r.Retries[strconv.Itoa(n)])
	}
	if r.Total > r.ScoreNaN {
		fmt.Fprintf(&b, "min score:\t%s\n", javaFloat(r.ScoreMin))
		fmt.Fprintf(&b, "avg score:\t%s\n", javaFloat(r.ScoreAvg))
		fmt.Fprintf(&b, "max score:\t%s\n", javaFloat(r.ScoreMax))
	}
	if r.ScoreNaN > 0 {
		fmt.Fprintf(&b, "score == NaN:\t%d\n", r.ScoreNaN)
	}
	type st struct {
		code Status
		name string
	}
	var statuses []st
	for name := range r.Status {
		code, err := ParseStatus(name)
		if err != nil {
			var c uint8
			fmt.Sscanf(name, "status_0x%02x", &c)
			code = Status(c)
		}
		statuses = append(statuses, st{code, name})
	}
	sort.Slice(statuses, func(i, j int) bool { return statuses[i].code < statuses[j].code })
	for _, s := range statuses {
		fmt.Fprintf(&b, "status %d (%s):\t%d\n", s.code, s.name, r.Status[s.name])
		for _, h := range r.PerHost {
			if n := h.Status[s.name]; n > 0 {
				fmt.Fprintf(&b, "   %s :\t%d\n", h.Host, n)
			}
		}
	}
	fmt.Fprintf(&b, "hosts:\t%d\n", r.Hosts)
	sources := make([]string, 0, len(r.Sources))
	for k := range r.Sources {
		sources = append(sources, k)
	}
	sort.Strings(sources)
	for _, k := range sources {
		fmt.Fprintf(&b, "schedule source %s:\t%d\n", k, r.Sources[k])
	}
	if r.Total > 0 {
		fmt.Fprintf(&b, "min change count:\t%d\n", r.ChangeCountMin)
		fmt.Fprintf(&b, "avg change count:\t%s\n", strconv.FormatFloat(r.ChangeCountAvg, 'f', 3, 64))
		fmt.Fprintf(&b, "max change count:\t%d\n", r.ChangeCountMax)
		fmt.Fprintf(&b, "avg fetch count:\t%s\n", strconv.FormatFloat(r.FetchCountAvg, 'f', 3, 64))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("crawldb: write stats: %w", err)
	}
	return nil
}
