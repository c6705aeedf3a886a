#!/usr/bin/env bash
# Kafka Streams test app instances (e2e/app-src, built as e2e/app-<build>).
#
#   app.sh run   BUILD DIR [key=value ...]   exec the app in the foreground (its PID is this PID)
#   app.sh start BUILD [DIR] [key=value ...] run in the background; prints DIR= and PID=
#                                            (DIR may be a stopped instance's: its successor keeps
#                                            state/ and appends to app.out and app.log)
#   app.sh stop  DIR [TIMEOUT_S]             TERM by saved PID (clean close), KILL after timeout
#   app.sh kill9 DIR                         KILL by saved PID (crash)
#
# BUILD is 4.4 (group.protocol classic or streams), or 3.9, 3.6, 2.8 (classic only). Arguments are passed
# to e2e.CountApp (see its javadoc): app.* keys for the app, all others are Streams configs.
# The instance gets DIR/state as state.dir and DIR/tmp as java.io.tmpdir (RocksDB unpacks its
# library there, and kill -9 leaves it behind). E2E_APP_MAIN picks another main class
# (e2e.ClientCheck, e2e.Ready); E2E_APP_HEAP sets -Xmx (default 256m).
# Layout of DIR: app.pid, app.out (stdout: EVT lines), app.log (stderr: Kafka's log), state/, tmp/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log_opts() { # BUILD; sets the array logopt
  case "$1" in
    2.8|3.6|3.9) logopt=("-Dlog4j.configuration=file:$E2E_ROOT/config/log4j.properties") ;;
    # Log4j 2 stops logging in its own shutdown hook, racing the app's KafkaStreams.close on
    # SIGTERM: keep it on so the task closes of a clean stop (clean or dirty) reach app.log.
    *) logopt=("-Dlog4j2.configurationFile=$E2E_ROOT/config/log4j2.properties" -Dlog4j2.shutdownHookEnabled=false) ;;
  esac
}

cmd_run() {
  [ $# -ge 2 ] || die "usage: app.sh run BUILD DIR [key=value ...]"
  local b=$1 dir; mkdir -p "$2"; dir=$(cd "$2" && pwd); shift 2
  local lib; lib=$(lib_of "app-$b")
  mkdir -p "$dir/state" "$dir/tmp"
  echo $$ >"$dir/app.pid"
  local logopt; log_opts "$b"
  exec "$JAVA" -Xms64m -Xmx${E2E_APP_HEAP:-256m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.io.tmpdir="$dir/tmp" "${logopt[@]}" -cp "$lib/*" "${E2E_APP_MAIN:-e2e.CountApp}" \
    "state.dir=$dir/state" "$@"
}

cmd_start() {
  [ $# -ge 1 ] || die "usage: app.sh start BUILD [DIR] [key=value ...]"
  local b=$1; shift
  local dir nargs
  if [ $# -gt 0 ] && [[ "$1" != *=* ]] && [ -f "$1/app.pid" ]; then
    # A successor on its predecessor's state directory, as a rolling upgrade does it: the
    # same state/ (so the same Kafka Streams process id and local stores), the logs appended.
    if kill -0 "$(cat "$1/app.pid")" 2>/dev/null; then die "$1 is in use by PID $(cat "$1/app.pid"): stop it first"; fi
    dir=$(cd "$1" && pwd) nargs=1
  else
    start_dir "$@"
  fi
  shift "$nargs"
  "$0" run "$b" "$dir" "$@" >>"$dir/app.out" 2>>"$dir/app.log" &
  local pid=$!
  echo "$pid" >"$dir/app.pid"
  printf 'DIR=%s\nPID=%s\n' "$dir" "$pid"
}

cmd_stop() {
  [ $# -ge 1 ] || die "usage: app.sh stop DIR [TIMEOUT_S]"
  [ -f "$1/app.pid" ] || die "no $1/app.pid"
  stop_pid "$(cat "$1/app.pid")" "${2:-40}"
}

cmd_kill9() {
  [ $# -ge 1 ] || die "usage: app.sh kill9 DIR"
  [ -f "$1/app.pid" ] || die "no $1/app.pid"
  kill -KILL "$(cat "$1/app.pid")" 2>/dev/null || true
}

sub=${1:-}; shift || true
case "$sub" in
  run) cmd_run "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  kill9) cmd_kill9 "$@" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
