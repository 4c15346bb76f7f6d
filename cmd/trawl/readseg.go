package main

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/arrowio"
	"github.com/trawl/trawl/crawldb"
)

func readsegCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "readseg",
		Usage: "read segments: list them, dump their records",
		Description: `Reads segments under the crawl's segments/ directory.

Examples:
   trawl --crawl ./crawl readseg list
   trawl readseg dump 20261121103000 --dir crawl_fetch`,
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list segments with their record counts",
				ArgsUsage: "[SEGMENT...]",
				Description: `Lists the given segments (names under segments/, paths or URIs), or every
segment of the crawl, with the number of records in each stage
(generated, fetched, parsed) and its state: incomplete (a generate that
died), generated, fetched, parsed or merged (updatedb merged it).

Examples:
   trawl --crawl ./crawl readseg list
   trawl readseg list 20261121103000
   trawl readseg list ./crawl/segments/20261121103000`,
				Action: action(sio, func(s *session, c *cli.Context) error {
					return s.readsegList(c)
				}),
			},
			{
				Name:      "dump",
				Usage:     "print a segment's records as JSON lines or an Arrow stream",
				ArgsUsage: "SEGMENT",
				Description: `Prints the records of a segment's stage directories (every one present, or
those given with --dir) as JSON lines, each with the stage's name in "dir".
A status prints as its name ("status") and its Nutch number ("status_code").
--status keeps the records of one status (a name or number, below) of the
stages that have one: crawl_generate (db_*), crawl_fetch (fetch_*) and
crawl_parse (signature, linked, parse_metadata).

--format arrow writes one stage (give one --dir) as an Arrow IPC stream: its
Parquet columns, a status followed by status_name (its name, dictionary
encoded), part by part in record batches of at most ` + strconv.Itoa(arrowio.DefaultBatchRows) + ` records or about
` + strconv.Itoa(arrowio.DefaultBatchBytes>>20) + ` MiB; the schema's metadata names the stage ("trawl.dir"). Read it with
pyarrow.ipc.open_stream, polars.read_ipc_stream or DuckDB's nanoarrow
extension (see trawl readdb dump --help).

Examples:
   trawl readseg dump 20261121103000
   trawl readseg dump 20261121103000 --dir crawl_generate --limit 10
   trawl readseg dump ./crawl/segments/20261121103000 --dir crawl_fetch --dir crawl_parse
   trawl readseg dump 20261121103000 --dir crawl_fetch --status fetch_gone
   trawl readseg dump 20261121103000 --dir crawl_parse --format arrow -o parse.arrow

Statuses (number, name, meaning):
` + crawldb.StatusHelp("   "),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: "json", Usage: "output `FORMAT`: json (one object per line) or arrow (an Arrow IPC stream of one --dir)"},
					&cli.StringSliceFlag{Name: "dir", Usage: "stage `DIR` to dump (crawl_generate, crawl_fetch, content, parse_data, parse_text, crawl_parse); repeatable"},
					&cli.Int64Flag{Name: "limit", Usage: "at most `N` records per stage (0: all)"},
					&cli.StringFlag{Name: "status", Usage: "only records with status `S`, a name or number (fetch_success or 33, linked or 67, ...)"},
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
				},
				Action: action(sio, func(s *session, c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("readseg dump: give exactly one SEGMENT")
					}
					return s.readsegDump(c)
				}),
			},
		},
	}
}
