#!/usr/bin/env bash
# CPU runtime speed on generated Llama-shaped models (110M, 1.1B) in F16 / Q8_0 / Q4_0, with the
# machine's memory read bandwidth measured in the same run (io.nereid.engine.cpu.ModelSpeed).
# Usage: bench/models/speed.sh [SIZES] [TYPES] [THREADS] [MODEL_DIR]
#   e.g. bench/models/speed.sh 110m,1.1b F16,Q8_0,Q4_0 2
# Generated models are cached in MODEL_DIR (default /tmp/nereid-models; the 1.1B F16 file is 2.2 GB).
set -euo pipefail
exec "$(dirname "$0")/../lib/run-engine-main.sh" io.nereid.engine.cpu.ModelSpeed \
  "${4:-/tmp/nereid-models}" "${1:-110m}" "${2:-Q8_0}" "${3:-2}"
