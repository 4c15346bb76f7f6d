#!/usr/bin/env bash
# Crawl CPU per page: serves a synthetic web from a separate trawl process,
# crawls it with another, and prints the crawl process's CPU time (user +
# sys, from /usr/bin/time -v) per page fetched, its peak RSS, the bytes
# of the segments' content, and the Go heap it allocated and the garbage
# collections that took (from GODEBUG=gctrace=1, whose lines go to the
# crawl's stderr, OUT_DIR/crawl.err). The server's CPU is not counted.
#
# Usage: scripts/crawlcpu.sh [TRAWL_BINARY [OUT_DIR [-- EXTRA CRAWL FLAGS]]]
#
# The web and crawl are fixed so that two runs are comparable: seed 1, 20,000
# pages on 200 hosts, no latency, no hazards; 5 rounds, one simulated day
# apart, topN 1,000,000, no server delay. PAGES, HOSTS and ROUNDS in the
# environment change them. OUT_DIR keeps the crawl (default: a temporary
# directory, removed) and the CrawlDB dump, sorted and normalized, as
# crawldb.csv, to compare two crawls with diff. SIMWEB_HTTP, SIMWEB_DNS and
# SIMWEB_SEEDS (the addresses and seed file of a `trawl simweb serve`
# already running, as scripts/leanratio.sh starts one) crawl that server
# instead of starting one; PAGES and HOSTS are then the server's.
# CPUPROFILE=FILE writes a CPU profile of the crawl process to FILE (it
# costs a little CPU itself); MEMPROFILE=FILE a heap profile at the live
# heap's peak; ALLOCPROFILE=FILE a profile of all the crawl's allocations.
# Measure on an otherwise quiet machine, or
# state the load average printed at the end.
set -euo pipefail
trawl=$(realpath "${1:-bin/trawl}")
out=${2:-}
shift $(($# < 2 ? $# : 2))
if [[ ${1:-} == -- ]]; then shift; fi
rounds=${ROUNDS:-5}
here=$(dirname "$(realpath "$0")")
# shellcheck source=scripts/simweb.sh
source "$here/simweb.sh"
simweb_workdir
if [[ -z $out ]]; then out=$work/out; fi
rm -rf "$out"
mkdir -p "$out"

if [[ -n ${SIMWEB_HTTP:-} || -n ${SIMWEB_DNS:-} || -n ${SIMWEB_SEEDS:-} ]]; then
	if [[ -z ${SIMWEB_HTTP:-} || -z ${SIMWEB_DNS:-} || -z ${SIMWEB_SEEDS:-} ]]; then
		echo "crawlcpu: give all of SIMWEB_HTTP, SIMWEB_DNS and SIMWEB_SEEDS, or none" >&2
		exit 2
	fi
	httpaddr=$SIMWEB_HTTP dnsaddr=$SIMWEB_DNS seeds=$SIMWEB_SEEDS
else
	simweb_start "$trawl" "$work"
	httpaddr=$simweb_http dnsaddr=$simweb_dns seeds=$work/seeds.txt
fi

prof=()
if [[ -n ${CPUPROFILE:-} ]]; then prof=(--cpuprofile "$CPUPROFILE"); fi
if [[ -n ${MEMPROFILE:-} ]]; then prof+=(--memprofile "$MEMPROFILE"); fi
if [[ -n ${ALLOCPROFILE:-} ]]; then prof+=(--allocprofile "$ALLOCPROFILE"); fi
GODEBUG=${GODEBUG:+$GODEBUG,}gctrace=1 /usr/bin/time -v -o "$out/time.txt" "$trawl" "${prof[@]}" --log-level warn --crawl "$out/crawl" crawl \
	--seeds "$seeds" --allow-private --agent trawl-bench --server-delay 0 \
	--dns-server "$dnsaddr" --rounds "$rounds" --topN 1000000 --days-per-round 1 \
	--now 2026-01-01T00:00:00Z --clock-url "http://$httpaddr/_simweb/clock" "$@" >"$out/crawl.out" 2>"$out/crawl.err"

# The dump is normalized so that two runs compare with diff: the server's
# port becomes P, and times are cut to the minute (a simulated fetch time is
# the round's time plus the wall time the fetch has run).
"$trawl" --log-level warn --crawl "$out/crawl" readdb dump --format csv 2>/dev/null |
	sed -E 's/:[0-9]{2,5}\//:P\//g; s/(T[0-9]{2}:[0-9]{2}):[0-9]{2}(\.[0-9]+)?Z/\1Z/g' | LC_ALL=C sort >"$out/crawldb.csv"
user=$(awk -F': ' '/User time/ {print $2}' "$out/time.txt")
sys=$(awk -F': ' '/System time/ {print $2}' "$out/time.txt")
rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$out/time.txt")
wall=$(awk -F': ' '/Elapsed \(wall/ {print $2}' "$out/time.txt")
fetched=$(awk '$1 == "fetched" {n += $2} END {print n + 0}' "$out/crawl.out")
content=$(du -sb "$out"/crawl/segments/*/content 2>/dev/null | awk '{n += $1} END {print n + 0}')
# The Go heap allocated over the crawl, from the collector's trace: the heap
# at each collection's start less the live heap the one before left.
gcs=$(awk '/^gc [0-9]+ @/ {
	for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+->[0-9]+->[0-9]+$/) {
		split($i, h, "->"); if (n > 0) a += h[1] - live; live = h[3]; n++
	}
} END {printf "%d %d", n, a}' "$out/crawl.err")
awk -v u="$user" -v s="$sys" -v n="$fetched" -v r="$rss" -v w="$wall" -v c="$content" -v g="$gcs" 'BEGIN {
	split(g, gc, " ")
	printf "pages fetched   %d\n", n
	printf "cpu user+sys    %.2f s (user %.2f, sys %.2f); wall %s\n", u + s, u, s, w
	printf "cpu per page    %.0f us\n", (u + s) * 1e6 / (n > 0 ? n : 1)
	printf "peak RSS        %.0f MiB\n", r / 1024
	printf "content bytes   %d (%.0f per page)\n", c, c / (n > 0 ? n : 1)
	printf "heap allocated  about %d MB in %d collections\n", gc[2], gc[1]
}'
echo "load average    $(cut -d' ' -f1-3 /proc/loadavg)"
