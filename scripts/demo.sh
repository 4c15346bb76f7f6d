#!/usr/bin/env bash
# Demo of the CrawlDB pipeline: inject seeds, generate a fetch list, read the
# CrawlDB and the segment back. Usage: scripts/demo.sh [TRAWL_BINARY] [DIR]
set -euo pipefail
trawl=${1:-bin/trawl}
dir=${2:-/tmp/trawl-demo}
rm -rf "$dir" && mkdir -p "$dir"
crawl="$dir/crawl"

# A seed list with a few hosts, per-URL settings and two bad lines.
{
	echo "# trawl demo seeds"
	for h in 1 2 3 4 5; do
		for p in 1 2 3 4; do
			echo "http://h000$h.sim.test/page/$p.html"
		done
	done
	printf 'http://h0001.sim.test/news/\tscore=2.5\tfetchInterval=3600\n'
	echo "not a url"
	echo "ftp://h0002.sim.test/file.txt"
} >"$dir/seeds.txt"

set -x
"$trawl" --crawl "$crawl" inject "$dir/seeds.txt"
"$trawl" --crawl "$crawl" readdb stats
segment=$("$trawl" --crawl "$crawl" generate --topN 12 --max-per-host 3 --num-fetchers 2)
"$trawl" --crawl "$crawl" readseg list "$segment"
"$trawl" --crawl "$crawl" readdb top 5
"$trawl" --crawl "$crawl" readdb dump --format csv --limit 5
# The URLs in the pending fetch list are not generated again before updatedb
# merges it (the generate lock): the next fetch list holds only the rest ...
"$trawl" --crawl "$crawl" generate --topN 100
# ... and after that nothing is due: exit status 1, as Nutch's generator.
"$trawl" --crawl "$crawl" generate --topN 100 || echo "generate: nothing due (exit $?)"
"$trawl" --crawl "$crawl" readseg list
