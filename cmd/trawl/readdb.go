package main

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/arrowio"
	"github.com/trawl/trawl/crawldb"
)

func readdbCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "readdb",
		Usage: "read the CrawlDB: stats, dump, one URL, top scores",
		Description: `Reads the CrawlDB (crawl/crawldb/current) without locking it.

Examples:
   trawl --crawl ./crawl readdb stats
   trawl readdb dump --format csv --status db_unfetched --limit 10
   trawl readdb url https://example.com/
   trawl readdb top 20
   trawl readdb clusters

Statuses: the CrawlDB holds the db_* ones; segments hold the fetch_* ones
(crawl_fetch) and signature, linked and parse_metadata (crawl_parse). The
numbers are Nutch's CrawlDatum codes (fetch_skipped, fetch_refused and
fetch_robots_denied are trawl's). Dumps print both; --status takes either.
` + crawldb.StatusHelp("   "),
		Subcommands: []*cli.Command{
			readdbStatsCommand(sio),
			readdbDumpCommand(sio),
			readdbURLCommand(sio),
			readdbTopCommand(sio),
			readdbClustersCommand(sio),
		},
	}
}

// readdbStatsCommand is trawl readdb stats.
func readdbStatsCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "counts by status, score and interval statistics",
		Description: `Prints the number of URLs by status, score, fetch interval and retry
statistics, schedule sources and the number of hosts, in the style of Nutch's
readdb -stats, each status by number and name. --sort, as Nutch's
readdb -stats -sort, follows each status line with the URL count of every
host that has URLs of that status, hosts in name order; --json prints the same
as one JSON object (per_host in host name order).

Examples:
   trawl --crawl ./crawl readdb stats
   trawl readdb stats --sort
   trawl readdb stats --json | jq .status`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "sort", Usage: "under each status, list the URL count of every host, in host name order"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			return s.readdbStats(c)
		}),
	}
}

// readdbDumpCommand is trawl readdb dump.
func readdbDumpCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "dump",
		Usage: "write CrawlDB rows as CSV, JSON lines, Parquet or an Arrow stream",
		Description: `Writes every CrawlDB row (or those with --status, whose URL matches --regex,
up to --limit) in URL order to stdout or --output. CSV has a header row; JSON
is one object per line; both give the status as name and number
(status, status_code). Parquet has the CrawlDB's own schema.

Arrow writes an Arrow IPC stream: the CrawlDB's Parquet columns, with
status_name (the status's name, dictionary encoded) after status, in record
batches of at most ` + strconv.Itoa(arrowio.DefaultBatchRows) + ` rows or about ` + strconv.Itoa(arrowio.DefaultBatchBytes>>20) + ` MiB, so memory does not grow with the
CrawlDB. Read it with
   pyarrow:  pyarrow.ipc.open_stream(open("crawldb.arrow", "rb")).read_all()
   polars:   polars.read_ipc_stream("crawldb.arrow")
   DuckDB:   INSTALL nanoarrow FROM community; LOAD nanoarrow;
             SELECT status_name, count(*) FROM read_arrow('crawldb.arrow') GROUP BY ALL;
or stream it: trawl readdb dump --format arrow | python3 script.py

Examples:
   trawl readdb dump --format csv > crawldb.csv
   trawl readdb dump --format json --status db_fetched --regex '^https://example\.com/' --limit 100
   trawl readdb dump --format json --status 2
   trawl readdb dump --format parquet --output crawldb.parquet
   trawl readdb dump --format arrow --status db_unfetched --output unfetched.arrow`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "output `FORMAT`: csv, json (one object per line), parquet or arrow (an Arrow IPC stream)"},
			&cli.StringFlag{Name: "status", Usage: "only rows with status `S`, a name or number (db_unfetched or 1, db_fetched or 2, ...; see trawl readdb --help)"},
			&cli.StringFlag{Name: "regex", Usage: "only rows whose URL matches `R` (Go regexp syntax)"},
			&cli.Int64Flag{Name: "limit", Usage: "at most `N` rows (0: all)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			switch f := c.String("format"); f {
			case "csv", "json", "parquet", "arrow":
			default:
				return usageErrorf("readdb dump: --format must be csv, json, parquet or arrow, not %q", f)
			}
			return s.readdbDump(c)
		}),
	}
}

// readdbURLCommand is trawl readdb url.
func readdbURLCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "url",
		Usage:     "print the CrawlDB row of one URL",
		ArgsUsage: "URL",
		Description: `Prints the CrawlDB row of URL (normalized first, as inject does) as JSON.
Exits with status 1 when the URL is not in the CrawlDB.

Examples:
   trawl --crawl ./crawl readdb url https://example.com/
   trawl readdb url 'HTTP://Example.COM:80/a/../b' | jq .status`,
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("readdb url: give exactly one URL")
			}
			return s.readdbURL(c)
		}),
	}
}

// readdbTopCommand is trawl readdb top.
func readdbTopCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "top",
		Usage:     "print the N URLs with the highest scores",
		ArgsUsage: "N",
		Description: `Prints the N URLs with the highest scores, best first, as "score<TAB>url"
lines (ties in URL order).

Examples:
   trawl --crawl ./crawl readdb top 10`,
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("readdb top: give N, the number of URLs")
			}
			return s.readdbTop(c)
		}),
	}
}
