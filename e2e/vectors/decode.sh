#!/usr/bin/env bash
# Decodes lines "KIND HEX" from stdin with the real Kafka Streams classes of
# one Kafka version and prints one JSON description per line.
# Usage: e2e/vectors/decode.sh <kafka version, e.g. 4.4.0>  (builds if needed)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mod="$here/kafka-$1"
[[ -d "$mod" ]] || { echo "no module for Kafka $1 in $here" >&2; exit 2; }
if [[ ! -d "$mod/target/lib" || ! -d "$mod/target/classes" ]]; then
	mvn -q -B -f "$here/pom.xml" package >&2
fi
exec java -cp "$mod/target/classes:$mod/target/lib/*" io.streamshift.vectors.Vectors decode
