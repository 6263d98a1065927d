#!/usr/bin/env bash
# native/device/make-bundle.sh OUT_DIR [--no-build]
#
# Builds, here, the folder that native/device/check.sh runs from on the GPU machine, which has no JDK
# and no Maven: a jlinked JDK 25 runtime (with jdk.incubator.vector), the kvcache / engine / native
# classes as jars, the native module's test classes, the JUnit console launcher, the JavaCPP CUDA presets
# (for the probe that shows why we bind with FFM), the fixtures the tests
# and the bench read (stories260K, the llama3 tokenizer), and the scripts. It must stay under 60 MiB
# (the machine takes at most 64 MiB); the script fails if it does not.
#
# --no-build takes the modules as they are already built (./mvnw -Pcuda package): the test that checks
# this script's output runs it that way.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
out=${1:?"usage: native/device/make-bundle.sh OUT_DIR [--no-build]"}
limit_mib=60
# shellcheck source=../../bin/lib/jdk.sh
. "$root/bin/lib/jdk.sh"
nereid_select_jdk
if [ "${2:-}" != --no-build ]; then
  (cd "$root" && ./mvnw -B -q -ntp -Pcuda -DskipTests package -pl native -am)
fi
for d in kvcache/target/classes engine/target/classes engine/target/test-classes native/target/classes native/target/test-classes \
    native/target/device-lib/junit-platform-console-standalone.jar native/target/device-lib/javacpp; do
  [ -e "$root/$d" ] || { echo "make-bundle: $d is missing; build with ./mvnw -Pcuda package first" >&2; exit 1; }
done
fixtures=$root/../shared/fixtures
[ -d "$fixtures" ] || { echo "make-bundle: $fixtures is missing" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/lib" "$out/test-classes" "$out/fixtures/models" "$out/fixtures/tokenizers/llama3"
for m in kvcache engine native; do
  "$JAVA_HOME/bin/jar" --create --file "$out/lib/nereid-$m.jar" -C "$root/$m/target/classes" .
done
# the engine's test tools (GgufToHf, for the consistency test's safetensors case), kept out of lib/*
mkdir -p "$out/test-lib"
"$JAVA_HOME/bin/jar" --create --file "$out/test-lib/nereid-engine-tests.jar" -C "$root/engine/target/test-classes" .
cp -r "$root/native/target/test-classes/." "$out/test-classes/"
cp "$root/native/target/device-lib/junit-platform-console-standalone.jar" "$out/lib/"
# the JavaCPP CUDA presets, for check.sh's `DeviceCheck presets` only (do they load and work against the GPU
# machine's runtime?): their Java classes, and of the JNI libraries only cudart's, nvrtc's and cuBLAS's (5 MiB -> 2)
mkdir -p "$out/javacpp"
for j in "$root"/native/target/device-lib/javacpp/*.jar; do
  case "$j" in
    *cuda-*-linux-x86_64.jar)
      tmp=$(mktemp -d)
      (cd "$tmp" && "$JAVA_HOME/bin/jar" --extract --file "$j" \
        org/bytedeco/cuda/linux-x86_64/libjnicudart.so org/bytedeco/cuda/linux-x86_64/libjninvrtc.so \
        org/bytedeco/cuda/linux-x86_64/libjnicublas.so)
      "$JAVA_HOME/bin/jar" --create --file "$out/javacpp/$(basename "$j")" -C "$tmp" .
      rm -rf "$tmp" ;;
    *) cp "$j" "$out/javacpp/" ;;
  esac
done
cp "$fixtures/models/stories260K.gguf" "$out/fixtures/models/"
# the tokenizer is only for the model torch_reference.py writes: carried gzipped (9 MiB -> 2 MiB)
gzip -9 -c "$fixtures/tokenizers/llama3/tokenizer.json" > "$out/fixtures/tokenizers/llama3/tokenizer.json.gz"
cp "$fixtures/tokenizers/llama3/tokenizer_config.json" "$out/fixtures/tokenizers/llama3/"
cp "$root/native/device/check.sh" "$root/native/device/torch_reference.py" "$root/native/device/report.py" "$out/"
cp "$root/bin/lib/jvm.sh" "$out/jvm.sh"
chmod +x "$out/check.sh"

# The modules jdeps names for our classes and the JUnit launcher (java.logging, java.xml; its jdk.jfr
# listener is optional and left out), and
# jdk.management for the launcher's and our thread information.
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,java.xml,java.management,jdk.management,jdk.incubator.vector,jdk.unsupported \
  --strip-java-debug-attributes --strip-native-debug-symbols=exclude-debuginfo-files --no-man-pages --no-header-files \
  --compress=zip-9 --output "$out/jdk"
# Temurin's libjvm.so keeps its symbol table (~9 MiB); nothing here needs it.
if command -v strip >/dev/null; then
  find "$out/jdk/lib" -name '*.so' -exec strip --strip-unneeded {} +
fi

size=$(du -sm "$out" | cut -f1)
echo "make-bundle: $out is $size MiB (limit $limit_mib)"
if [ "$size" -gt "$limit_mib" ]; then
  echo "make-bundle: over the limit" >&2
  exit 1
fi
