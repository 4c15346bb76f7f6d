# trawl: a Nutch-style batch web crawler in Go.
# `make test` is what CI runs (via .ci/run); `make demo` is the README's "run it".

GO      ?= go
BIN     ?= bin/trawl
DEMO    ?= /tmp/trawl-demo
PKGS    ?= ./...


.PHONY: all build test test-short fuzz bench bench-crawldb bench-fetch bench-dns bench-dbscan bench-lean lint fmt crawl demo interop clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/trawl

# The full test suite, with the race detector (concurrency lives in the
# engine, the fetcher and the resolver).
# A binary built with -race sleeps a second before it exits (the race
# runtime's atexit_sleep_ms); the tests start many processes (the trawl
# binary, tasks of the Hadoop emulation, test binaries re-run as helpers),
# so they run without it. GORACE in the environment comes after and wins.
test:
	$(GO) vet $(PKGS)
	GORACE="atexit_sleep_ms=0 $(GORACE)" $(GO) test -race -count=1 -timeout 20m $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Every Go fuzz target, one after another, for FUZZTIME each (default 10s):
# make fuzz FUZZTIME=5m.
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh

# Go micro-benchmarks of every hot path (one pass each).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x $(PKGS)

# The CrawlDB harness: updatedb and generate on 2,000,000 URLs against the
# Parquet copy limit (see bench/README.md).
bench-crawldb: build
	$(GO) run ./bench/crawldb -trawl $(BIN)

# The fetch harness over a 500-host simweb (see bench/README.md): trawl
# fetch+parse against the raw net/http limit, colly (bench/peers/colly),
# Scrapy (Debian's python3-scrapy) and wget; then the crawl-scheduling
# paper's policy experiment, plots into bench-fetch-out/. Takes many minutes.
bench-fetch: build
	$(GO) run ./bench/fetch -trawl $(BIN) -out bench-fetch-out

# The DNS harness (see bench/README.md): 1,000,000 Zipf lookups over 3,000
# names against a local DNS server answering in 20 ms ± 10 ms, package
# resolver against Go's net.Resolver (time-bound), plots into bench-dns-out/.
bench-dns:
	$(GO) run ./bench/dns -out bench-dns-out

# The DBSCAN harness: trawl dbscan against scikit-learn's DBSCAN (Debian's
# python3-sklearn under /usr/bin/python3) on 1,000,000 simweb feature rows
# (see bench/README.md).
bench-dbscan: build
	$(GO) run ./bench/dbscan -trawl $(BIN)

# trawl's crawl CPU per page as a multiple of the lean pipeline's
# (bench/lean), both crawling one 20,000-page simweb, alternated N times
# (default 3; see bench/README.md).
bench-lean: build
	N=$(or $(N),3) ./scripts/leanratio.sh $(BIN)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Run a real crawl: 3 rounds of inject/generate/fetch/parse/updatedb, against
# the built-in synthetic web (HTTP + DNS on loopback, a fresh crawl in
# SIMCRAWL each time) unless SEEDS names a seed file (then the crawl goes to
# CRAWL and continues there, and AGENT names the crawler, as Nutch's
# http.agent.name).
CRAWL   ?= ./crawl
SIMCRAWL ?= ./crawl-simweb
ROUNDS  ?= 3
SEEDS   ?=
AGENT   ?=
crawl: build
	@if [ -n "$(SEEDS)" ]; then \
		$(BIN) --crawl $(CRAWL) crawl --seeds $(SEEDS) --rounds $(ROUNDS) $(if $(AGENT),--agent "$(AGENT)"); \
	else \
		rm -rf $(SIMCRAWL) && $(BIN) --crawl $(SIMCRAWL) crawl --simweb --rounds $(ROUNDS); \
	fi

# Inject a seed list, generate a fetch list and read the CrawlDB back.
demo: build
	./scripts/demo.sh $(BIN) $(DEMO)

# DuckDB, an independent Parquet reader, reads a CrawlDB trawl wrote and
# agrees with readdb stats (DuckDB from the npm registry; skipped without npm).
interop: build
	./scripts/duckdb-check.sh $(BIN)

clean:
	rm -rf bin
