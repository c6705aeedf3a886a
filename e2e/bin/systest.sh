#!/usr/bin/env bash
# Kafka's own Streams smoke test (StreamsSmokeTest driver and client) from Maven Central jars.
#
#   systest.sh run VERSION DIR PROPS run|process    exec in the foreground (PID = this PID)
#
# VERSION 2.8, 3.6 and 3.9 run org.apache.kafka.streams.tests.StreamsSmokeTest from
# kafka-streams:<version>:test (the driver always produces for 30 s on 2.8, 90 s on 3.x).
# VERSION 4.4 runs e2e.systest.StreamsSmokeTest, the launcher over kafka-streams:4.4.0:
# test-fixtures (the test jar is not on Maven Central); it also reads smoke.duration.seconds /
# smoke.records.per.key / smoke.num.keys from PROPS.
# DIR gets tmp/ (java.io.tmpdir, where the 4.4 client puts its state dir).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "${1:-}" = run ] && [ $# -eq 5 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
v=$2; dir=$3; props=$4; cmd=$5
case "$v" in
  2.8|3.6|3.9) main=org.apache.kafka.streams.tests.StreamsSmokeTest
       logopt=("-Dlog4j.configuration=file:$E2E_ROOT/config/log4j.properties") ;;
  4.4) main=e2e.systest.StreamsSmokeTest
       # Log4j 2 stops logging in its own shutdown hook, racing KafkaStreams.close: keep it on
       # so a clean stop's task closes (clean or dirty) reach the log.
       logopt=("-Dlog4j2.configurationFile=$E2E_ROOT/config/log4j2.properties" -Dlog4j2.shutdownHookEnabled=false) ;;
  *) die "unknown version $v (2.8, 3.6, 3.9 or 4.4)" ;;
esac
lib=$(lib_of "systest-$v")
mkdir -p "$dir/tmp"
exec "$JAVA" -Xms64m -Xmx${E2E_APP_HEAP:-256m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Djava.io.tmpdir="$dir/tmp" "${logopt[@]}" -cp "$lib/*" "$main" "$props" "$cmd"
