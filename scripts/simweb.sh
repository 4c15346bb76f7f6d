# Sourced by scripts/crawlcpu.sh and scripts/leanratio.sh: starts the
# synthetic web both measure against and stops it.
#
# simweb_start TRAWL DIR serves, from a separate TRAWL process, seed 1,
# PAGES pages (default 20,000) on HOSTS hosts (default 200), no latency, no
# hazards, its seed list in DIR/seeds.txt and its output in DIR/serve.out;
# it sets simweb_pid, simweb_http and simweb_dns. simweb_stop stops it.
# simweb_workdir sets work to a new temporary directory, which the script's
# exit removes after stopping the server.

simweb_pid=
simweb_http=
simweb_dns=

simweb_start() {
	local trawl=$1 dir=$2
	"$trawl" --log-level warn simweb serve --pages "${PAGES:-20000}" --hosts "${HOSTS:-200}" --latency 0 --hazards none \
		--seeds-out "$dir/seeds.txt" >"$dir/serve.out" 2>&1 &
	simweb_pid=$!
	for _ in $(seq 100); do
		grep -q '^serving' "$dir/serve.out" 2>/dev/null && break
		sleep 0.1
	done
	simweb_http=$(awk '$1 == "http:" {print $2}' "$dir/serve.out")
	simweb_dns=$(awk '$1 == "dns:" {print $2}' "$dir/serve.out")
	if [[ -z $simweb_http || -z $simweb_dns ]]; then
		cat "$dir/serve.out" >&2
		echo "simweb: the server did not start" >&2
		return 1
	fi
}

simweb_workdir() {
	work=$(mktemp -d)
	trap 'simweb_stop; rm -rf "$work"' EXIT
}

simweb_stop() {
	if [[ -n $simweb_pid ]]; then
		kill "$simweb_pid" 2>/dev/null || true
		wait "$simweb_pid" 2>/dev/null || true
		simweb_pid=
	fi
}
