#!/usr/bin/env bash
# Interoperability check: DuckDB (an independent Parquet reader) reads a
# CrawlDB that trawl wrote and agrees with `trawl readdb stats`; then, after
# a focused crawl of a topical synthetic web (which keeps a LinkDB and runs
# linkrank), it reads the LinkDB and the CrawlDB's focus columns and agrees
# with `trawl readlinkdb stats` and `trawl readdb dump`.
# Usage: scripts/duckdb-check.sh [TRAWL_BINARY]
# DuckDB comes from the npm registry (@duckdb/node-api ships its native
# library inside the package); without node/npm the check is skipped.
set -euo pipefail
trawl=$(realpath "${1:-bin/trawl}")
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "duckdb-check: node/npm not found; skipped"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crawl="$work/crawl"

for h in 1 2 3; do
	for p in 1 2 3 4 5; do echo "http://h000$h.sim.test/p/$p.html"; done
done >"$work/seeds.txt"
printf 'http://h0009.sim.test/\tscore=3\tcategory=news\n' >>"$work/seeds.txt"
"$trawl" --crawl "$crawl" --log-level warn inject "$work/seeds.txt" >/dev/null
"$trawl" --crawl "$crawl" --log-level warn generate --topN 4 >/dev/null
want=$("$trawl" --crawl "$crawl" readdb stats --json)

focus="$work/focus"
"$trawl" --log-level warn simweb topic --topics 4 --topic 0 --samples 3 >"$work/topic.txt" 2>/dev/null
"$trawl" --log-level warn --crawl "$focus" crawl --simweb --topics 4 --hosts 10 --pages 400 --rounds 3 \
	--topN 40 --time-limit 5s --topic "$work/topic.txt" >/dev/null
links=$("$trawl" --crawl "$focus" readlinkdb stats --top 0 | awk -F'\t' '$1 == "inlinks:" {print $2}')
offtopic=$("$trawl" --crawl "$focus" readdb dump --format json | grep -c '"off_topic":true' || true)
scored=$("$trawl" --crawl "$focus" readdb dump --format json | grep -c '"link_relevance":0[,}]' || true)

(cd "$work" && npm install --silent --no-audit --no-fund @duckdb/node-api@1.5.6-r.1 >/dev/null 2>&1) || {
	echo "duckdb-check: could not install @duckdb/node-api from npm; skipped"
	exit 0
}
cat >"$work/q.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [dir, wantJSON] = process.argv.slice(2);
const want = JSON.parse(wantJSON);
const c = await (await DuckDBInstance.create(':memory:')).connect();
const q = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson();
const glob = `'${dir}/*.parquet'`;
const [t] = await q(`SELECT count(*) AS n, count(DISTINCT host) AS hosts, max(score) AS smax,
  min(fetch_interval) AS imin FROM ${glob}`);
const [m] = await q(`SELECT metadata['category'] AS cat FROM ${glob} WHERE url = 'http://h0009.sim.test/'`);
const fail = [];
if (Number(t.n) !== want.total) fail.push(`rows ${t.n} != ${want.total}`);
if (Number(t.hosts) !== want.hosts) fail.push(`hosts ${t.hosts} != ${want.hosts}`);
if (Number(t.smax) !== want.score_max) fail.push(`max score ${t.smax} != ${want.score_max}`);
if (Number(t.imin) !== want.fetch_interval_min) fail.push(`min interval ${t.imin} != ${want.fetch_interval_min}`);
if (String(m?.cat) !== 'news') fail.push(`metadata map: ${JSON.stringify(m)}`);
if (fail.length) { console.error('duckdb-check: FAIL: ' + fail.join('; ')); process.exit(1); }
console.log(`duckdb-check: DuckDB reads the CrawlDB: ${t.n} rows, ${t.hosts} hosts, agrees with readdb stats`);
JS
(cd "$work" && node q.mjs "$crawl/crawldb/current" "$want")

