# The project's commands. `make test` is what CI runs (.ci/run).
GO ?= go
MVN ?= mvn
MVNFLAGS ?= -B -q
# The e2e suite starts real brokers and Kafka Streams JVMs: one package at a time, and two tests
# at a time (E2E_PARALLEL=2): tests call t.Parallel and each has its own brokers, ports and
# e2e/out/<test>/, and most of a test's time is spent waiting on Kafka Streams at under a core.
# What made three tests fail on timing at 2 is gone (e2e/README.md): no streamshift a test starts
# binds a fixed default port (admin 19080; the internal listener takes a free port), the 4.4 smoke launcher verifies again
# when Kafka's driver races its own end offsets, and the smoke migration runs with 30 s sessions.
# E2E_PARALLEL=1 runs one at a time (the README states how long `make test` takes; docs/testing.md the parts).
# Tests that measure the machine (TestOverload, the benchmarks) do not call t.Parallel: they run
# first, alone.
E2E_PARALLEL ?= 2
E2E_TIMEOUT ?= 60m
# Unit tests that call t.Parallel wait on sockets and timers far more than they compute.
UNIT_PARALLEL ?= 8

.PHONY: test test-unit test-e2e e2e-build vet build image

# The commit and version (git describe) are stamped with -X as well: Go stamps its own VCS
# information only in a checkout whose .git is a directory (not a git worktree).
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
GIT_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -X main.buildCommit=$(GIT_COMMIT) -X main.buildVersionTag=$(GIT_VERSION)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/streamshift ./cmd/streamshift

# The Docker image, built from source by the Dockerfile, with no registry and no module proxy:
# the context is a copy of the source tree (what git keeps, untracked files included) with
# vendor/ (go mod vendor, run in the copy: the tree's e2e/out holds brokers' data directories that
# come and go while the suite runs, and go mod vendor walks every directory it is run in), in a
# temporary directory, so that the tree itself gets no vendor/;
# the Go build stage runs in BUILDER, by default an image made from this machine's Go
# toolchain (.ci/go-builder-image). `make image BUILDER=golang:1.26.8` builds in the official
# image instead. IMAGE names the tag.
IMAGE ?= streamshift
BUILDER ?=
image:
	set -e; context=$$(mktemp -d); trap 'rm -rf "$$context"' EXIT; \
	git ls-files -z --cached --others --exclude-standard | \
	  tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$$context" -xf -; \
	(cd "$$context" && $(GO) mod vendor); \
	builder="$(BUILDER)"; [ -n "$$builder" ] || builder=$$(.ci/go-builder-image); \
	docker build -t $(IMAGE) --build-arg BUILDER="$$builder" \
	  --build-arg VERSION="$(GIT_VERSION)" --build-arg COMMIT="$(GIT_COMMIT)" "$$context"

# Release archives: for each of DIST_PLATFORMS a static binary (CGO_ENABLED=0, -trimpath,
# version and commit stamped), README.md and LICENSE when there is one, as
# dist/streamshift-<git describe>-<os>-<arch>.tar.gz, and dist/SHA256SUMS over them. The
# archives of one commit and Go version are the same bytes wherever they are made: names sorted, owner 0,
# times the commit's, gzip without a timestamp. `make test` builds them (CI); TestDist
# builds linux/amd64 alone, with DIST_DIR and DIST_PLATFORMS set, and runs it (cmd/streamshift).
DIST_DIR ?= dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST_VERSION ?= $(or $(GIT_VERSION),dev)
DIST_FILES := README.md $(wildcard LICENSE)
.PHONY: dist
dist:
	rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	set -e; mtime=$$(git log -1 --format=%ct 2>/dev/null || echo 0); \
	for platform in $(DIST_PLATFORMS); do \
	  os=$${platform%/*}; arch=$${platform#*/}; name=streamshift-$(DIST_VERSION)-$$os-$$arch; \
	  mkdir -p $(DIST_DIR)/$$name; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" \
	    -o $(DIST_DIR)/$$name/streamshift ./cmd/streamshift; \
	  cp $(DIST_FILES) $(DIST_DIR)/$$name/; \
	  tar -C $(DIST_DIR) --sort=name --mtime=@$$mtime --owner=0 --group=0 --numeric-owner -cf - $$name | \
	    gzip -n > $(DIST_DIR)/$$name.tar.gz; \
	  rm -rf $(DIST_DIR)/$$name; \
	done
	cd $(DIST_DIR) && sha256sum *.tar.gz > SHA256SUMS
	@cat $(DIST_DIR)/SHA256SUMS

