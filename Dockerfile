# streamshift: a static binary on an empty base image, running as a non-root user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOFLAGS=-trimpath go build -ldflags="-s -w" -o /out/streamshift ./cmd/streamshift

FROM scratch
COPY --from=build /out/streamshift /usr/local/bin/streamshift
# No shell, no libc, no root: a numeric uid (scratch has no /etc/passwd).
USER 65532:65532
# Bootstrap listener, node ports for node ids 0..31, admin HTTP.
EXPOSE 19092 19093-19124 19080
# Listen on every interface inside the container; STREAMSHIFT_UPSTREAM and
# STREAMSHIFT_ADVERTISED_HOST (the name clients reach the container by) are
# required at `docker run`.
ENV STREAMSHIFT_LISTEN=0.0.0.0:19092 STREAMSHIFT_ADMIN_LISTEN=0.0.0.0:19080
ENTRYPOINT ["/usr/local/bin/streamshift"]
CMD ["run"]
