#!/usr/bin/env bash
# Two trawl builds' crawl CPU per page, alternated against one synthetic
# web: the way to tell whether a change saves CPU when one run of one build
# moves by a tenth, and to carry a figure across days as a ratio to a
# reference build (the code before the speed work, say).
#
# Usage: scripts/crawlpairs.sh REF_BINARY NEW_BINARY [N]
#
# Starts one `trawl simweb serve` with NEW_BINARY (as scripts/crawlcpu.sh
# does: seed 1, PAGES=20000 pages on HOSTS=200 hosts, no latency, no
# hazards), then N times (default 6) runs scripts/crawlcpu.sh with
# REF_BINARY and then with NEW_BINARY against it. It prints each pair: both
# builds' user+sys CPU per fetched page and peak RSS, the ratio NEW/REF,
# and whether the two crawls' CrawlDB dumps are the same (`same`; the
# dumps are normalized as scripts/crawlcpu.sh writes them); then the mean
# and range of the ratios and the load average. ROUNDS, PAGES and HOSTS
# pass to the crawls and the server. A build that predates a feature of
# the dump (PDF parsing, say) differs in those rows: `differs` then says
# nothing about the newer build. REF_FLAGS and NEW_FLAGS (words split on
# spaces) pass more crawl flags to one build's crawls: NEW_FLAGS=
# "--parse-types text/html,application/xhtml+xml,application/vnd.wap.xhtml+xml,text/plain"
# leaves PDFs unparsed, as builds before PDF parsing did, so that both
# crawls do the same work and their CrawlDBs can be the same.
#
# To build the reference: git worktree add /tmp/ref REV && (cd /tmp/ref &&
# go build -o /tmp/trawl.ref ./cmd/trawl).
set -euo pipefail
if [[ $# -lt 2 ]]; then
	echo "usage: scripts/crawlpairs.sh REF_BINARY NEW_BINARY [N]" >&2
	exit 2
fi
ref=$(realpath "$1")
new=$(realpath "$2")
n=${3:-6}
here=$(dirname "$(realpath "$0")")
# shellcheck source=scripts/simweb.sh
source "$here/simweb.sh"
simweb_workdir

simweb_start "$new" "$work"
export SIMWEB_HTTP=$simweb_http SIMWEB_DNS=$simweb_dns SIMWEB_SEEDS=$work/seeds.txt

# field OUT NAME prints the value scripts/crawlcpu.sh printed for NAME.
field() {
	case $2 in
	cpu) awk '$1 == "cpu" && $2 == "per" {print $4}' "$1" ;;
	rss) awk '$1 == "peak" && $2 == "RSS" {print $3}' "$1" ;;
	esac
}

printf '%-4s  %-22s  %-22s  %-6s  %s\n' pair "ref us/page (RSS)" "new us/page (RSS)" "ratio" "CrawlDB"
ratios=()
for i in $(seq "$n"); do
	for b in ref new; do
		bin=$ref flags=${REF_FLAGS:-}
		[[ $b == new ]] && bin=$new flags=${NEW_FLAGS:-}
		# shellcheck disable=SC2086 # flags split into words on purpose
		"$here/crawlcpu.sh" "$bin" "$work/$b" -- $flags >"$work/$b.out" 2>&1 || {
			cat "$work/$b.out" >&2
			exit 1
		}
	done
	rc=$(field "$work/ref.out" cpu) nc=$(field "$work/new.out" cpu)
	ratio=$(awk -v a="$nc" -v b="$rc" 'BEGIN {printf "%.3f", a / b}')
	ratios+=("$ratio")
	dump=differs
	cmp -s "$work/ref/crawldb.csv" "$work/new/crawldb.csv" && dump=same
	printf '%-4s  %-22s  %-22s  %-6s  %s\n' "$i" "$rc ($(field "$work/ref.out" rss) MiB)" \
		"$nc ($(field "$work/new.out" rss) MiB)" "$ratio" "$dump"
done
printf '%s\n' "${ratios[@]}" | awk '{s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1}
	END {printf "new/ref         %.3f mean of %d pairs (%.3f to %.3f)\n", s / NR, NR, lo, hi}'
echo "load average    $(cut -d' ' -f1-3 /proc/loadavg)"
