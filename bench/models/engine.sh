#!/usr/bin/env bash
# Serving-engine figures (io.nereid.engine.core.EngineSpeed) on a generated model made by
# bench/models/speed.sh: aggregate output tok/s at several concurrencies, TTFT with a cached
# 1,000-token prefix vs uncached, TTFT/ITL of short requests during a long prefill, chunked or not.
# Usage: bench/models/engine.sh MODEL.gguf [THREADS] [LONG_PROMPT] [MAX_TOKENS] [CONCURRENCIES]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bin/lib/jdk.sh"
nereid_select_jdk
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && ./mvnw -B -q -ntp -DskipTests test-compile -pl engine -am)
(cd "$root" && ./mvnw -B -q -ntp dependency:build-classpath -pl engine -am -Dmdep.includeScope=test \
  -Dmdep.outputFile="$work/cp.txt")
exec "$JAVA_HOME/bin/java" -Xmx10g --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,io.nereid.engine.tensor.*::dot" \
  "-XX:CompileCommand=dontinline,io.nereid.engine.tensor.*::dequantize" \
  -cp "$root/engine/target/test-classes:$root/engine/target/classes:$(cat "$work/cp.txt")" \
  io.nereid.engine.core.EngineSpeed "$1" "${2:-2}" "${3:-4000}" "${4:-32}" "${5:-1,4,16,32}"
