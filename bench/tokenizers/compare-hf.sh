#!/usr/bin/env bash
# Tokenizer check against HF `tokenizers` (Rust, through its Node binding from the npm registry),
# on this machine, in one run:
#   1. writes the two 1 MB corpora (Javadoc prose, Java code from the JDK's src.zip),
#   2. encodes them with HF tokenizers (llama3, qwen3 fixtures) and prints MB/s,
#   3. checks our ids equal HF's token for token,
#   4. runs our JMH TokenizerBenchmark for the MB/s to set beside HF's.
# Needs node + npm. Usage: bench/tokenizers/compare-hf.sh [JMH ARGS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
run="$root/bench/lib/run-engine-main.sh"
fixtures=$(cd "$root/../shared/fixtures" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$run" io.nereid.engine.tokenizer.TokenizerBenchmark "$work/corpus"

(cd "$work" && npm install --silent --no-audit --no-fund tokenizers@0.23.2 >/dev/null)
cp "$root/bench/tokenizers/hf-encode.cjs" "$work/"
(cd "$work" && node hf-encode.cjs "$fixtures" "$work/corpus" "$work/ids")

"$run" io.nereid.engine.tokenizer.CompareWithHf "$fixtures" "$work/corpus" "$work/ids"
"$root/bin/nereid" jmh engine TokenizerBenchmark "$@"
