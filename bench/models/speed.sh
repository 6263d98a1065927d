#!/usr/bin/env bash
# CPU runtime speed on generated Llama-shaped models (110M, 1.1B) in F16 / Q8_0 / Q4_0, with the
# machine's memory read bandwidth measured in the same run (io.nereid.engine.model.ModelSpeed).
# Usage: bench/models/speed.sh [SIZES] [TYPES] [THREADS] [MODEL_DIR]
#   e.g. bench/models/speed.sh 110m,1.1b F16,Q8_0,Q4_0 2
# Generated models are cached in MODEL_DIR (default /tmp/nereid-models; the 1.1B F16 file is 2.2 GB).
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
  io.nereid.engine.model.ModelSpeed "${4:-/tmp/nereid-models}" "${1:-110m}" "${2:-Q8_0}" "${3:-2}"
