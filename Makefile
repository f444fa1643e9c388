# The README's two commands: `make dev` runs the product, `make test` runs the tests.
GO ?= go
STATICCHECK_VERSION ?= v0.8.2

.PHONY: dev test build lint bench services fuzz

dev: services
	$(GO) build -o bin/sapagent-dev ./cmd/sapagent-dev
	./bin/sapagent-dev

# Unit, integration (real Postgres, Redis, embedded Temporal) and fuzz seed-corpus tests.
test: services
	$(GO) test -count=1 -timeout 30m ./...

build:
	$(GO) build -o bin/ ./cmd/...

lint:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: services
	$(GO) test -run '^$$' -bench . -benchtime 1x -count=1 -timeout 30m ./...

# Starts the local Postgres and Redis when they are installed but not running.
services:
	@scripts/services.sh
