package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/hostdb"
	"github.com/trawl/trawl/jobs"
)

func updatehostdbCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "updatehostdb",
		Usage:     "build the HostDb (crawl/hostdb): per-host URL counts and fetch record",
		ArgsUsage: "[SEGMENT...]",
		Description: `Builds a new version of the HostDb, as Nutch's UpdateHostDb does: one row per
host with the CrawlDB's URLs of the host by status (db_unfetched, db_fetched,
db_gone, db_redir_temp, db_redir_perm, db_notmodified, db_duplicate,
db_orphan), its homepage URL if the CrawlDB has it, and, from the crawl_fetch
of the SEGMENTs given, its fetch record: successes, failures and the failure
streak (failed fetches since the last success, kept across runs), robots.txt
denials and failures (robots.txt unreachable or a 5xx), DNS failures and the
last one, the last fetch and the last success. The fetch record is merged with
the previous version's: a fetch at or before the host's last recorded fetch is
not counted again, so giving a segment twice changes nothing. A failed fetch
is fetch_retry (a network error, a time-out, a DNS failure, 5xx, 403, 429) or
a URL skipped because robots.txt was unavailable; fetch_skipped for other
reasons and fetch_refused say nothing about the host.

A SEGMENT is a path or URI, or a segment name under the crawl's segments/
directory; --dir takes every fetched segment. With no segment only the counts
by status are brought up to date. trawl crawl --hostdb (setting hostdb.update)
runs this after each round's updatedb; generate --max-failure-streak N then
skips the hosts that failed N times in a row.

The new version is installed in crawl/hostdb/current with one rename (its
name, the build time, is in current/_version); the HostDb has its own lock
and updatehostdb also holds the CrawlDB's, so a failure or a kill leaves the
HostDb as it was.

Examples:
   trawl --crawl ./crawl updatehostdb 20261121103000
   trawl --crawl ./crawl updatehostdb --dir
   trawl --crawl ./crawl readhostdb stats
   duckdb -c "SELECT host, failure_streak FROM 'crawl/hostdb/current/*.parquet' ORDER BY 2 DESC LIMIT 10"`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dir", Usage: "every fetched segment of the crawl"},
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.updatehostdb(c)
		}),
	}
}

func (s *session) updatehostdb(c *cli.Context) error {
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	var o jobs.UpdateHostDbOptions
	if c.Bool("dir") {
		if c.Args().Present() {
			return usageErrorf("updatehostdb: give segments or --dir, not both (see trawl updatehostdb --help)")
		}
		if o.Segments, err = jobs.FetchedSegments(env); err != nil {
			return fmt.Errorf("updatehostdb: %w", err)
		}
	}
	for _, a := range c.Args().Slice() {
		u, err := s.segmentURI(a)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("updatehostdb: %w", err))
		}
		o.Segments = append(o.Segments, u)
	}
	if err := o.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	res, err := jobs.UpdateHostDb(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	fmt.Fprintf(w, "segments:\t%d\n", len(o.Segments))
	fmt.Fprintf(w, "CrawlDB URLs:\t%d\n", res.URLs)
	fmt.Fprintf(w, "fetches read:\t%d (%d already counted, %d saying nothing about their host)\n", res.Fetches, res.Counted, res.Ignored)
	fmt.Fprintf(w, "HostDb hosts:\t%d\n", res.Hosts)
	fmt.Fprintf(w, "with a failure streak:\t%d\n", res.Failing)
	_, err = fmt.Fprintf(w, "version:\t%s\n", res.Version)
	return err
}

func readhostdbCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "readhostdb",
		Usage: "read the HostDb: stats, dump",
		Description: `Reads the HostDb (crawl/hostdb/current, written by trawl updatehostdb) without
locking it, as Nutch's ReadHostDb does.

Examples:
   trawl --crawl ./crawl readhostdb stats
   trawl readhostdb dump --format json --host example.com
   trawl readhostdb dump --format csv > hosts.csv`,
		Subcommands: []*cli.Command{
			{
				Name:  "stats",
				Usage: "totals: hosts, URLs by status, fetches, failing hosts",
				Description: `Prints the HostDb's version and totals: hosts, their CrawlDB URLs by status,
successful and failed fetches, robots.txt and DNS failures, the hosts with a
failure streak and the longest streak.

Examples:
   trawl --crawl ./crawl readhostdb stats`,
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.Args().Present() {
						return usageErrorf("readhostdb stats takes no arguments, got %q", c.Args().First())
					}
					return s.readhostdbStats(c)
				}),
			},
			{
				Name:  "dump",
				Usage: "write HostDb rows as CSV or JSON lines",
				Description: `Writes the HostDb's rows (part by part, each sorted by host) as CSV with a
header row or as one JSON object per line; the counts by status are named by
the CrawlDB statuses (db_unfetched, db_fetched, ...), times are RFC 3339 (empty
for never). --host keeps one host's row; it exits 1 when the HostDb has none.

Examples:
   trawl --crawl ./crawl readhostdb dump > hosts.csv
   trawl readhostdb dump --format json --host example.com
   trawl readhostdb dump --format json | jq 'select(.failure_streak > 2) | .host'`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: "csv", Usage: "output `FORMAT`: csv or json (one object per line)"},
					&cli.StringFlag{Name: "host", Usage: "only the row of `HOST` (a host name, as example.com)"},
					&cli.Int64Flag{Name: "limit", Usage: "write at most `N` rows (0: all)"},
				},
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.Args().Present() {
						return usageErrorf("readhostdb dump takes no arguments, got %q (a host goes with --host)", c.Args().First())
					}
					return s.readhostdbDump(c)
				}),
			},
		},
	}
}

