#!/usr/bin/env bash
# Serving-stack overhead: starts `bin/nereid serve` on MODEL, warms it up, then runs `bin/nereid bench`
# (completions, closed loop) and reports streamed tokens/s, p50/p99 gap between content chunks and
# the server's CPU split by thread group (event loop, engine thread, kernel pool, ...) between two
# /metrics scrapes (bench/serving/OverheadReport.java).
# Usage: [ENDPOINT=completions|kserve-generate|grpc-stream] bench/serving/overhead.sh MODEL.gguf CONCURRENCY REQUESTS
#        INPUT_WORDS OUTPUT_TOKENS [SERVE OPTIONS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$1 concurrency=$2 requests=$3 input=$4 output=$5
shift 5
. "$root/bin/lib/jdk.sh"
nereid_select_jdk
work=$(mktemp -d)
: >"$work/serve.out"
"$root/bin/nereid" serve --model "$model" --port 0 --max-num-seqs "$concurrency" "$@" >"$work/serve.out" 2>"$work/serve.err" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do
  url=$(sed -n 's/^nereid serve: listening on \(http:.*\)$/\1/p' "$work/serve.out")
  [ -n "$url" ] && break
  kill -0 $server 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { echo "overhead.sh: the server did not start" >&2; exit 1; }
endpoint=${ENDPOINT:-completions}
grpc=$(sed -n 's/^nereid serve: KServe v2 gRPC on \(.*\)$/\1/p' "$work/serve.out")
bench() {
  "$root/bin/nereid" bench --url "$url" --endpoint "$endpoint" --grpc-target "$grpc" --concurrency "$concurrency" --no-progress \
    --input-tokens-mean "$input" --output-tokens-mean "$output" --output-dir "$work/$1" --num-requests "$2"
}
bench warmup "$concurrency" >/dev/null
curl -sf "$url/metrics" >"$work/before.txt"
bench run "$requests" | grep -E "Output Token Throughput|Inter Token|Time To First|Error Count"
curl -sf "$url/metrics" >"$work/after.txt"
"$JAVA_HOME/bin/java" -cp "$root/bench/target/lib/*" "$root/bench/serving/OverheadReport.java" \
  "$work/run" "$work/before.txt" "$work/after.txt"
