#!/usr/bin/env bash
# crawl-round.sh: one real crawl round of trawl on the pseudo-distributed
# Hadoop of docker-compose.yml (HDFS and YARN), with --engine hadoop.
#
# Usage: deploy/docker/crawl-round.sh AGENT URL [URL...]
#
#   AGENT  the crawler's name, sent in User-Agent and matched in robots.txt
#   URL    the seed URLs: pages of a site you are allowed to crawl. Required,
#          there is no default. The fetch tasks run in the nodemanager
#          container and fetch them over the real network, politely (one
#          request per host every fetcher.serverDelay, robots.txt obeyed).
#
# Start the cluster first:
#   docker compose -f deploy/docker/docker-compose.yml up -d
#
# What it does:
#   1. builds trawl for linux/amd64 (static: CGO_ENABLED=0), from the
#      repository root, into a temporary directory;
#   2. waits for HDFS (a live datanode, out of safe mode) and YARN (a
#      nodemanager);
#   3. copies the binary to /tmp/trawl in the namenode container and the seed
#      URLs to hdfs://namenode:8020/seeds/crawl-round.txt;
#   4. runs, in the namenode container, with HADOOP_HOME=/opt/hadoop and the
#      image's streaming jar:
#        trawl --engine hadoop --crawl hdfs://namenode:8020/crawl crawl \
#          --seeds hdfs://namenode:8020/seeds/crawl-round.txt --agent AGENT --rounds 1
#      Every job of the round is a Hadoop Streaming job on YARN;
#   5. prints `trawl --crawl hdfs://namenode:8020/crawl readdb stats`.
# It exits with the crawl's status (see `trawl --help`).
#
# Run it again for the next round (the seeds are injected again; the CrawlDB
# keeps each URL once). Ctrl-C stops this script, not necessarily the trawl
# inside the container: `docker compose exec namenode pkill -TERM -x trawl`
# interrupts it (on Hadoop an interrupted fetch keeps nothing).
#
# --simweb cannot be used here: the synthetic web is served on loopback inside
# the trawl process that submits (the namenode container), and the fetch tasks
# run in the nodemanager container, whose loopback is its own.
#
# Not run where trawl is developed (no Docker engine there): see
# deploy/README.md.
set -euo pipefail

usage() {
	echo "usage: $0 AGENT URL [URL...]   (the seed URLs are required: a site you may crawl)" >&2
	exit 2
}

[[ $# -ge 2 ]] || usage
agent=$1
shift
[[ -n $agent && $agent != -* ]] || usage
for url in "$@"; do
	case $url in
	http://?* | https://?*) ;;
	*)
		echo "$0: not an http(s) URL: $url" >&2
		exit 2
		;;
	esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
compose=(docker compose -f "$here/docker-compose.yml")
nn=hdfs://namenode:8020
crawl=$nn/crawl
seeds=$nn/seeds/crawl-round.txt
hadoop_home=/opt/hadoop

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Run a command in the namenode container, as the image's user (hadoop).
in_namenode() {
	"${compose[@]}" exec -T namenode "$@"
}

echo "== building trawl for linux/amd64"
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o "$tmp/trawl" ./cmd/trawl)

echo "== waiting for HDFS and YARN"
ready=
for _ in $(seq 1 60); do
	hdfs_report=$(in_namenode hdfs dfsadmin -report 2>/dev/null || true)
	yarn_nodes=$(in_namenode yarn node -list 2>/dev/null || true)
	if grep -q '^Live datanodes ([1-9]' <<<"$hdfs_report" && grep -q 'Total Nodes:[1-9]' <<<"$yarn_nodes"; then
		ready=1
		break
	fi
	sleep 5
done
if [[ -z $ready ]]; then
	echo "$0: no live datanode or nodemanager after 5 minutes; see: ${compose[*]} logs" >&2
	exit 3
fi
in_namenode hdfs dfsadmin -safemode wait

echo "== copying trawl and the seeds"
"${compose[@]}" cp "$tmp/trawl" namenode:/tmp/trawl
in_namenode hdfs dfs -mkdir -p "$nn/seeds"
printf '%s\n' "$@" | in_namenode hdfs dfs -put -f - "$seeds"

jar=$(in_namenode sh -c "ls $hadoop_home/share/hadoop/tools/lib/hadoop-streaming-*.jar | head -n 1")
if [[ -z $jar ]]; then
	echo "$0: no hadoop-streaming jar under $hadoop_home/share/hadoop/tools/lib in the image" >&2
	exit 3
fi

hadoop_env=(-e "HADOOP_HOME=$hadoop_home" -e "HADOOP_CONF_DIR=$hadoop_home/etc/hadoop" -e "HADOOP_STREAMING_JAR=$jar")

echo "== one crawl round on YARN"
status=0
"${compose[@]}" exec -T "${hadoop_env[@]}" namenode \
	/tmp/trawl --engine hadoop --crawl "$crawl" crawl \
	--seeds "$seeds" --agent "$agent" --rounds 1 || status=$?

echo "== readdb stats (crawl exit status $status)"
"${compose[@]}" exec -T "${hadoop_env[@]}" namenode \
	/tmp/trawl --crawl "$crawl" readdb stats

exit "$status"
