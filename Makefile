# connect-solace build, test and lint targets. Plain make, no other tools.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X main.Version=$(VERSION) -X main.DateBuilt=$(DATE)
BIN     ?= bin/connect-solace

.PHONY: build demo docs test test-services test-unit test-integration lint bench clean console-screenshots

build:
	go build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/connect-solace

# Build, start the dev broker and run a publish/consume pipeline (README).
demo: build
	BIN=$(BIN) scripts/demo.sh

# Regenerate docs/components from the plugin specs; tests/docs_test.go fails
# when the committed pages are stale.
docs: build
	$(BIN) docs --out docs/components

# The whole suite: start the servers the tests need, run the unit tests, then
# the broker integration suites, which Benthos's integration package only runs
# when -run names them explicitly.
test: test-services test-unit test-integration

# RabbitMQ with AMQP 1.0 on 127.0.0.1 for the jms tests: installed (apt, needs
# root) on first use, reused when already running, left running afterwards.
# .ci/run starts it first and stops it at exit. The same for the MIT Kerberos KDC
# (realm CONNECT-SOLACE.TEST) of the Kerberos login tests, and for Chromium's
# chromedriver (127.0.0.1:9515) of the devbroker console's browser test.
test-services:
	bash -c 'source .ci/setup.d/20-rabbitmq.sh'
	bash -c 'source .ci/setup.d/30-krb5.sh'
	bash -c 'source .ci/setup.d/40-chromium.sh'

# Screenshots of the devbroker console for the docs, taken by its browser
# test (needs chromedriver: make test-services).
console-screenshots:
	CONSOLE_SCREENSHOTS_DIR=$(CURDIR)/docs/images go test -count=1 -run '^TestConsoleInBrowser$$' ./solacetest

test-unit:
	go test -race ./...

# Suites whose own test bodies race (see input/solace_integration_norace_test.go)
# are built only without -race and run in a last pass.
# The RabbitMQ restart tests stop the one shared broker, so they run after the
# other suites, one package at a time, where no other test can see it down.
RESTART_TESTS := ^TestIntegrationJMS.*BrokerRestart$$

test-integration:
	go test -race -run '^Test.*Integration.*$$' -skip '$(RESTART_TESTS)' ./...
	go test -race -p 1 -run '$(RESTART_TESTS)' ./input ./output
	go test -run '^TestIntegrationNoRace.*$$' ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	go vet ./...

bench:
	go test -run '^$$' -bench . -benchtime 2s ./...

clean:
	rm -rf bin
