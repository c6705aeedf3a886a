# streamshift: a static binary on an empty base image, running as a non-root user.
#
# The build needs no registry: `make image` builds the binary with the local Go (CGO_ENABLED=0:
# static, no libc) into bin/image/, with the machine's CA bundle (Debian's ca-certificates)
# for upstream TLS, and `docker build` copies both onto scratch. .dockerignore sends only
# bin/image/ as the context.
FROM scratch
COPY bin/image/streamshift /usr/local/bin/streamshift
COPY bin/image/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
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
