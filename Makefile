# Two commands on a fresh machine: `make run` and `make test`. Each installs what it needs.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json
MOCHA := node_modules/.bin/mocha
TSC := node_modules/.bin/tsc

.PHONY: run test build install bench clean test-unit test-int test-e2e deps-system

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

test: build deps-system
	$(MOCHA) --config .mocharc.json

test-unit: build
	$(MOCHA) --config .mocharc.json 'dist/**/*.unit.spec.js'

bench: build
	node dist/tests/bench/run.js

clean:
	rm -rf dist
