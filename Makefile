# The README's two commands: `make dev` runs the product, `make test` runs the tests.
GO ?= go
NPM ?= npm
STATICCHECK_VERSION ?= v0.8.2

.PHONY: dev test test-go test-web build generate lint lint-web bench services fuzz web web-deps node sapsim oracle-public

# What the page is built from: rebuilding when none of it changed is skipped.
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) web/index.html web/package.json \
	web/package-lock.json $(wildcard web/vite.config.* web/tsconfig*.json)
# npm ci writes this file last; it is older than the lockfile when the dependencies changed.
WEB_DEPS := web/node_modules/.package-lock.json

# Builds the page when Node and npm are here; without them the api binary still builds and
# serves a page saying how to build it.
dev: services
	@if scripts/node.sh check >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory web; \
	else \
		echo "dev: the web page is not built: $$(scripts/node.sh check 2>&1)"; \
		echo "dev: install Node.js 20 or newer with npm, then run 'make web' (make dev does it for you)"; \
	fi
	$(GO) build -o bin/sapagent-dev ./cmd/sapagent-dev
	./bin/sapagent-dev

# The web page (web/dist, embedded into the binaries by go build).
web: web/dist/index.html

node:
	@scripts/node.sh check

$(WEB_DEPS): web/package-lock.json | node
	cd web && $(NPM) ci --no-audit --no-fund
	@touch $@

# Old hashed assets are removed first so the binary embeds only the current build.
web/dist/index.html: $(WEB_DEPS) $(WEB_SOURCES) | node
	rm -rf web/dist/assets
	cd web && ../scripts/stage.sh web-build $(NPM) run build

# Go unit, integration (real Postgres, Redis, embedded Temporal) and fuzz seed-corpus tests, then
# the page's unit tests and its browser tests (Chromium from Debian, installed when missing). The
# downloads (npm ci, Chromium) run in the background while the Go tests run; they touch neither
# web/dist nor anything Go compiles. The Go tests embed whatever web/dist holds (the integration
# test of the page passes with or without a build); the browser tests build the page and a binary
# that embeds it.
# Each stage prints how long it took (scripts/stage.sh).
test: services
	@mkdir -p web/e2e/results
	@( $(MAKE) --no-print-directory web-deps && scripts/chromium.sh ) > web/e2e/results/prepare.log 2>&1 & prep=$$!; \
	status=0; scripts/stage.sh go-tests $(GO) test $(GO_TEST_FLAGS) ./... || status=$$?; \
	if ! wait $$prep; then echo "test: preparing the browser tests failed:"; cat web/e2e/results/prepare.log; exit 1; fi; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	$(MAKE) --no-print-directory test-web

web-deps: $(WEB_DEPS)

# Only the integration package marks tests parallel (each has its own stack, and the tests mostly
# wait). On a quiet 2-core machine 4 at a time took the package from 585 s (2) to 455 s with no
# failure (docs/benchmarks.md, "CI time per stage").
GO_TEST_PARALLEL ?= 4
GO_TEST_FLAGS ?= -count=1 -timeout 30m -parallel $(GO_TEST_PARALLEL)

test-go: services
	scripts/stage.sh go-tests $(GO) test $(GO_TEST_FLAGS) ./...

test-web: services web
	cd web && ../scripts/stage.sh web-unit $(NPM) test
	cd web && ../scripts/stage.sh browser-tests $(NPM) run e2e

build:
	$(GO) build -o bin/ ./cmd/...

# Files generated from Go types (the event protocol's schema and the page's event types, the
# API's OpenAPI document) and, when Node is here, the page's REST types from that document; a
# test (or make lint-web) fails when they are stale, so commit what this writes.
generate:
	$(GO) generate ./...
	@if scripts/node.sh check >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory web-deps && cd web && $(NPM) run gen:api; \
	else \
		echo "generate: web/src/api/schema.gen.ts not regenerated: $$(scripts/node.sh check 2>&1)"; \
	fi

lint:
	scripts/stage.sh go-vet $(GO) vet ./...
	scripts/stage.sh staticcheck $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The page: ESLint (web/eslint.config.js) and TypeScript's checks of the page and its browser
# tests; redocly lint of schemas/openapi.json (web/redocly.yaml) and the page's REST types
# regenerated from it must equal web/src/api/schema.gen.ts.
lint-web: web-deps
	cd web && ../scripts/stage.sh eslint $(NPM) run lint
	cd web && ../scripts/stage.sh typecheck $(NPM) run typecheck
	cd web && ../scripts/stage.sh openapi-lint $(NPM) run lint:api

bench: services
	$(GO) test -run '^$$' -bench . -benchtime 1x -count=1 -timeout 30m ./...
	$(GO) test -run '^$$' -bench ConnectorOverhead -benchtime 3000x -count=3 ./internal/devstack/

# The SAP simulator alone (SAPSIM_ADDR; SAPSIM_ARGS="--abapgit <folder> --landscape-objects N").
sapsim:
	$(GO) build -o bin/sapagent-sapsim ./cmd/sapagent-sapsim
	./bin/sapagent-sapsim $(SAPSIM_ARGS)

# abapref against abaplint, loading and Clean Core grades on public abapGit repositories:
# make oracle-public ORACLE_REPOS="abapGit=/path/abapGit.git flight=/path/flight.git@ABAP-platform-cloud …"
oracle-public:
	scripts/abap-oracle-repos.sh $(ORACLE_REPOS)

# Starts the local Postgres and Redis when they are installed but not running.
services:
	@scripts/services.sh
