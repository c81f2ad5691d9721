# codemojex: common tasks. `make test` is the one command CI runs.
GO      ?= go
GOFILES  = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bench/*')

# The Valkey 8 build provided beside the checkout (../shared/valkey/bin, see its README), when present,
# comes first on PATH, so valkey-benchmark and valkey-cli come from it too; scripts/ensure-valkey.sh and
# internal/valkeyserver prefer its valkey-server on their own (then valkey-server, then redis-server on PATH).
VALKEY_BIN_DIR ?= $(abspath $(CURDIR)/../shared/valkey/bin)
ifneq ($(wildcard $(VALKEY_BIN_DIR)/valkey-server),)
export PATH := $(VALKEY_BIN_DIR):$(PATH)
endif

.PHONY: test fmt-check vet bench bench-lanes build clean demo play console-screenshots chaos chaos-table

# TEST_SKIPS collects the tests that skipped for want of something (testkit.SkipOrFail), printed at the end of make test.
TEST_SKIPS ?= $(CURDIR)/.test-skips

## test: gofmt check, go vet (also of the bench module), the whole suite with -race, the bench module's report
## tests, then the lanes suite and the bot's failure tests again on a Valkey Cluster (three primaries; the failure
## tests' clusters have one replica each and add a primary killed / failed over mid-burst); lists at its end the tests
## that skipped for want of something (e.g. chromium, promtool); with CI set those fail instead. The alert rules
## (deploy/monitoring) are checked and unit-tested with promtool (Debian's prometheus package, which
## scripts/ensure-promtool.sh installs) by internal/deploytest, in the whole suite's run
# TEST_TIMEOUT bounds one package's tests: internal/app's run about 6 min under -race on
# a quiet 2-CPU host (two 50,000-chat broadcasts among them), longer beside other work;
# go test's default of 10 min is too tight there.
TEST_TIMEOUT ?= 30m

test: fmt-check vet
	./scripts/ensure-valkey.sh
	./scripts/ensure-chromium.sh
	./scripts/ensure-promtool.sh
	@rm -f $(TEST_SKIPS)
	CODEMOJEX_TEST_SKIPS=$(TEST_SKIPS) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd bench && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	VALKEYTEST_MODE=cluster CODEMOJEX_TEST_SKIPS=$(TEST_SKIPS) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./lanes/ ./internal/failuretest/
	@if [ -s $(TEST_SKIPS) ]; then echo; echo "make test: tests that did not run (with CI set they fail instead):"; cat $(TEST_SKIPS); fi

fmt-check:
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

## bench: the benchmark report (a few minutes): writes docs/benchmarks.md (the table, the machine, the server,
## the commit, what each row measures) and its charts docs/bench-*.png. Its scenarios are registered in
## bench/sections.go; the update intake's figures come from BenchmarkIntake (internal/app), which it runs.
## A separate Go module (bench/go.mod), so the main module does not depend on asynq or gonum. A partial run
## (cd bench && go run . -only fairness, or -quick) writes its report to a temporary directory instead;
## cd bench && go run . -docs ../docs -splice -only lazy puts its sections into docs/benchmarks.md in place of
## theirs (each says its own run), the rest of the report kept.
bench:
	./scripts/ensure-valkey.sh benchmarks
	@command -v redis-benchmark >/dev/null 2>&1 || command -v valkey-benchmark >/dev/null 2>&1 || \
		{ echo "make bench needs redis-benchmark or valkey-benchmark (Debian: apt-get install redis-tools)"; exit 1; }
	cd bench && $(GO) run . -docs ../docs $(BENCH_FLAGS)

## bench-lanes: the lanes Go benchmarks (jobs/s) against a throwaway server
bench-lanes:
	./scripts/ensure-valkey.sh benchmarks
	$(GO) test -run '^$$' -bench . -benchtime 2s ./lanes/

## demo: the whole system locally, no Telegram token: the real bot against a throwaway Valkey and the Bot API emulator
demo:
	./scripts/ensure-valkey.sh "the demo's processes"
	$(GO) run ./cmd/demo $(DEMO_FLAGS)

## play: the playground (docs/play.md): the real bot, a throwaway Valkey, the emulator and the console until Ctrl-C,
## with a local page (http://127.0.0.1:8090) where simulated users play it and buttons stage bursts, floods and faults
play:
	./scripts/ensure-valkey.sh "the playground's processes"
	$(GO) build -o bin/play ./cmd/play
	exec ./bin/play $(PLAY_FLAGS)

## chaos: a seeded run of random faults across the whole bot, then a checker over the whole history (docs/chaos.md):
## the bot in split roles on Valkey with a replica behind a TCP proxy, the emulator, a load of players, faults drawn
## from SEED (an unsigned whole number; default: the time) for DURATION (a Go duration from 30s to 24h; default
## 10m); a failure names the SEED that reproduces it. SEED= or DURATION= given empty stops with an error. With
## CHAOS_RECORD=docs/chaos-runs.jsonl the run's figures are appended there, a failed run's too (then make chaos-table
## whatever the result: `make chaos ... CHAOS_RECORD=...; make chaos-table`, not &&; a relative path is the
## checkout's: the test itself runs in internal/chaos). INTAKE=webhook: updates come by webhook (the emulator
## POSTs them to the poller's receiver and resends what was not answered 2xx) instead of getUpdates (INTAKE=poller).
## STORE=cluster: Valkey is a cluster of 3 primaries with a replica each, the bot's slot's primary killed (-9) and
## failed over instead of a restart and a failover, no network faults (STORE=standalone: a primary and a replica).
## LOG_LEVEL=debug (info, warn, error; default warn): the bot processes' LOG_LEVEL. A failed run writes every bot
## process's whole output to a chaos-logs-* directory under the temporary directory (/tmp), named at its end; a pass
## writes none unless CHAOS_KEEP_LOGS=1. The directories stay until removed (rm -r /tmp/chaos-logs-*).
SEED     ?= $(shell date +%s)
DURATION ?= 10m
INTAKE   ?= poller
STORE    ?= standalone
chaos:
	$(if $(strip $(SEED)),,$(error make chaos: SEED is empty: give an unsigned whole number such as SEED=30, or leave SEED out for the time))
	$(if $(strip $(DURATION)),,$(error make chaos: DURATION is empty: give a Go duration from 30s to 24h such as DURATION=10m, or leave DURATION out for 10m))
	./scripts/ensure-valkey.sh "the chaos run's processes"
	CHAOS_SEED=$(SEED) CHAOS_DURATION=$(DURATION) CHAOS_INTAKE=$(INTAKE) CHAOS_STORE=$(STORE) CHAOS_RECORD=$(if $(CHAOS_RECORD),$(abspath $(CHAOS_RECORD))) \
		CHAOS_LOG_LEVEL=$(LOG_LEVEL) CHAOS_KEEP_LOGS=$(CHAOS_KEEP_LOGS) \
		$(GO) test -count=1 -v -run '^TestChaos$$' -timeout 0 ./internal/chaos/

## chaos-table: docs/chaos.md's table of runs, made from docs/chaos-runs.jsonl
chaos-table:
	CHAOS_WRITE_DOCS=1 $(GO) test -count=1 -run '^TestDocsTableIsTheRecord$$' ./internal/chaos/

## console-screenshots: the console's pages as PNGs in docs/console/, taken by its browser test (headless Chromium)
console-screenshots:
	./scripts/ensure-valkey.sh
	./scripts/ensure-chromium.sh
	CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run '^TestConsoleInABrowser$$' ./internal/console/

## build: bin/codemojex, a static binary stamped with VERSION (codemojex --version; default: git describe)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X github.com/codemojex/codemojex/internal/version.stamped=$(VERSION)" -o bin/codemojex ./cmd/bot

clean:
	rm -rf bin
