#!/usr/bin/env bash
# On the GPU machine, from the folder make-bundle.sh built: bash check.sh [OUT_DIR]   (about 8 minutes)
#
#   (a) probe: the GPU, the binding (FFM) and the CUDA libraries found: the first line of the report; then
#       whether the JavaCPP CUDA presets load and work here (the evidence for binding with FFM)
#   (b) the native module's tests, the gpu-tagged CUDA-against-CPU consistency tests among them
#   (c) a Llama-3-8B-shaped BF16 model made on the GPU by PyTorch (nothing carried), measured through
#       transformers and through Nereid's CUDA backend: prefill, decode at batch 1 / 8 / 64 and after 4,096
#       positions (attention split in parts), greedy ids,
#       and the HBM bandwidth
#   (d) OUT_DIR/report.json with all of it (and each part's own files beside it)
# Each part has its own time limit; one that fails or runs out leaves its error in OUT_DIR and the rest go on.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-${OUT:-$here/out}}
mkdir -p "$out"
java="$here/jdk/bin/java"
# the kernels' JVM flags, as bin/nereid passes them (bin/lib/jvm.sh, copied in by make-bundle.sh)
if [ -f "$here/jvm.sh" ]; then
  # shellcheck source=../../bin/lib/jvm.sh
  . "$here/jvm.sh"
  jvm=("${nereid_jvm_args[@]}")
else
  jvm=(--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:CompileCommand=quiet)
fi

# The CUDA libraries NVRTC and cuBLAS (and the runtime, for the presets probe): the toolkit's, or those of
# PyTorch's nvidia wheels.
dirs=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
found = []
roots = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"] + glob.glob("/usr/local/cuda-*/lib64") \
    + glob.glob("/usr/local/cuda-*/lib")
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    roots += glob.glob(os.path.join(sp, "nvidia", "*", "lib")) + glob.glob(os.path.join(sp, "torch", "lib"))
for d in roots:
    if os.path.isdir(d) and any(glob.glob(os.path.join(d, lib + ".so*")) for lib in ("libnvrtc", "libcublas", "libcudart")):
        found.append(d)
print(":".join(dict.fromkeys(found)))
PY
)
# A NEREID_CUDA_LIB_PATH already set comes first (so the bundle can be tried here on the CUDA emulator:
# NEREID_CUDA_LIB_PATH=native/target/cuda-emulator/lib bash check.sh).
export NEREID_CUDA_LIB_PATH="${NEREID_CUDA_LIB_PATH:+$NEREID_CUDA_LIB_PATH:}$dirs"
export LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$out/cache"
echo "CUDA library directories: ${dirs:-none found}" | tee "$out/libraries.txt"

timeout 30 "$java" "${jvm[@]}" -cp "$here/lib/*" io.nereid.nativebackend.cuda.DeviceCheck probe --out "$out/probe.json" \
  2>&1 | tee "$out/probe.txt"

# The JavaCPP CUDA presets DESIGN.md names, against this machine's runtime (the backend binds with FFM; see
# CudaDriver): do they load and work, and what does a call to a function newer than the runtime do?
# (cudaFuncGetParamCount came with CUDA 13.1: on 13.0 the dynamic linker ends the JVM, exit 127.)
# (NEREID_CUDA_LIB_PATH first on the linker's path here: where the backend found libcuda.so.1, e.g. the emulator's)
presets=(env LD_LIBRARY_PATH="${NEREID_CUDA_LIB_PATH:+$NEREID_CUDA_LIB_PATH:}$LD_LIBRARY_PATH" timeout 60 "$java"
  --enable-native-access=ALL-UNNAMED -Dorg.bytedeco.javacpp.cachedir="$out/javacpp-cache"
  -cp "$here/lib/*:$here/javacpp/*" io.nereid.nativebackend.cuda.DeviceCheck presets)
"${presets[@]}" --out "$out/presets.json" > "$out/presets.txt" 2>&1
echo "presets: exit $?; $(tail -n 1 "$out/presets.txt")"
"${presets[@]}" --out "$out/presets-newer.json" --call cudaFuncGetParamCount > "$out/presets-newer.txt" 2>&1
echo "presets, a CUDA 13.1 function: exit $?; $(tail -n 1 "$out/presets-newer.txt")" | tee "$out/presets-newer-exit.txt"

cp_tests="$here/test-classes:$here/test-lib/nereid-engine-tests.jar:$here/lib/nereid-kvcache.jar:$here/lib/nereid-engine.jar:$here/lib/nereid-native.jar"
# 180 s on a GPU (NVRTC compiles the kernels once, ~20 s); on the CUDA emulator the tests take ~2.5 minutes:
# NEREID_CHECK_TEST_TIMEOUT=600 there.
timeout "${NEREID_CHECK_TEST_TIMEOUT:-180}" "$java" "${jvm[@]}" -Dnereid.fixtures="$here/fixtures" -jar "$here/lib/junit-platform-console-standalone.jar" \
  execute --class-path "$cp_tests" --scan-class-path "$here/test-classes" --exclude-classname '.*ArchitectureTest' \
  --reports-dir "$out/junit" --details tree --disable-banner --disable-ansi-colors > "$out/junit.txt" 2>&1
echo "tests: exit $? ($(grep -E 'tests (successful|failed|skipped)' "$out/junit.txt" | tr -s ' ' | tr '\n' ' '))"

model=${TMPDIR:-/tmp}/nereid-llama3-8b-shaped
rm -rf "$model"
timeout 180 python3 "$here/torch_reference.py" --dir "$model" --out "$out/torch.json" --fixtures "$here/fixtures" \
  > "$out/torch.txt" 2>&1
echo "torch: exit $?; $(tail -n 1 "$out/torch.txt")"

if [ -f "$model/config.json" ] && [ -f "$model/prompt_ids.json" ]; then
  timeout 150 "$java" "${jvm[@]}" -cp "$here/lib/*" io.nereid.nativebackend.cuda.DeviceCheck bench --model "$model" --long-context 4096 \
    --ids "$model/prompt_ids.json" --out "$out/nereid.json" > "$out/nereid.txt" 2>&1
  echo "nereid: exit $?; $(tail -n 2 "$out/nereid.txt" | tr '\n' ' ')"
else
  echo "nereid: skipped, PyTorch made no model (see torch.txt)"
fi
rm -rf "$model"
python3 "$here/report.py" "$out"
