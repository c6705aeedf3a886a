# Shared helpers for the e2e scripts (sourced, not run).
E2E_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${JAVA:=${JAVA_HOME:+$JAVA_HOME/bin/}java}"

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# lib_of MODULE: the module's Maven-built classpath folder, or die with how to build it.
lib_of() {
  local lib="$E2E_ROOT/$1/target/lib"
  [ -d "$lib" ] || die "$lib missing: build it with 'make e2e-build' (mvn -B -q -f e2e/pom.xml package)"
  echo "$lib"
}

# free_port: a loopback TCP port nothing listens on right now.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  die "no free port found"
}

# wait_port PORT TIMEOUT_S PID: until something accepts on 127.0.0.1:PORT; fails early if PID died.
wait_port() {
  local deadline=$(( $(date +%s) + $2 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then return 1; fi
    sleep 0.2
  done
  return 1
}

# stop_pid PID TIMEOUT_S: TERM, wait up to TIMEOUT_S, then KILL. Never by name.
stop_pid() {
  local pid=$1 timeout=${2:-30}
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  local deadline=$(( $(date +%s) + timeout ))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "pid $pid still alive after ${timeout}s: KILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  # Reap if it was our child; otherwise wait until the kernel lets it go.
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}

# fresh_dir DIR: DIR if given (must not exist or be empty), else a new mktemp -d.
fresh_dir() {
  if [ -z "${1:-}" ]; then mktemp -d "${TMPDIR:-/tmp}/e2e.XXXXXX"; return; fi
  if [ -e "$1" ] && [ -n "$(ls -A "$1" 2>/dev/null)" ]; then die "$1 is not empty: use a fresh directory"; fi
  mkdir -p "$1" && (cd "$1" && pwd)
}

# start_dir [DIR] [key=value ...]: the DIR of a start command, optional
# before its key=value settings, as fresh_dir makes it. Sets dir, and nargs
# to how many arguments it took (0 or 1) for the caller's shift.
start_dir() {
  dir="" nargs=0
  if [ $# -gt 0 ] && [[ "$1" != *=* ]]; then dir=$1 nargs=1; fi
  dir=$(fresh_dir "$dir")
}
