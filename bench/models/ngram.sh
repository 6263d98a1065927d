#!/usr/bin/env bash
# n-gram speculative decoding at batch 1 on a prompt whose continuation repeats it: decode tok/s plain, with a
# fixed draft length (vLLM's behaviour) and with the adaptive one, and the drafts kept, ROUNDS times in turn
# (the VM's speed drifts: compare within a round). Models: bench/models/speed.sh.
# Usage: bench/models/ngram.sh MODEL [ROUNDS] [DRAFTS] [TOKENS]
#   e.g. bench/models/ngram.sh /tmp/nereid-models/llama-110m-Q4_0.mix.gguf 2 4 1000
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 MODEL [ROUNDS] [DRAFTS] [TOKENS]" >&2; exit 2; }
model=$1 rounds=${2:-2} drafts=${3:-4} tokens=${4:-1000}
root=$(cd "$(dirname "$0")/../.." && pwd)
prompt="The cat sat on the mat. The cat sat on the mat. The cat"
config="{\"method\":\"ngram\",\"num_speculative_tokens\":$drafts,\"prompt_lookup_max\":3,\"prompt_lookup_min\":1}"
run() {
  "$root/bin/nereid" generate --model "$model" --prompt "$prompt" --temperature 0 --max-tokens "$tokens" \
    --threads 2 "$@" 2>&1 | grep -o 'decode: .*' | sed -e 's/ | LLAMA[^|]*|/ |/' -e 's/ | LLAMA.*//'
}
for r in $(seq "$rounds"); do
  echo "round $r plain:    $(run)"
  echo "round $r fixed:    $(run --speculative-config "$config" --speculative-adaptive false)"
  echo "round $r adaptive: $(run --speculative-config "$config")"
done
