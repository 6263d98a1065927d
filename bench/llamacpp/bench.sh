#!/usr/bin/env bash
# llama.cpp on this machine, for comparing with `bin/nereid bench-model`: llama-bench's pp / tg
# rows from llama.cpp's own prebuilt CPU libraries, as the npm package node-llama-cpp ships them
# (npm is a registry this project may reach; llama.cpp itself is not packaged for Debian 12).
#
#   bench/llamacpp/bench.sh MODEL.gguf [THREADS] [PP] [TG] [REPS] [DEPTH]
#   (DEPTH: tokens already in the context when each test starts, as llama-bench's -d)
#
# Needs node >= 18 and npm; installs node-llama-cpp once into $NEREID_LLAMACPP_DIR (default
# ~/.cache/nereid/node-llama-cpp). Caveat, measured on the 2-core development VM: its one-token
# decodes with 2 threads ran at half the speed of 1 thread (61 against 126 tok/s, 110M Q8_0),
# whatever the thread options; prompt processing scales normally. Compare tg at 1 thread.
set -euo pipefail
version=3.22.1
dir=${NEREID_LLAMACPP_DIR:-$HOME/.cache/nereid/node-llama-cpp}
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: bench/llamacpp/bench.sh MODEL.gguf [THREADS] [PP] [TG] [REPS] [DEPTH]" >&2; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "bench.sh: needs node and npm" >&2; exit 1; }
if [ ! -d "$dir/node_modules/@node-llama-cpp/linux-x64" ]; then
  mkdir -p "$dir"
  echo "bench.sh: installing node-llama-cpp $version into $dir ..." >&2
  (cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --omit=optional --ignore-scripts \
    "node-llama-cpp@$version" "@node-llama-cpp/linux-x64@$version" >/dev/null)
fi
cp "$here/bench.mjs" "$dir/bench.mjs"
exec node "$dir/bench.mjs" "$@"
