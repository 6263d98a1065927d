#!/usr/bin/env bash
# Runs a main class from the engine's test/benchmark classpath (src/jmh/java compiles with the
# tests) with the JVM flags bin/nereid uses. Shared by bench/models/*.sh and bench/tokenizers/*.sh.
# Usage: bench/lib/run-engine-main.sh CLASS [ARGS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bin/lib/jdk.sh"
nereid_select_jdk
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One reactor run: the class path then names kvcache's target/classes, so nothing needs to be installed
# into the local Maven repository first (a fresh clone works). Every module writes the file; the
# engine, last in the reactor, wins.
(cd "$root" && ./mvnw -B -q -ntp -DskipTests test-compile dependency:build-classpath -pl engine -am \
  -Dmdep.includeScope=test -Dmdep.outputFile="$work/cp.txt")
# The kernels' JVM flags, as bin/nereid passes them (bin/lib/jvm.sh).
# NEREID_JAVA_OPTS: extra JVM flags, as bin/nereid takes them (e.g. -Dnereid.kernels.interleaved=false)
. "$root/bin/lib/jvm.sh"
# shellcheck disable=SC2086
"$JAVA_HOME/bin/java" -Xmx10g ${NEREID_JAVA_OPTS:-} "${nereid_jvm_args[@]}" \
  -cp "$root/engine/target/test-classes:$root/engine/target/classes:$(cat "$work/cp.txt")" "$@"
