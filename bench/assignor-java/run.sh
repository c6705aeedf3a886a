#!/bin/sh
# Compares streamshift's sticky task assignor with Kafka 4.4's Java
# StickyTaskAssignor on identical inputs (1,000 members on 200 processes,
# 10,000 tasks, 1 standby by default; flags pass through to compare).
# Maven downloads org.apache.kafka:kafka-group-coordinator:4.4.0 itself.
set -eu
cd "$(dirname "$0")"
mvn -q -B package
exec go run ./compare -java-dir . "$@"