# go mod tidy -diff prints what tidy would change: a go.mod that lists an unused module, or a
# direct dependency as // indirect, fails here instead of drifting.
vet:
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Fast: vet and every Go test that needs no real Kafka.
test-unit: vet
	$(GO) test -count=1 -parallel $(UNIT_PARALLEL) ./...

# The real-Kafka e2e suite alone: Maven builds brokers 3.9/4.4, tools and the test apps into
# e2e/*/target/lib (downloads on the first run, seconds afterwards), then the scenarios run
# (logs of every run in e2e/out/<test>/).
# Also: the coordinator's differential tests against a real Kafka 4.4 broker (tag e2e), and the
# topology configuration and sticky assignor run against Kafka 4.4's own Java classes (tag
# kafkajava, classpath from bench/assignor-java).
test-e2e: e2e-build
	$(GO) vet -tags e2e,kafkajava ./...
	$(GO) test -tags kafkajava -count=1 -run Kafka ./coordinator/streams/topology/ ./coordinator/streams/assignor/
	$(GO) test -tags e2e -count=1 -p 1 -parallel $(E2E_PARALLEL) -timeout $(E2E_TIMEOUT) -v ./coordinator/ ./e2e/...

# The online migration for real, in one command (a few minutes): Maven fetches Kafka, one Kafka
# 3.9 broker starts with streamshift in front, three Kafka Streams instances (kafka-streams 4.4,
# 2.8 and 3.6) start on the classic protocol and are rolled to the streams protocol one at a
# time while input flows, then back; the output is verified exactly. Everything it started is
# stopped at the end; the evidence stays in e2e/out/TestStreamsProxyOnlineMigration/.
.PHONY: demo-migration
demo-migration: e2e-build
	$(GO) test -tags e2e -count=1 -v -timeout 15m -run 'TestStreamsProxyOnlineMigration$$' ./e2e/
	@echo
	@echo "The evidence: e2e/out/TestStreamsProxyOnlineMigration/"
	@echo "  report.md      each step: time until every task ran again, output gaps, tasks closed dirty"
	@echo "  capture.jsonl  the group's traffic and the coordinator's events (capture.groups)"
	@echo "  timeline.txt, timeline.html  streamshift timeline of the capture (open the page in a browser)"
	@echo "  ui-*.png       the status page at four steps (with chromium installed)"
	@echo "  streamshift-1.log, app-*/, broker/  every process's log"

# The online migration under Kafka's fault primitives alone (docs/faults.md, issue #41): five
# migrations with a fault at the takeover and one at the hand-back, about 10 minutes; they are
# part of `make test` too (STREAMSHIFT_E2E_FAULTS=0 leaves them out of a run).
.PHONY: test-faults
test-faults: e2e-build
	$(GO) test -tags e2e -count=1 -v -timeout 30m -run 'TestStreamsProxyMigrationFaults$$' ./e2e/

e2e-build:
	$(MVN) $(MVNFLAGS) -f e2e/pom.xml package
	$(MVN) $(MVNFLAGS) -f bench/assignor-java/pom.xml package

# Everything: the fast tests, the release archives (make dist), then the real-Kafka e2e suite.
test: test-unit dist test-e2e

# classicstreams golden vectors, regenerated with the real kafka-streams 4.4.0, 3.9.2, 3.6.2 and 2.8.2 jars
# (Maven downloads them) into classicstreams/testdata/vectors-*/, which are committed.
.PHONY: vectors
vectors:
	e2e/vectors/generate.sh
