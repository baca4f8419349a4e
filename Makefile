# Two commands on a fresh machine: `make run` and `make test`. Each installs what it needs.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json
MOCHA := node_modules/.bin/mocha
TSC := node_modules/.bin/tsc
# Both from the tools/lint workspace (typescript-eslint on TypeScript 5; docs/adr/0034-lint-and-formatting.md).
ESLINT := node_modules/.bin/eslint
PRETTIER := node_modules/.bin/prettier
# What Prettier formats: the code. Docs, JSON and YAML keep their hand layout.
FORMATTED := '**/*.{ts,js,mjs}'
# The Prettier half of `make lint` (`make lint FORMAT_CHECK=off` skips it, e.g. while a branch is being formatted).
FORMAT_CHECK ?= on

.PHONY: run test build install bench clean lint format test-unit test-int test-e2e deps-system \
	run-command-api run-query-api run-projections test-topology client config-doc \
	run-topology test-engines soak bench-scale screenshots bench-search demo

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NODE_MODULES)

install: $(NODE_MODULES)

build: install
	$(TSC) -p tsconfig.json

# The typed client's generated types (clients/typescript/src/schema.d.ts) from the published document, built
# in-process (starts nothing). Commit the result: a test of `make test` fails while the committed copy is out of date.
client: build
	node clients/typescript/generate.mjs

# The settings table of docs/configuration.md from SETTINGS in infra/wiring/config.ts. Commit the result: a test of
# `make test` fails while the committed table is out of date.
config-doc: build
	node dist/infra/wiring/config-doc.js

# System packages some tests need (real nats-server, nginx, chromium); installed from Debian when missing.
deps-system:
	@bash infra/topology/scripts/install-system-deps.sh

run: build
	node dist/infra/main.js

# The first minute (infra/topology/demo/main.ts): the service with a partner, a live store and searchable offers, their covers
# on a local HTTPS server with a throw-away CA; prints the search and offer URLs and the keys; Ctrl-C stops it.
# Its data is DEMO_DATA_DIR (default ./data-demo, never `make run`'s ./data); PORT / ADMIN_PORT as `make run`.
demo: build
	node dist/infra/topology/demo/main.js

# The distributed topology, one process per target (docs/topology.md). Each needs NATS_URL; the stores are
# EVENTSTORE_URL / MONGO_URL when set, else the SQLite files of a DATA_DIR shared by the processes of one machine.
# The whole topology on one machine, in one command (infra/wiring/entry/topology.ts, docs/topology.md): nats-server with
# JetStream, 2 command-api, 2 query-api, 1 projections and nginx as the gateway, reading what `make run` reads (PORT
# is nginx's, ADMIN_PORT the admin API's, DATA_DIR the shared SQLite files unless EVENTSTORE_URL / MONGO_URL are set;
# NATS_URL set: no nats-server is started; COMMAND_REPLICAS / QUERY_REPLICAS). SIGTERM or Ctrl-C stops everything.
run-topology: build deps-system
	node dist/infra/wiring/entry/topology.js

run-command-api: build
	node dist/infra/wiring/entry/command-api.js

run-query-api: build
	node dist/infra/wiring/entry/query-api.js

run-projections: build
	node dist/infra/wiring/entry/projections.js

# ESLint with typescript-eslint's type-checked rules over every source (eslint.config.js), then Prettier's check.
# Both keep a cache in .cache/ (gitignored): a file whose text did not change keeps its verdict, so a second run takes
# seconds instead of minutes. ESLint's verdict on an unchanged file is not redone when a type it uses changed
# elsewhere; a fresh clone (CI) has no cache, and `rm -rf .cache` forces the full run.
lint: install
	$(ESLINT) --cache --cache-location .cache/eslint/ --cache-strategy content --max-warnings 0 .
	@if [ "$(FORMAT_CHECK)" = on ]; then $(PRETTIER) --check --cache --cache-location .cache/prettier --log-level warn $(FORMATTED); \
	else echo "prettier --check skipped: FORMAT_CHECK=off until the code base is formatted (make format)"; fi

# Rewrites the code in Prettier's layout (.prettierrc.json). Twice: a few method chains reach their final layout
# only on a second pass (Prettier is not always idempotent), and the check would then fail on them.
format: install
	$(PRETTIER) --write --log-level warn $(FORMATTED)
	$(PRETTIER) --write --log-level warn $(FORMATTED)

# OPENAPI_CHECK_ANSWERS=1: every answer of the partner API in the suite is validated against the published OpenAPI
# document by an outside validator (tests/support/published-openapi.ts); a root hook fails the run on any mismatch.
test: lint build deps-system
	OPENAPI_CHECK_ANSWERS=1 $(MOCHA) --config .mocharc.json

