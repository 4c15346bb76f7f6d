package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
)

func warcCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "warc",
		Usage: "web archives: write segments as WARC files",
		Description: `Writes crawled pages as WARC/1.1 files (ISO 28500:2017), each with a CDXJ
index beside it, as pywb and OpenWayback read them. A fetch writes them as it
goes with --warc (fetcher.warc); warc export writes them from segments already
fetched.

Examples:
   trawl --crawl ./crawl fetch --agent mybot --warc
   trawl --crawl ./crawl warc export 20261121103000`,
		Subcommands: []*cli.Command{
			{
				Name:      "export",
				Usage:     "write fetched segments' pages as WARC files with CDXJ indexes",
				ArgsUsage: "SEGMENT...",
				Description: `Writes the content of each SEGMENT (a name under the crawl's segments/, a
path or a URI) as WARC/1.1 response records: one map task per content part,
each writing its own {prefix}-{timestamp}-{serial}-{host}.warc.gz files
(rolled at --warc-max-file-size) and a CDXJ index beside each (.cdxj: one
line per response, "SURT-key timestamp {json}" with url, mime, status,
digest, length, offset and filename, sorted by key and time).

A segment keeps no request, and its content holds the pages fetched with
success (HTTP 200), with the headers and the decoded bodies the fetcher
stored; headers that no longer agree with a decoded body (Content-Encoding,
Transfer-Encoding, Content-Length) are written under X-Archive-Orig- names,
so the records' digests and lengths validate. A fetch with --warc writes
request and response records of every response instead (redirects and
errors too).

Without --out each segment's files go into SEGMENT/warc; --out DIR writes
those of every SEGMENT into DIR. An existing output is refused unless
--force, which replaces it. The output is published whole when the job
succeeds and not at all when it fails. Exporting into a segment takes the
segment's lock.

Examples:
   trawl --crawl ./crawl warc export 20261121103000
   trawl warc export --out ./archive ./crawl/segments/20261121103000 ./crawl/segments/20261122103000
   trawl --engine hadoop warc export --out hdfs://nn:8020/archive/20261121 hdfs://nn:8020/crawl/segments/20261121103000
   trawl warc export --force --warc-max-file-size 100MiB 20261121103000`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Usage: "write every segment's files into `DIR` (path or URI) instead of SEGMENT/warc"},
					&cli.BoolFlag{Name: "force", Usage: "replace an existing output"},
					settingFlag("warc-max-file-size"),
					settingFlag("warc-prefix"),
				},
				Action: action(sio, func(s *session, c *cli.Context) error {
					return s.warcExport(c)
				}),
			},
		},
	}
}

func (s *session) warcExport(c *cli.Context) error {
	if !c.Args().Present() {
		return usageErrorf("warc export: give at least one SEGMENT")
	}
	wo, err := s.warcOptions()
	if err != nil {
		return err
	}
	o := jobs.WARCExportOptions{WARC: wo, Force: c.Bool("force")}
	for _, a := range c.Args().Slice() {
		u, err := s.segmentURI(a)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("warc export: %w", err))
		}
		o.Segments = append(o.Segments, u)
	}
	if out := c.String("out"); out != "" {
		if !strings.Contains(out, "://") {
			if out, err = filepath.Abs(out); err != nil {
				return usageErrorf("warc export: --out: %v", err)
			}
		}
		o.Out = out
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return err
	}
	res, err := jobs.ExportWARC(c.Context, env, o)
	if err != nil {
		return jobError(err)
	}
	w := s.io.stdout
	for _, out := range res.Outputs {
		fmt.Fprintf(w, "output:\t%s\n", out)
	}
	fmt.Fprintf(w, "responses:\t%d\n", res.Responses)
	fmt.Fprintf(w, "warc files:\t%d\n", res.Files)
	fmt.Fprintf(w, "bytes:\t%d\n", res.Bytes)
	return nil
}

// warcOptions returns the WARC options of the warc.* settings.
func (s *session) warcOptions() (jobs.WARCOptions, error) {
	o := jobs.WARCOptions{MaxFileSize: s.cfg.Size(config.WARCMaxFileSize), Prefix: s.cfg.String(config.WARCPrefix)}
	if o.MaxFileSize < 1 {
		return o, usageErrorf("%s must be at least 1 byte", config.WARCMaxFileSize)
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("warc.* settings: %w", err)
	}
	return o, nil
}
