#!/usr/bin/env bash
# CPU runtime speed on generated Llama-shaped models (110M, 1.1B), quantized from F32 with llama.cpp's type mix, with the
# machine's memory read bandwidth measured in the same run (io.nereid.engine.cpu.ModelSpeed).
# Usage: bench/models/speed.sh [SIZES] [TYPES] [THREADS] [MODEL_DIR]   (TYPES: bin/nereid quantize names)
#   e.g. bench/models/speed.sh 110m,1.1b f16,q8_0,q4_0,q4_k_m 2
# Generated models are cached in MODEL_DIR (default /tmp/nereid-models; the 1.1B F32 base is 4.4 GB).
set -euo pipefail
exec "$(dirname "$0")/../lib/run-engine-main.sh" io.nereid.engine.cpu.ModelSpeed \
  "${4:-/tmp/nereid-models}" "${1:-110m}" "${2:-q8_0}" "${3:-2}"
