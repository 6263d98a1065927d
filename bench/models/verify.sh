#!/usr/bin/env bash
# What verifying drafts costs: ms of a forward step of one sequence with n = 1..MAX tokens (n logit rows), and
# its ratio to one token, measured in turn (io.nereid.engine.cpu.VerifySpeed). Models: bench/models/speed.sh.
# Usage: bench/models/verify.sh MODEL [THREADS] [CONTEXT] [ROUNDS] [MAX]
#   e.g. bench/models/verify.sh /tmp/nereid-models/llama-1.1b-F16.mix.gguf 2 200 3 6
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 MODEL [THREADS] [CONTEXT] [ROUNDS] [MAX]" >&2; exit 2; }
exec "$(dirname "$0")/../lib/run-engine-main.sh" io.nereid.engine.cpu.VerifySpeed \
  "$1" "${2:-2}" "${3:-200}" "${4:-3}" "${5:-6}"