# The topology specs with the whole HTTP e2e suite against the separate processes (make test runs them too);
# TOPOLOGY=multi makes any e2e file run against them.
test-topology: build deps-system
	TOPOLOGY_E2E=all $(MOCHA) --no-config --timeout 60000 --exit dist/tests/e2e/topology.e2e.spec.js dist/tests/e2e/e2e-in-topology.e2e.spec.js

# Every contract suite AND the e2e suite (embedded service and topology) on real engines: EVENTSTORE_URL and
# MONGO_URL are required (docker compose -f infra/topology/deploy/compose.yaml up -d eventstore mongo nats). Each e2e test
# service runs in its own EVENTSTORE_STREAM_PREFIX / MONGO_DB on those servers (tests/support/engines.ts).
# NEVER RUN HERE: no server can be installed on these machines (docs/topology.md).
test-engines: build deps-system
	@if [ -z "$$EVENTSTORE_URL" ] || [ -z "$$MONGO_URL" ]; then \
	  echo "make test-engines needs EVENTSTORE_URL and MONGO_URL (e.g. EVENTSTORE_URL='esdb://127.0.0.1:2113?tls=false' MONGO_URL='mongodb://127.0.0.1:27017/?replicaSet=rs0&directConnection=true')" >&2; exit 2; fi
	OPENAPI_CHECK_ANSWERS=1 $(MOCHA) --config .mocharc.json

test-unit: build
	$(MOCHA) --config .mocharc.json 'dist/**/*.unit.spec.js'

# Benchmarks (not part of make test) print their figures and write them, with the command, commit, date and machine,
# to .bench/<name>.json and .bench/<name>.md (gitignored; BENCH_RESULTS_DIR moves it). They never write into docs/:
# the reviewed figures against their targets are docs/performance.md.
# The write path, projection lag and PATCH on a long stream (tests/bench/run.ts): .bench/bench.json. Then the read
# paths at volume (tests/bench/read-paths-bench.ts: the statement against GET /conversions, the closing CSV, the portal
# pages, the channel feeds; sizes BENCH_LEDGER_ROWS, BENCH_OFFERS, ...; the default log of 1,000,000 movements takes
# 20-40 min to seed on a shared 2-core machine, BENCH_LEDGER_NOISE=30000 for a quick run): .bench/bench-read-paths.json.
bench: build
	node dist/tests/bench/run.js
	node dist/tests/bench/read-paths-bench.js

# The service at scale: >= 300 partners under the rate brake, cover checks against a loopback HTTPS image server,
# phases A (batch load), P (PUT), B (mix at SCALE_SKUS), C (mix at 10,000), D (restart, rebuilds, audit), each beside
# a bare node:http server. SCALE_SKUS (default 1000000), SCALE_SECONDS, SCALE_PARTNERS, BENCH_TARGET (a running
# make run-topology). tests/bench/scale.ts; .bench/bench-scale.json.
bench-scale: build deps-system
	node dist/tests/bench/scale.js

# Search under load: SEARCH_OFFERS searchable offers (default 1 000 000), 50 searches/s while partners write (their
# covers checked; SEARCH_COVERS=off: not), measured after SEARCH_WARMUP seconds (default 5); SEARCH_DATA_DIR keeps a
# seeded read.db between runs; SEARCH_MAIN=<build>/dist/infra/main.js runs another build's service under the same
# load; SEARCH_FEED_DOWNLOADS=1: a channel downloads the full feed through the second half of the measured seconds and
# the search p99 is given for each half. tests/bench/search-bench.ts; .bench/bench-search.json.
bench-search: build
	node dist/tests/bench/search-bench.js

# The shopper pages' screenshots of the README (docs/screenshots/*.png), taken by the browser test in Chromium.
screenshots: build deps-system
	SHOPPER_SCREENSHOTS=1 $(MOCHA) --no-config --timeout 180000 --exit dist/tests/browser/shopper-pages.browser.spec.js

# Crash trials at volume (not part of make test): SOAK_TRIALS SIGKILLs under mixed load (default 100), each restarted
# and checked (acknowledged writes kept, nothing applied twice, read models equal a replay). SOAK_SEED (default 1),
# SOAK_TRIALS_PER_DIR (default 25), SOAK_KILL_MS (default 300-2500). tests/soak/crash-soak.ts; .bench/soak.json.
# Then the channel feeds' promise (snapshot at X + changes up to Y = snapshot at Y) over a longer random run than
# make test's: FEEDS_PROPERTY_RUNS (default here 100), FEEDS_PROPERTY_STEPS (20), FEEDS_PROPERTY_SEED.
soak: build
	node dist/tests/soak/crash-soak.js
	FEEDS_PROPERTY_RUNS=$${FEEDS_PROPERTY_RUNS:-100} FEEDS_PROPERTY_STEPS=$${FEEDS_PROPERTY_STEPS:-20} \
		$(MOCHA) --no-config --timeout 1800000 --exit dist/tests/e2e/feeds.property.e2e.spec.js

clean:
	rm -rf dist