func (s *session) openHostDb() (*hostdb.Reader, error) {
	fsys, p, err := s.resolve(jobs.HostDbDir(s.crawl()))
	if err != nil {
		return nil, err
	}
	return hostdb.Open(fsys, p)
}

func (s *session) readhostdbStats(c *cli.Context) error {
	r, err := s.openHostDb()
	if err != nil {
		return err
	}
	st, err := r.Stats(c.Context)
	if err != nil {
		return fmt.Errorf("readhostdb stats: %w", err)
	}
	w := bufio.NewWriter(s.io.stdout)
	fmt.Fprintf(w, "version:\t%s\n", st.Version)
	fmt.Fprintf(w, "hosts:\t%d\n", st.Hosts)
	fmt.Fprintf(w, "URLs:\t%d\n", st.URLs)
	for i, name := range hostdb.StatusColumns {
		fmt.Fprintf(w, "%s:\t%d\n", name, st.Status[i])
	}
	fmt.Fprintf(w, "successful fetches:\t%d\n", st.Successes)
	fmt.Fprintf(w, "failed fetches:\t%d\n", st.Failures)
	fmt.Fprintf(w, "robots.txt denied:\t%d\n", st.RobotsDenied)
	fmt.Fprintf(w, "robots.txt failures:\t%d\n", st.RobotsFailures)
	fmt.Fprintf(w, "DNS failures:\t%d\n", st.DNSFailures)
	fmt.Fprintf(w, "hosts with a failure streak:\t%d\n", st.Failing)
	fmt.Fprintf(w, "longest failure streak:\t%d\n", st.MaxStreak)
	fmt.Fprintf(w, "hosts whose last fetch failed on robots.txt:\t%d\n", st.RobotsFailed)
	fmt.Fprintf(w, "hosts whose last fetch failed on DNS:\t%d\n", st.DNSFailed)
	return w.Flush()
}

// hostColumns are readhostdb dump's columns, in order.
var hostColumns = append(append([]string{"host", "homepage"}, hostdb.StatusColumns...),
	"successes", "failures", "failure_streak", "robots_denied", "robots_failures", "robots_failed",
	"dns_failures", "last_dns_failure", "last_fetch", "last_success")

// hostValues returns h's values in hostColumns' order, and whether each
// is a string in JSON.
func hostValues(h *hostdb.Host) ([]string, []bool) {
	vals := []string{h.Host, h.Homepage}
	str := []bool{true, true}
	for _, n := range h.StatusCounts() {
		vals, str = append(vals, strconv.FormatInt(n, 10)), append(str, false)
	}
	for _, n := range []int64{h.Successes, h.Failures, h.FailureStreak, h.RobotsDenied, h.RobotsFailures} {
		vals, str = append(vals, strconv.FormatInt(n, 10)), append(str, false)
	}
	vals, str = append(vals, strconv.FormatBool(h.RobotsFailed), strconv.FormatInt(h.DNSFailures, 10)), append(str, false, false)
	for _, t := range []time.Time{h.LastDNSFailure, h.LastFetch, h.LastSuccess} {
		v := ""
		if !t.IsZero() {
			v = t.UTC().Format(time.RFC3339Nano)
		}
		vals, str = append(vals, v), append(str, true)
	}
	return vals, str
}

func (s *session) readhostdbDump(c *cli.Context) error {
	format, limit, only := c.String("format"), c.Int64("limit"), strings.ToLower(c.String("host"))
	if format != "csv" && format != "json" {
		return usageErrorf("readhostdb dump: --format must be csv or json, not %q", format)
	}
	if limit < 0 {
		return usageErrorf("readhostdb dump: --limit must be >= 0, not %d", limit)
	}
	r, err := s.openHostDb()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(s.io.stdout)
	cw := csv.NewWriter(w)
	if format == "csv" {
		cw.Write(hostColumns)
	}
	var n int64
	for h, err := range r.All(c.Context) {
		if err != nil {
			return fmt.Errorf("readhostdb dump: %w", err)
		}
		if only != "" && h.Host != only {
			continue
		}
		if limit > 0 && n == limit {
			break
		}
		n++
		vals, str := hostValues(&h)
		if format == "csv" {
			cw.Write(vals)
			continue
		}
		w.WriteByte('{')
		for i, col := range hostColumns {
			if i > 0 {
				w.WriteByte(',')
			}
			k, _ := json.Marshal(col)
			w.Write(k)
			w.WriteByte(':')
			if str[i] {
				v, _ := json.Marshal(vals[i])
				w.Write(v)
			} else {
				w.WriteString(vals[i])
			}
		}
		w.WriteString("}\n")
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if only != "" && n == 0 {
		return withCode(exitNothingToDo, fmt.Errorf("readhostdb dump: the HostDb has no host %s", only))
	}
	return nil
}
