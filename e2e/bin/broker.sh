#!/usr/bin/env bash
# Single-node broker from the Maven-built classpath (e2e/broker-<v>): combined-mode KRaft, or for
# 2.8 ZooKeeper mode (ZooKeeper in the broker's JVM, on CPORT: e2e.ZkKafka).
#
#   broker.sh run   VERSION DIR BPORT CPORT [key=value ...]  format, then exec the broker in the
#                                                            foreground (its PID is this PID)
#   broker.sh start VERSION [DIR] [key=value ...]            free ports, run in the background,
#                                                            wait until ready; prints BOOTSTRAP=,
#                                                            DIR=, PID=
#   broker.sh wait  BOOTSTRAP [TIMEOUT_S]                    until ApiVersions + Metadata answer
#   broker.sh stop  DIR [TIMEOUT_S]                          TERM by saved PID, KILL after timeout
#
# VERSION is 2.8, 3.5, 3.9 or 4.4. DIR must be new or empty (a reformat with another cluster id fails).
# key=value arguments are appended to server.properties (later keys win). E2E_BROKER_HEAP sets -Xmx
# (512m); E2E_BROKER_JVM replaces the collector and JIT options (G1; the e2e suite runs its brokers
# with the client JIT alone, e2e/harness/broker.go).
# Layout of DIR: server.properties, data/, logs/, tmp/, broker.out (stdout+stderr), broker.pid,
# broker.env (BOOTSTRAP=, BPORT=, CPORT=).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

render() { # VERSION DIR BPORT CPORT [k=v...]
  local v=$1 dir=$2 bport=$3 cport=$4; shift 4
  [ -f "$E2E_ROOT/config/server-$v.properties" ] || die "unknown broker version $v (2.8, 3.5, 3.9 or 4.4)"
  mkdir -p "$dir/data" "$dir/logs" "$dir/tmp"
  local tmpl=server.properties.tmpl
  zk_mode "$v" && tmpl=server-zk.properties.tmpl
  sed -e "s|@BPORT@|$bport|g" -e "s|@CPORT@|$cport|g" -e "s|@DIR@|$dir|g" \
    "$E2E_ROOT/config/$tmpl" >"$dir/server.properties"
  cat "$E2E_ROOT/config/server-$v.properties" >>"$dir/server.properties"
  if [ $# -gt 0 ]; then
    echo "# overrides" >>"$dir/server.properties"
    printf '%s\n' "$@" | sed -e "s|@BPORT@|$bport|g" -e "s|@CPORT@|$cport|g" -e "s|@DIR@|$dir|g" >>"$dir/server.properties"
  fi
  printf 'BOOTSTRAP=127.0.0.1:%s\nBPORT=%s\nCPORT=%s\n' "$bport" "$bport" "$cport" >"$dir/broker.env"
}

# zk_mode VERSION: the broker runs with ZooKeeper (2.8), not KRaft.
zk_mode() { [ "$1" = 2.8 ]; }

log_opts() { # VERSION: reload4j up to 3.9, Log4j 2 from 4.0
  case "$1" in
    2.8|3.5|3.9) echo "-Dlog4j.configuration=file:$E2E_ROOT/config/log4j.properties" ;;
    *) echo "-Dlog4j2.configurationFile=$E2E_ROOT/config/log4j2.properties" ;;
  esac
}

cmd_run() {
  [ $# -ge 4 ] || die "usage: broker.sh run VERSION DIR BPORT CPORT [key=value ...]"
  local v=$1 dir; mkdir -p "$2"; dir=$(cd "$2" && pwd)
  local lib; lib=$(lib_of "broker-$v")
  shift 2
  render "$v" "$dir" "$@"
  local lopt; lopt=$(log_opts "$v")
  local main=(kafka.Kafka "$dir/server.properties")
  if zk_mode "$v"; then
    mkdir -p "$dir/zookeeper"
    main=(e2e.ZkKafka "$2" "$dir/zookeeper" "$dir/server.properties") # $2: CPORT
  else
    # A fixed, valid cluster id: every run formats a fresh directory anyway.
    "$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.io.tmpdir="$dir/tmp" "$lopt" -cp "$lib/*" kafka.tools.StorageTool \
      format -t "e2eClusterAAAAAAAAAAAA" -c "$dir/server.properties" >"$dir/logs/format.out" 2>&1 \
      || { cat "$dir/logs/format.out" >&2; die "format failed"; }
  fi
  echo $$ >"$dir/broker.pid"
  # shellcheck disable=SC2086 # E2E_BROKER_JVM is a list of options
  exec "$JAVA" -Xms256m -Xmx${E2E_BROKER_HEAP:-512m} ${E2E_BROKER_JVM:--XX:+UseG1GC -XX:MaxGCPauseMillis=20} \
    -Djava.io.tmpdir="$dir/tmp" -Dkafka.logs.dir="$dir/logs" "$lopt" \
    -cp "$lib/*" "${main[@]}"
}

cmd_wait() {
  [ $# -ge 1 ] || die "usage: broker.sh wait BOOTSTRAP [TIMEOUT_S]"
  local lib; lib=$(lib_of app-4.4)
  "$JAVA" -Xmx128m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$E2E_ROOT/config/log4j2-tools.properties" \
    -cp "$lib/*" e2e.Ready "bootstrap.servers=$1" "timeout.ms=$(( ${2:-60} * 1000 ))" 2>/dev/null
}

cmd_start() {
  [ $# -ge 1 ] || die "usage: broker.sh start VERSION [DIR] [key=value ...]"
  local v=$1; shift
  local dir nargs; start_dir "$@"; shift "$nargs"
  local bport cport; bport=$(free_port); cport=$(free_port)
  while [ "$cport" = "$bport" ]; do cport=$(free_port); done
  "$0" run "$v" "$dir" "$bport" "$cport" "$@" >"$dir/broker.out" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/broker.pid"
  if ! wait_port "$bport" 90 "$pid"; then
    tail -n 40 "$dir/broker.out" >&2 || true
    stop_pid "$pid" 10
    die "broker $v did not listen on $bport (logs: $dir/broker.out)"
  fi
  if ! cmd_wait "127.0.0.1:$bport" 60 >/dev/null; then
    stop_pid "$pid" 10
    die "broker $v did not answer ApiVersions/Metadata (logs: $dir/broker.out)"
  fi
  printf 'BOOTSTRAP=127.0.0.1:%s\nDIR=%s\nPID=%s\n' "$bport" "$dir" "$pid"
}

cmd_stop() {
  [ $# -ge 1 ] || die "usage: broker.sh stop DIR [TIMEOUT_S]"
  [ -f "$1/broker.pid" ] || die "no $1/broker.pid"
  stop_pid "$(cat "$1/broker.pid")" "${2:-30}"
}

sub=${1:-}; shift || true
case "$sub" in
  run) cmd_run "$@" ;;
  start) cmd_start "$@" ;;
  wait) cmd_wait "$@" ;;
  stop) cmd_stop "$@" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
