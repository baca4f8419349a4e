# Two commands on a fresh machine: `make run` and `make test`. Each installs what it needs.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json
MOCHA := node_modules/.bin/mocha
TSC := node_modules/.bin/tsc

.PHONY: run test build install bench clean test-unit test-int test-e2e deps-system \
	run-command-api run-query-api run-projections test-topology soak

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NODE_MODULES)

install: $(NODE_MODULES)

build: install
	$(TSC) -p tsconfig.json

# System packages some tests need (real nats-server, nginx); installed from Debian when missing.
deps-system:
	@bash infra/scripts/install-system-deps.sh

run: build
	node dist/infra/main.js

# The distributed topology, one process per target (docs/topology.md). Each needs NATS_URL; the stores are
# EVENTSTORE_URL / MONGO_URL when set, else the SQLite files of a DATA_DIR shared by the processes of one machine.
run-command-api: build
	node dist/infra/entry/command-api.js

run-query-api: build
	node dist/infra/entry/query-api.js

run-projections: build
	node dist/infra/entry/projections.js

test: build deps-system
	$(MOCHA) --config .mocharc.json

# The topology specs with the whole HTTP e2e suite against the separate processes (make test runs them too);
# TOPOLOGY=multi makes any e2e file run against them.
test-topology: build deps-system
	TOPOLOGY_E2E=all $(MOCHA) --no-config --timeout 60000 --exit dist/tests/e2e/topology.e2e.spec.js dist/tests/e2e/e2e-in-topology.e2e.spec.js

test-unit: build
	$(MOCHA) --config .mocharc.json 'dist/**/*.unit.spec.js'

bench: build
	node dist/tests/bench/run.js

# Crash trials at volume (not part of make test): SOAK_TRIALS SIGKILLs under mixed load (default 100), each restarted
# and checked (acknowledged writes kept, nothing applied twice, read models equal a replay). SOAK_SEED (default 1),
# SOAK_TRIALS_PER_DIR (default 25), SOAK_KILL_MS (default 300-2500). A passing run of 100+ trials writes the
# "Crash soak" section of docs/benchmarks.md (SOAK_WRITE_DOCS=0 to skip). tests/soak/crash-soak.ts.
soak: build
	node dist/tests/soak/crash-soak.js

clean:
	rm -rf dist
