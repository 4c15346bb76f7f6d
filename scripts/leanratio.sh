#!/usr/bin/env bash
# trawl's crawl CPU per page as a multiple of the lean pipeline's
# (bench/lean), both measured against one synthetic web in the same run, so
# that the ratio holds across machines of different speed.
#
# Usage: scripts/leanratio.sh [TRAWL_BINARY]
#
# Starts one `trawl simweb serve` (as scripts/crawlcpu.sh does: seed 1,
# PAGES=20000 pages on HOSTS=200 hosts, no latency, no hazards), builds
# bench/lean, and then N times (default 3) runs, one after the other, the
# lean crawl (ROUNDS=5 rounds) and scripts/crawlcpu.sh against that server
# (the same trawl crawl command line, rounds and simulated clock). Each
# process's user+sys CPU time comes from /usr/bin/time -v and is divided by
# the pages it fetched (200 responses). It prints each run, the medians and
# the ratio trawl/lean: the median of the runs' ratios. TRAWL_FLAGS (words
# split on spaces) passes more flags to trawl's crawl: the lean crawl
# parses HTML only, so TRAWL_FLAGS="--parse-types
# text/html,application/xhtml+xml,application/vnd.wap.xhtml+xml,text/plain"
# leaves trawl's PDF parsing out of the comparison.
set -euo pipefail
trawl=$(realpath "${1:-bin/trawl}")
n=${N:-3}
rounds=${ROUNDS:-5}
here=$(dirname "$(realpath "$0")")
# shellcheck source=scripts/simweb.sh
source "$here/simweb.sh"
simweb_workdir

(cd "$here/.." && go build -o "$work/lean" ./bench/lean)
simweb_start "$trawl" "$work"

# cpu_per_page TIME_FILE PAGES prints user+sys CPU microseconds per page.
cpu_per_page() {
	awk -F': ' -v n="$2" '/User time/ {u = $2} /System time/ {s = $2}
		END {printf "%.0f\n", (u + s) * 1e6 / (n > 0 ? n : 1)}' "$1"
}
rss_mib() {
	awk -F': ' '/Maximum resident/ {printf "%.0f\n", $2 / 1024}' "$1"
}

printf '%-4s  %-28s  %-28s  %s\n' run "lean us/page (pages, RSS)" "trawl us/page (pages, RSS)" ratio
leans=() trawls=() ratios=()
for i in $(seq "$n"); do
	/usr/bin/time -v -o "$work/lean.time" "$work/lean" -http "$simweb_http" -dns "$simweb_dns" \
		-seeds "$work/seeds.txt" -rounds "$rounds" >"$work/lean.out"
	lpages=$(awk '$1 == "pages" && $2 == "fetched" {print $3}' "$work/lean.out")
	lcpu=$(cpu_per_page "$work/lean.time" "$lpages")

	# shellcheck disable=SC2086 # flags split into words on purpose
	SIMWEB_HTTP=$simweb_http SIMWEB_DNS=$simweb_dns SIMWEB_SEEDS=$work/seeds.txt ROUNDS=$rounds \
		"$here/crawlcpu.sh" "$trawl" "$work/trawl" -- ${TRAWL_FLAGS:-} >"$work/trawl.out"
	tpages=$(awk '$1 == "pages" && $2 == "fetched" {print $3}' "$work/trawl.out")
	tcpu=$(cpu_per_page "$work/trawl/time.txt" "$tpages")

	ratio=$(awk -v t="$tcpu" -v l="$lcpu" 'BEGIN {printf "%.2f", t / l}')
	leans+=("$lcpu") trawls+=("$tcpu") ratios+=("$ratio")
	printf '%-4s  %-28s  %-28s  %s\n' "$i" \
		"$lcpu ($lpages, $(rss_mib "$work/lean.time") MiB)" \
		"$tcpu ($tpages, $(rss_mib "$work/trawl/time.txt") MiB)" "$ratio"
	sed -n 's/^stage cpu *//p' "$work/lean.out" | sed 's/^/      lean stages: /'
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "lean cpu/page   $(median "${leans[@]}") us (median of $n)"
echo "trawl cpu/page  $(median "${trawls[@]}") us (median of $n)"
echo "trawl/lean      $(median "${ratios[@]}") (median of the runs' ratios)"
echo "load average    $(cut -d' ' -f1-3 /proc/loadavg)"
