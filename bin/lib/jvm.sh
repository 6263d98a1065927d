# shellcheck shell=bash
# The JVM flags of every process that runs the CPU kernels: bin/nereid (and the JMH forks it starts,
# which inherit them) and bench/lib/run-engine-main.sh. Sourced; defines nereid_jvm_args.
#
# dontinline: keeps C2 from inlining one weight format's kernel into matmul's shared loop, which
#   slows the other formats ~3x once a model mixes types (see engine/.../tensor/VectorRowKernels).
# inline: the interleaved kernels' small helpers, which return a vector. C2 refuses to inline a callee "already
#   compiled into a big method" (its standalone code over InlineSmallCode), and a vector returned
#   from a call that is not inlined is boxed on the heap: which helpers were compiled first
#   depended on the workload, and a prompt processed before decoding (every request) left 110M
#   Q4_0 decoding at 74-79 tok/s instead of 200-209 (Interleaved::nibbleSums not inlined); with
#   these, 180-197 after a prompt. (Forcing every vector-returning helper of the row kernels as well
#   measured no better.) PanelDot::pair, the paired panel kernel's broadcast, likewise, and HalfColumns'
#   load / low / high (a pass whose widenings are not inlined ran 5-50x slower: its vectors on the heap).
nereid_jvm_args=(--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED
  -XX:CompileCommand=quiet)
for m in dot dot4 dot4Tokens dot4Tokens2Rows dequantize; do
  nereid_jvm_args+=("-XX:CompileCommand=dontinline,io.nereid.engine.cpu.tensor.*::$m")
done
for m in broadcast bytes column floats nibbleSums toFloat widen; do
  nereid_jvm_args+=("-XX:CompileCommand=inline,io.nereid.engine.cpu.tensor.Interleaved::$m")
done
nereid_jvm_args+=("-XX:CompileCommand=inline,io.nereid.engine.cpu.kernel.PanelDot::pair")
for m in load low high; do
  nereid_jvm_args+=("-XX:CompileCommand=inline,io.nereid.engine.cpu.tensor.HalfColumns::$m")
done
unset m
