package main

import (
	"time"

	"github.com/urfave/cli/v2"
)

func generateCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "generate",
		Usage: "select due URLs into a new segment's fetch list",
		Description: `Selects the URLs that are due for fetching (per the fetch schedule), best
score first (with the dynamic schedule, best score times the estimated
probability that the page changed since its last fetch: schedule.dynamic.rank),
at most --max-per-host per host (or domain, --count-mode) and at
most --topN in all, and writes them to a new segment's crawl_generate,
partitioned by host into --num-fetchers parts. Prints the segment's path on
stdout. URLs in segments that updatedb has not merged yet (for up to
generate.delay) are not selected again.

Exits with status 1, writing no segment, when nothing is due (as Nutch's
generator does), so a script can end the round there.

--now sets the time generate considers "now": an RFC 3339 time, a date
(UTC midnight), or an offset from the wall clock such as +7d or +12h.

Examples:
   trawl --crawl ./crawl generate
   trawl --crawl ./crawl generate --topN 1000 --max-per-host 50 --num-fetchers 4
   trawl generate --count-mode domain --max-per-host 100
   trawl generate --now +30d                   # what will be due in 30 days
   seg=$(trawl generate --topN 5000) || exit 0  # stop the round when nothing is due`,
		Flags: []cli.Flag{
			settingFlag("topN"),
			settingFlag("max-per-host"),
			settingFlag("count-mode"),
			settingFlag("num-fetchers"),
			settingFlag("schedule"),
			nowFlagDef("generate considers now (what is due then)"),
			forceFlag(),
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("generate takes no arguments, got %q", c.Args().First())
			}
			now, err := parseNow(c.String("now"), time.Now())
			if err != nil {
				return usageErrorf("generate: %w", err)
			}
			return s.generate(c, now)
		}),
	}
}
