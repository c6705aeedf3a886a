# streamshift's image, built from source:
#
#   docker build -t streamshift \
#     --build-arg VERSION="$(git describe --tags --always --dirty)" --build-arg COMMIT="$(git rev-parse HEAD)" .
#
# The first stage builds a static binary (CGO_ENABLED=0: no libc) in BUILDER, an official Go
# image of go.mod's Go version; the second puts that binary and the builder's CA bundle (for
# TLS to the brokers) on an empty base: no shell, no package manager, not root.
#
# Offline (CI, `make image`): BUILDER is an image made from the local Go toolchain
# (.ci/go-builder-image) and the context carries vendor/ (`go mod vendor`), which `go build`
# uses when present: neither a registry nor the module proxy is needed.
ARG BUILDER=golang:1.26.8
FROM ${BUILDER} AS build
WORKDIR /src
COPY . .
# VERSION (git describe) and COMMIT name the build in `streamshift version` and the
# streamshift_build_info metric; the context has no .git for Go to read them from.
ARG VERSION=
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.buildVersionTag=${VERSION} -X main.buildCommit=${COMMIT}" \
      -o /out/streamshift ./cmd/streamshift

FROM scratch
ARG VERSION=
ARG COMMIT=
LABEL org.opencontainers.image.title="streamshift" \
      org.opencontainers.image.source="https://github.com/streamshift/streamshift" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/streamshift /usr/local/bin/streamshift
# No shell, no libc, no root: a numeric uid (scratch has no /etc/passwd).
USER 65532:65532
# Bootstrap listener, node ports for node ids 0..31, admin HTTP.
EXPOSE 19092 19093-19124 19080
# Listen on every interface inside the container; STREAMSHIFT_UPSTREAM and
# STREAMSHIFT_ADVERTISED_HOST (the name clients reach the container by) are required at
# `docker run`.
#
# The admin listener (health, readiness, metrics, status pages, capture control) is on
# every interface too, so that probes and Prometheus reach it. Lock it where anything else
# can reach that port: STREAMSHIFT_ADMIN_AUTH_TOKEN_FILE=/path/to/token (admin.auth-token-file,
# a file mounted into the container) makes starting or stopping a capture and /debug/pprof/
# need `Authorization: Bearer <the file's token>`; /healthz, /readyz, /metrics and the
# read-only status pages stay open.
ENV STREAMSHIFT_LISTEN=0.0.0.0:19092 STREAMSHIFT_ADMIN_LISTEN=0.0.0.0:19080
ENTRYPOINT ["/usr/local/bin/streamshift"]
CMD ["run"]