cat >"$work/f.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [linkdb, crawldb, links, offtopic, noRW] = process.argv.slice(2);
const c = await (await DuckDBInstance.create(':memory:')).connect();
const q = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson();
const [l] = await q(`SELECT count(*) AS n, count(DISTINCT "to") AS urls FROM '${linkdb}/*.parquet'`);
const [d] = await q(`SELECT count(*) FILTER (WHERE off_topic) AS off, count(*) FILTER (WHERE link_relevance = 0) AS norw,
  max(relevance) AS rmax, max(off_topic_hops) AS hops FROM '${crawldb}/*.parquet'`);
const fail = [];
if (Number(l.n) !== Number(links) || Number(l.n) === 0) fail.push(`LinkDB rows ${l.n} != ${links}`);
if (Number(d.off) !== Number(offtopic)) fail.push(`off-topic rows ${d.off} != ${offtopic}`);
if (Number(d.norw) !== Number(noRW)) fail.push(`rows without link relevance ${d.norw} != ${noRW}`);
if (!(Number(d.rmax) > 0)) fail.push(`max relevance ${d.rmax}`);
if (fail.length) { console.error('duckdb-check: FAIL: ' + fail.join('; ')); process.exit(1); }
console.log(`duckdb-check: DuckDB reads the LinkDB (${l.n} links to ${l.urls} URLs) and the focus columns (${d.off} pages off topic, max relevance ${Number(d.rmax).toFixed(3)}), agrees with readlinkdb and readdb`);
JS
(cd "$work" && node f.mjs "$focus/linkdb/current" "$focus/crawldb/current" "$links" "$offtopic" "$scored")

# The Arrow IPC stream of readdb dump --format arrow, read by the apache-arrow
# JavaScript package (an Arrow implementation independent of trawl's Go one),
# and by DuckDB's nanoarrow extension when DuckDB can install it (it comes
# from DuckDB's own extension site, not from npm; without it that part is
# skipped). Both must agree with readdb stats.
"$trawl" --crawl "$focus" readdb dump --format arrow --output "$work/crawldb.arrow"
fstats=$("$trawl" --crawl "$focus" readdb stats --json)
(cd "$work" && npm install --silent --no-audit --no-fund apache-arrow@21.2.0 >/dev/null 2>&1) || {
	echo "duckdb-check: could not install apache-arrow from npm; Arrow check skipped"
	exit 0
}
cat >"$work/a.mjs" <<'JS'
import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
const [file, wantJSON] = process.argv.slice(2);
const want = JSON.parse(wantJSON);
const t = tableFromIPC(readFileSync(file));
const byName = {};
const fail = [];
for (const row of t) {
  byName[row.status_name] = (byName[row.status_name] ?? 0) + 1;
  if (!row.status_name?.startsWith('db_')) fail.push(`status ${row.status} named ${row.status_name}`);
}
if (t.numRows !== want.total) fail.push(`apache-arrow: rows ${t.numRows} != ${want.total}`);
for (const [name, n] of Object.entries(want.status)) {
  if (byName[name] !== n) fail.push(`apache-arrow: ${name} ${byName[name]} != ${n}`);
}
let duck = 'DuckDB skipped (nanoarrow extension not installable here)';
const c = await (await DuckDBInstance.create(':memory:')).connect();
let loaded = false;
try {
  await c.run('INSTALL nanoarrow FROM community');
  await c.run('LOAD nanoarrow');
  loaded = true;
  const rows = (await c.runAndReadAll(`SELECT status_name::VARCHAR AS s, count(*) AS n FROM read_arrow('${file}') GROUP BY ALL`)).getRowObjectsJson();
  for (const r of rows) if (Number(r.n) !== want.status[r.s]) fail.push(`DuckDB: ${r.s} ${r.n} != ${want.status[r.s]}`);
  duck = `DuckDB reads it too (${rows.length} statuses)`;
} catch (e) {
  if (loaded) fail.push(`DuckDB: ${e}`);
}
if (fail.length) { console.error('duckdb-check: FAIL: ' + fail.slice(0, 10).join('; ')); process.exit(1); }
console.log(`duckdb-check: apache-arrow reads the Arrow dump of the CrawlDB (${t.numRows} rows in ${t.batches.length} batches), status names agree with readdb stats; ${duck}`);
JS
(cd "$work" && node a.mjs "$work/crawldb.arrow" "$fstats")
