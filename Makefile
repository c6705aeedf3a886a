# The project's commands. `make test` is what CI runs (.ci/run).
GO ?= go

.PHONY: test test-unit vet build

build:
	$(GO) build -o bin/streamshift ./cmd/streamshift

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Fast: vet and every Go test that needs no real Kafka.
test-unit: vet
	$(GO) test -count=1 ./...

# Everything: the fast tests, then the real-Kafka e2e suite.
test: test-unit

# classicstreams golden vectors, regenerated with the real kafka-streams 4.4.0 and 3.9.2 jars
# (Maven downloads them) into classicstreams/testdata/vectors-*/, which are committed.
.PHONY: vectors
vectors:
	e2e/vectors/generate.sh
