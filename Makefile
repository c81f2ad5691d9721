# codemojex: common tasks. `make test` is the one command CI runs.
GO      ?= go
GOFILES  = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/*')

.PHONY: test fmt-check vet unit bench build clean demo

## test: gofmt check, go vet, the whole suite with -race, then the lanes suite again on a Valkey Cluster
test: fmt-check vet
	./scripts/ensure-valkey.sh
	$(GO) test -race -count=1 ./...
	VALKEYTEST_MODE=cluster $(GO) test -race -count=1 ./lanes/

fmt-check:
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet ./...

## bench: the lanes benchmarks (jobs/s) against a throwaway server
bench:
	./scripts/ensure-valkey.sh
	$(GO) test -run '^$$' -bench . -benchtime 2s ./lanes/

## demo: the whole system locally, no Telegram token: the real bot against a throwaway Valkey and the Bot API emulator
demo:
	./scripts/ensure-valkey.sh
	$(GO) run ./cmd/demo $(DEMO_FLAGS)

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/codemojex ./cmd/bot

clean:
	rm -rf bin
