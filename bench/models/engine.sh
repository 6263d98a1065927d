#!/usr/bin/env bash
# Serving-engine figures (io.nereid.engine.core.EngineSpeed) on a generated model made by
# bench/models/speed.sh: aggregate output tok/s at several concurrencies, TTFT with a cached
# 1,000-token prefix vs uncached, ITL of decoding requests during a long prefill, chunked or not.
# Usage: bench/models/engine.sh MODEL.gguf [THREADS] [LONG_PROMPT] [MAX_TOKENS] [CONCURRENCIES]
set -euo pipefail
exec "$(dirname "$0")/../lib/run-engine-main.sh" io.nereid.engine.core.EngineSpeed \
  "$1" "${2:-2}" "${3:-4000}" "${4:-32}" "${5:-1,4,16,32}"
