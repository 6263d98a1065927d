package io.nereid.engine.model;

import io.nereid.engine.cpu.tensor.Quantizer;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufMetadata;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.gguf.GgufWriter;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * {@code bin/nereid quantize}: rewrites a GGUF model as a {@link LlamaFileType} the way llama.cpp
 * b4748's {@code llama-quantize} does without an importance matrix, so that from the same input
 * both write the same tensors, byte for byte:
 *
 * <ul>
 *   <li>tensors in llama-quantize's order ({@link QuantizationMix#FILE_ORDER}); each 2-D (or 3-D)
 *       weight that is not a norm in the type {@link QuantizationMix} chooses (with
 *       {@code pure}: the base type), everything else copied;
 *   <li>the quantizers of {@link Quantizer}, which are llama.cpp's reference ({@code _ref}) ones;
 *   <li>metadata copied, then {@code general.quantization_version = 2} and
 *       {@code general.file_type} set, in that order at the end (as {@code gguf_set_val_u32}
 *       moves a key it replaces), {@code split.*} keys dropped.
 * </ul>
 *
 * Unlike llama-quantize, an input that is already quantized is converted too (through F32)
 * rather than refused without {@code --allow-requantize}. Rows of a tensor are quantized in
 * parallel on the common fork-join pool (rows are independent, so the bytes do not depend on the
 * split); the converted tensors are held off-heap until the file is written. Stateless.
 */
public final class ModelQuantizer {

    /** {@code GGML_QNT_VERSION}: the layout version of ggml's quantized blocks. */
    static final int QUANTIZATION_VERSION = 2;

    /** Keys llama-quantize rewrites or drops; the others are copied in their order. */
    private static final Set<String> REWRITTEN_KEYS = Set.of("general.quantization_version", "general.file_type",
            "split.no", "split.count", "split.tensors.count");

    /** Values per parallel task: llama-quantize's {@code min_chunk_size}. */
    private static final int CHUNK_VALUES = 32 * 512;

    /**
     * What was written.
     *
     * @param converted tensors written in another type than they had
     * @param copied    tensors copied unchanged
     * @param types     how many tensors of the output have each type
     */
    public record Result(int converted, int copied, long bytesIn, long bytesOut, Map<GgmlType, Integer> types) {

        public Result {
            types = Collections.unmodifiableMap(new EnumMap<>(types));
        }
    }

    private ModelQuantizer() {
    }

    /**
     * Writes {@code in} as {@code type} to {@code out}.
     *
     * @param pure every quantized tensor in the base type, no mix (llama-quantize's {@code --pure})
     * @throws IllegalArgumentException naming the tensor, if one cannot be written as llama.cpp
     *     would (rows that are not whole blocks with no fallback, or a fallback not offered here)
     * @throws ModelLoadException if {@code in} is not a readable GGUF file or has a tensor of a type
     *     that cannot be decoded
     */
    public static Result quantize(Path in, Path out, LlamaFileType type, boolean pure) throws IOException {
        Objects.requireNonNull(type, "type");
        try (GgufFile f = GgufFile.open(in)) {
            List<GgufTensorInfo> tensors = f.tensors().stream()
                    .sorted((a, b) -> QuantizationMix.FILE_ORDER.compare(a.name(), b.name())).toList();
            QuantizationMix mix;
            try {
                mix = new QuantizationMix(type, pure, f.metadata(), tensors.stream().map(GgufTensorInfo::name).toList());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(in + ": " + e.getMessage(), e);
            }
            GgufWriter w = metadata(f.metadata(), type);
            int converted = 0;
            int copied = 0;
            long bytesOut = 0;
            Map<GgmlType, Integer> types = new EnumMap<>(GgmlType.class);
            for (GgufTensorInfo t : tensors) {
                GgmlType target;
                try {
                    target = mix.typeOf(t.name(), t.dims(), t.type());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(in + ": " + e.getMessage(), e);
                }
                MemorySegment data = f.tensorData(t);
                if (target != t.type()) {
                    data = convert(in, t, data, target);
                    converted++;
                } else {
                    copied++;
                }
                w.addTensor(t.name(), target, t.dims(), data);
                bytesOut += data.byteSize();
                types.merge(target, 1, Integer::sum);
            }
            w.write(out);
            return new Result(converted, copied, f.fileSize(), bytesOut, types);
        } catch (GgufException e) {
            throw new ModelLoadException(e.getMessage(), e);
        }
    }

    private static GgufWriter metadata(GgufMetadata source, LlamaFileType type) {
        GgufWriter w = new GgufWriter();
        for (String key : source.keys()) {
            if (!REWRITTEN_KEYS.contains(key)) {
                w.put(key, source.type(key), source.raw(key));
            }
        }
        return w.putUInt32("general.quantization_version", QUANTIZATION_VERSION)
                .putUInt32("general.file_type", type.id());
    }

    /** {@code t}'s values in {@code target}, a row at a time: decoded to F32, then quantized. */
    private static MemorySegment convert(Path in, GgufTensorInfo t, MemorySegment src, GgmlType target) {
        int rowLength = Math.toIntExact(t.dims()[0]);
        long rows = rowLength == 0 ? 0 : t.elementCount() / rowLength;
        long srcRowBytes = t.type().byteSize(new long[] {rowLength});
        long dstRowBytes = target.byteSize(new long[] {rowLength});
        MemorySegment dst = Arena.ofAuto().allocate(Math.multiplyExact(rows, dstRowBytes));
        long rowsPerChunk = Math.max(1, CHUNK_VALUES / Math.max(1, rowLength));
        int chunks = Math.toIntExact((rows + rowsPerChunk - 1) / rowsPerChunk);
        try {
            IntStream.range(0, chunks).parallel().forEach(c -> {
                for (long r = c * rowsPerChunk; r < Math.min(rows, (c + 1) * rowsPerChunk); r++) {
                    float[] row = Quantizer.dequantize(t.type(), src, r * srcRowBytes, rowLength);
                    Quantizer.quantize(target, row, 0, rowLength, dst, r * dstRowBytes);
                }
            });
        } catch (IllegalArgumentException e) { // UnsupportedWeightTypeException: a source type without a decoder
            throw new ModelLoadException(in + ": tensor " + t.name() + ": " + e.getMessage(), e);
        }
        return dst;
    }
}
