#!/usr/bin/env bash
# Regenerates classicstreams/testdata/vectors-<kafka version>/ with the real
# kafka-streams jars (one Maven module per version). Maven downloads what it
# needs. Usage: e2e/vectors/generate.sh  (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mvn -q -B -f "$here/pom.xml" package
for mod in "$here"/kafka-*/; do
	v="$(basename "$mod")"; v="${v#kafka-}"
	out="$root/classicstreams/testdata/vectors-$v"
	rm -rf "$out"
	java -cp "$mod/target/classes:$mod/target/lib/*" io.streamshift.vectors.Vectors generate "$out"
done
