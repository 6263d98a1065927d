#!/usr/bin/env bash
# Aggregate decode tok/s of SEQS sequences sharing each step, one figure per round (io.nereid.engine.cpu.BatchSpeed):
# for alternating two builds on a noisy machine. Models: bench/models/speed.sh generates them into /tmp/nereid-models.
# Usage: bench/models/batch.sh MODEL [THREADS] [SEQS] [SECONDS] [CONTEXT] [ROUNDS]
#   e.g. bench/models/batch.sh /tmp/nereid-models/llama-110m-Q4_0.mix.gguf 2 16 2
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 MODEL [THREADS] [SEQS] [SECONDS] [CONTEXT] [ROUNDS]" >&2; exit 2; }
exec "$(dirname "$0")/../lib/run-engine-main.sh" io.nereid.engine.cpu.BatchSpeed \
  "$1" "${2:-2}" "${3:-16}" "${4:-2}" "${5:-16}" "${6:-3}"
